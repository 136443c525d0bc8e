package io.leasekeeper.support;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import javax.sql.DataSource;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.jdbc.datasource.DelegatingDataSource;

/**
 * Every prepared statement the service executes, with the values bound to it, while recording is on: a test reads
 * what the service really sent (no list of statements kept by hand, no reflection on its constants). Register
 * {@link #wrapping} as a bean (a static {@code @Bean} method) to wrap the context's DataSource.
 */
public final class RecordedStatements {

    /**
     * A statement as executed: its SQL, with {@code ?} placeholders, the values bound to them in order, and the
     * messages the database sent with its answer (such as auto_explain's plans, when a test asks for them).
     */
    public record Executed(String sql, List<Object> values, List<String> messages) {
    }

    private final ConcurrentLinkedQueue<Executed> executed = new ConcurrentLinkedQueue<>();
    private volatile boolean recording;

    public void start() {
        executed.clear();
        recording = true;
    }

    /** Stops recording and returns what was executed meanwhile, in order. */
    public List<Executed> stop() {
        recording = false;
        return List.copyOf(executed);
    }

    /** Wraps the bean named {@code dataSource} so that this records what runs through it. */
    public BeanPostProcessor wrapping() {
        return new BeanPostProcessor() {
            @Override
            public Object postProcessAfterInitialization(Object bean, String name) {
                return bean instanceof DataSource dataSource && name.equals("dataSource") ? recorded(dataSource) : bean;
            }
        };
    }

    private DataSource recorded(DataSource target) {
        return new DelegatingDataSource(target) {
            @Override
            public Connection getConnection() throws SQLException {
                return proxy(Connection.class, super.getConnection(), (connection, method, args) -> {
                    Object result = invoke(connection, method, args);
                    return result instanceof PreparedStatement statement && method.getName().equals("prepareStatement")
                            ? recording(statement, (String) args[0]) : result;
                });
            }
        };
    }

    private PreparedStatement recording(PreparedStatement target, String sql) {
        Map<Integer, Object> bound = new TreeMap<>();
        return proxy(PreparedStatement.class, target, (statement, method, args) -> {
            String name = method.getName();
            if (name.startsWith("set") && args != null && args.length >= 2 && args[0] instanceof Integer index) {
                bound.put(index, name.equals("setNull") ? null : args[1]);
            } else if (name.startsWith("execute") && (args == null || args.length == 0) && recording) {
                List<Object> values = new ArrayList<>(bound.values());
                Object result = invoke(statement, method, args);
                List<String> messages = new ArrayList<>();
                for (SQLWarning w = statement.getWarnings(); w != null; w = w.getNextWarning()) {
                    messages.add(w.getMessage());
                }
                executed.add(new Executed(sql, values, messages));
                return result;
            } else if (name.equals("clearParameters")) {
                bound.clear();
            }
            return invoke(statement, method, args);
        });
    }

    private interface Handler<T> {
        Object handle(T target, Method method, Object[] args) throws Throwable;
    }

    @SuppressWarnings("unchecked")
    private static <T> T proxy(Class<T> type, T target, Handler<T> handler) {
        return (T) Proxy.newProxyInstance(RecordedStatements.class.getClassLoader(), new Class<?>[] {type},
                (proxy, method, args) -> handler.handle(target, method, args));
    }

    private static Object invoke(Object target, Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}

package io.leasekeeper.limits;

import com.zaxxer.hikari.HikariDataSource;
import io.leasekeeper.config.LeasekeeperProperties;
import io.leasekeeper.security.TenantAttribute;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;

/**
 * One tenant uses at most {@code leasekeeper.limits.pool-share-per-tenant} of the connection pool, so that a
 * flood from one tenant leaves connections for the others. The pool's DataSource is wrapped: a connection taken
 * on a request's thread takes one of its tenant's permits first (waiting at most the pool's connection timeout,
 * as for the pool itself; then the request answers 503 DATABASE_UNAVAILABLE like a pool that is exhausted), and
 * gives it back when the connection is closed (returned to the pool). Connections taken outside a request (the
 * sweeper, retention, migrations) are not counted.
 */
final class TenantPoolShare extends DelegatingDataSource {

    private final TenantPermits shares;
    private final long timeoutNanos;

    private TenantPoolShare(HikariDataSource pool, double share) {
        super(pool);
        this.shares = new TenantPermits(Math.max(1, (int) Math.floor(pool.getMaximumPoolSize() * share)));
        this.timeoutNanos = TimeUnit.MILLISECONDS.toNanos(pool.getConnectionTimeout());
    }

    /** Wraps the pool's DataSource when the share is below the whole pool. */
    static BeanPostProcessor wrapping(LeasekeeperProperties properties) {
        double share = properties.limits().poolSharePerTenant();
        return new BeanPostProcessor() {
            @Override
            public Object postProcessAfterInitialization(Object bean, String name) {
                return bean instanceof HikariDataSource pool && share < 1 ? new TenantPoolShare(pool, share) : bean;
            }
        };
    }

    /** Connections a tenant may hold at once. */
    int permits() {
        return shares.permits();
    }

    /** Requests of the tenant waiting for one of its permits now (for tests and diagnosis). */
    int waiting(String tenant) {
        return shares.waiting(tenant);
    }

    @Override
    public Connection getConnection() throws SQLException {
        String tenant = requestTenant();
        if (tenant == null) {
            return super.getConnection();
        }
        Semaphore share = shares.of(tenant);
        try {
            if (!share.tryAcquire(timeoutNanos, TimeUnit.NANOSECONDS)) {
                throw new SQLTransientConnectionException("tenant " + tenant + " holds its share of the pool ("
                        + shares.permits() + " connections) and none came free in time");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SQLTransientConnectionException("interrupted while waiting for the tenant's share", e);
        }
        try {
            return returning(super.getConnection(), share);
        } catch (SQLException | RuntimeException e) {
            share.release();
            throw e;
        }
    }

    private static String requestTenant() {
        RequestAttributes request = RequestContextHolder.getRequestAttributes();
        return request == null ? null
                : request.getAttribute(TenantAttribute.NAME, RequestAttributes.SCOPE_REQUEST) instanceof String t ? t : null;
    }

    /** The connection, giving its permit back on its first close. */
    private static Connection returning(Connection connection, Semaphore share) {
        AtomicBoolean open = new AtomicBoolean(true);
        InvocationHandler handler = (proxy, method, args) -> {
            if (method.getName().equals("close") && method.getParameterCount() == 0 && open.compareAndSet(true, false)) {
                try {
                    return invoke(connection, method, args);
                } finally {
                    share.release();
                }
            }
            return invoke(connection, method, args);
        };
        return (Connection) Proxy.newProxyInstance(TenantPoolShare.class.getClassLoader(),
                new Class<?>[] {Connection.class}, handler);
    }

    private static Object invoke(Connection connection, Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(connection, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}

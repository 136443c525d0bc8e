package io.leasekeeper.security;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;

/**
 * The {@code local} profile's guard (contract 1.1, "Tokens"): development tokens are minted by anyone who
 * can reach {@code /local/token}, so that profile runs only against a database on this machine, where no
 * real tenant's leases can live. It judges the settings here, before any bean is made:
 * <ul>
 * <li>every host of each JDBC URL the service connects with ({@code spring.datasource.url}, and when set
 * {@code spring.flyway.url} and {@code leasekeeper.wait.listen-url}) resolves to loopback addresses only;</li>
 * <li>no such URL, nor the pool's driver properties, names a parameter with which pgjdbc takes the server from
 * elsewhere ({@link #CHOOSES_THE_SERVER}: a host that overrides the URL's, a {@code pg_service.conf} entry);</li>
 * <li>the pool has no URL of its own ({@code spring.datasource.hikari.jdbc-url}) other than
 * {@code spring.datasource.url}.</li>
 * </ul>
 * The settings cannot show everything (a driver default on the class path, a DataSource class, a socket factory),
 * so {@link LoopbackPool} then checks the address the pool's first connection actually reached, with
 * {@link #serverRefusal}.
 */
final class LoopbackDatabase {

    private static final String PREFIX = "jdbc:postgresql:";
    private static final String POOL_URL = "spring.datasource.hikari.jdbc-url";
    private static final String DRIVER_PROPERTIES = "spring.datasource.hikari.data-source-properties";

    /**
     * Parameters (URL or driver property, any case) with which the server is not the URL's host: pgjdbc reads
     * {@code PGHOST} and {@code host} as the host, and {@code service} as a {@code pg_service.conf} entry naming one;
     * {@code PGHOSTADDR} and {@code hostaddr} are libpq's, refused so that no reader takes them for harmless.
     */
    static final Set<String> CHOOSES_THE_SERVER = Set.of("pghost", "host", "pghostaddr", "hostaddr", "service");

    private LoopbackDatabase() {
    }

    /** Throws, saying why, unless the settings keep every connection on this machine. */
    static void require(Environment environment) {
        String refusal = refusal(environment);
        if (refusal != null) {
            throw refused(refusal);
        }
    }

    /** The start-up failure: what the profile is for, why this database is refused, and what to do. */
    static IllegalStateException refused(String why) {
        return new IllegalStateException("The 'local' profile serves development tokens and runs only against"
                + " a database on this machine: " + why + ". Point spring.datasource.url at localhost"
                + " (bash src/local/run makes such a database), or run without the 'local' profile.");
    }

    /** Why the settings may reach a database beyond this machine, or null when they cannot. */
    static String refusal(Environment environment) {
        Binder settings = Binder.get(environment);
        String url = settings.bind("spring.datasource.url", String.class).orElse(null);
        String refusal = refusal("spring.datasource.url", url);
        if (refusal != null) {
            return refusal;
        }
        String poolUrl = settings.bind(POOL_URL, String.class).orElse(null);
        if (poolUrl != null && !poolUrl.equals(url)) {
            return POOL_URL + " (" + poolUrl + ") differs from spring.datasource.url";
        }
        for (String property : List.of("spring.flyway.url", "leasekeeper.wait.listen-url")) {
            String other = settings.bind(property, String.class).orElse("");
            refusal = other.isBlank() ? null : refusal(property, other);
            if (refusal != null) {
                return refusal;
            }
        }
        Map<String, String> driver = settings.bind(DRIVER_PROPERTIES, Bindable.mapOf(String.class, String.class))
                .orElse(Map.of());
        return driver.keySet().stream().filter(LoopbackDatabase::choosesTheServer).findFirst()
                .map(name -> DRIVER_PROPERTIES + " sets " + name + ", which chooses the server instead of"
                        + " spring.datasource.url")
                .orElse(null);
    }

    /** Why {@code jdbcUrl}, the value of {@code property}, may reach beyond loopback, or null when it cannot. */
    static String refusal(String property, String jdbcUrl) {
        if (jdbcUrl == null || !jdbcUrl.startsWith(PREFIX)) {
            return property + " (" + jdbcUrl + ") is not a jdbc:postgresql: URL";
        }
        for (String parameter : parameters(jdbcUrl)) {
            if (choosesTheServer(parameter)) {
                return property + " sets " + parameter + ", which chooses the server instead of the URL's host";
            }
        }
        for (String host : hosts(jdbcUrl)) {
            InetAddress[] addresses;
            try {
                addresses = InetAddress.getAllByName(host);
            } catch (UnknownHostException e) {
                return property + " names host '" + host + "', which does not resolve";
            }
            for (InetAddress address : addresses) {
                if (!address.isLoopbackAddress()) {
                    return property + " names host '" + host + "' (" + address.getHostAddress()
                            + "), which is not a loopback address";
                }
            }
        }
        return null;
    }

    /**
     * Why a connection whose server address is {@code serverAddress} (PostgreSQL's {@code inet_server_addr()} as
     * text) is not on this machine, or null when it is: a loopback address, or none (a Unix socket).
     */
    static String serverRefusal(String serverAddress) {
        if (serverAddress == null) {
            return null;
        }
        InetAddress address;
        try {
            address = InetAddress.getByName(serverAddress.split("/", 2)[0]);
        } catch (UnknownHostException e) {
            return "the database's server address '" + serverAddress + "' is not an address";
        }
        return address.isLoopbackAddress() ? null : "the pool's first connection reached the database at "
                + address.getHostAddress() + ", which is not a loopback address";
    }

    /**
     * The hosts of a PostgreSQL JDBC URL as pgjdbc reads them: {@code jdbc:postgresql:db} and an empty host
     * mean localhost; {@code //h1:p1,[::1]:p2/db} names several.
     */
    static List<String> hosts(String jdbcUrl) {
        String rest = jdbcUrl.substring(PREFIX.length());
        if (!rest.startsWith("//")) {
            return List.of("localhost");
        }
        String authority = rest.substring(2).split("[/?]", 2)[0];
        List<String> hosts = new ArrayList<>();
        for (String hostAndPort : Arrays.asList(authority.split(",", -1))) {
            int bracket = hostAndPort.indexOf(']');
            String host = hostAndPort.startsWith("[") && bracket > 0
                    ? hostAndPort.substring(1, bracket)
                    : hostAndPort.split(":", 2)[0];
            hosts.add(host.isEmpty() ? "localhost" : host);
        }
        return hosts;
    }

    /** The names of a JDBC URL's parameters, as pgjdbc splits them (names are not decoded). */
    private static List<String> parameters(String jdbcUrl) {
        int query = jdbcUrl.indexOf('?');
        if (query < 0) {
            return List.of();
        }
        return Arrays.stream(jdbcUrl.substring(query + 1).split("&"))
                .filter(parameter -> !parameter.isEmpty())
                .map(parameter -> parameter.split("=", 2)[0])
                .toList();
    }

    private static boolean choosesTheServer(String name) {
        return CHOOSES_THE_SERVER.contains(name.toLowerCase(Locale.ROOT));
    }
}

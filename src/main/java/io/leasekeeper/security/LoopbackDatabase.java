package io.leasekeeper.security;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The {@code local} profile's guard (contract 1.1, "Tokens"): development tokens are minted by anyone who
 * can reach {@code /local/token}, so that profile runs only against a database on this machine, where no
 * real tenant's leases can live. Every host of the PostgreSQL JDBC URL must resolve to loopback addresses
 * only.
 */
final class LoopbackDatabase {

    private static final String PREFIX = "jdbc:postgresql:";

    private LoopbackDatabase() {
    }

    /** Throws, saying why, unless every host of {@code jdbcUrl} is a loopback address. */
    static void require(String jdbcUrl) {
        String refusal = refusal(jdbcUrl);
        if (refusal != null) {
            throw new IllegalStateException("The 'local' profile serves development tokens and runs only against"
                    + " a database on this machine: " + refusal + ". Point spring.datasource.url at localhost"
                    + " (bash src/local/run makes such a database), or run without the 'local' profile.");
        }
    }

    /** Why {@code jdbcUrl} is not on loopback, or null when it is. */
    static String refusal(String jdbcUrl) {
        if (jdbcUrl == null || !jdbcUrl.startsWith(PREFIX)) {
            return "spring.datasource.url (" + jdbcUrl + ") is not a jdbc:postgresql: URL";
        }
        for (String host : hosts(jdbcUrl)) {
            InetAddress[] addresses;
            try {
                addresses = InetAddress.getAllByName(host);
            } catch (UnknownHostException e) {
                return "spring.datasource.url names host '" + host + "', which does not resolve";
            }
            for (InetAddress address : addresses) {
                if (!address.isLoopbackAddress()) {
                    return "spring.datasource.url names host '" + host + "' (" + address.getHostAddress()
                            + "), which is not a loopback address";
                }
            }
        }
        return null;
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
}

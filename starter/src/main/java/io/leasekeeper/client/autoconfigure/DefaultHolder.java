package io.leasekeeper.client.autoconfigure;

import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.function.Supplier;

/**
 * The holder an instance names itself when {@code leasekeeper.client.holder} is not set: its host name, so that
 * "who holds it" in the service answers a machine or a pod an operator can find. The JDK's name first; the
 * {@code HOSTNAME} variable (a container's, a pod's name) when the JDK cannot resolve this host.
 */
final class DefaultHolder {

    private DefaultHolder() {
    }

    static String resolve() {
        return resolve(DefaultHolder::localHostName, System.getenv("HOSTNAME"));
    }

    static String resolve(Supplier<String> localHostName, String hostnameVariable) {
        try {
            String name = localHostName.get();
            if (name != null && !name.isBlank()) {
                return name;
            }
        } catch (UncheckedIOException unresolved) {
            // an unresolvable host: the variable may still say
        }
        if (hostnameVariable != null && !hostnameVariable.isBlank()) {
            return hostnameVariable.strip();
        }
        throw new IllegalArgumentException("leasekeeper.client.holder is not set and this host's name is unknown"
                + " (InetAddress.getLocalHost() failed and HOSTNAME is empty): set leasekeeper.client.holder");
    }

    private static String localHostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            throw new UncheckedIOException(e);
        }
    }
}

package io.leasekeeper.client;

import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The rules of the URL a client sends its bearer token to, shared by the library, the starter and the command
 * line so that each refuses the same URLs, in its own words.
 *
 * <p>A checked base URL is absolute {@code http} or {@code https}, names its host, carries no user info, query
 * or fragment, and its path ends with {@code /}: the API's paths are resolved under it, so that
 * {@code https://host/leasekeeper} and {@code https://host/leasekeeper/} both send {@code /leasekeeper/v1/…} (a
 * gateway that routes by path sends them to Leasekeeper, not to another backend). It is {@code https} unless
 * its host is loopback ({@link #isLoopback}) or plain http was allowed explicitly: over http the token crosses
 * the network in clear.
 */
public final class BaseUrl {

    private static final Pattern IPV4 = Pattern.compile("(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})");

    private BaseUrl() {
    }

    /**
     * {@code url} with its path ending in {@code /}, or the rule it breaks.
     *
     * @param plainHttpAllowed http to a host that is not loopback is allowed (a network the caller trusts)
     * @param howToAllow       the setting that allows it, as its user writes it, named in the refusal
     * @throws IllegalArgumentException whose message is the rule broken, worded to follow the URL or the
     *                                  setting's name ("must be https unless …")
     */
    public static URI checked(URI url, boolean plainHttpAllowed, String howToAllow) {
        Objects.requireNonNull(url, "url");
        String scheme = url.getScheme();
        boolean https = "https".equalsIgnoreCase(scheme);
        if (!https && !"http".equalsIgnoreCase(scheme) || url.isOpaque()) {
            throw new IllegalArgumentException("must be an absolute http or https URL");
        }
        if (url.getHost() == null) {
            throw new IllegalArgumentException("must name a host");
        }
        if (url.getRawUserInfo() != null || url.getRawQuery() != null || url.getRawFragment() != null) {
            throw new IllegalArgumentException("must not carry user info, a query or a fragment (the token goes in"
                    + " the Authorization header, the API's paths and queries are the client's)");
        }
        if (!https && !plainHttpAllowed && !isLoopback(url.getHost())) {
            throw new IllegalArgumentException("must be https unless its host is loopback (localhost, 127.0.0.0/8,"
                    + " ::1): over http the bearer token crosses the network in clear; on a network you trust, allow"
                    + " it with " + howToAllow);
        }
        return url.getRawPath().endsWith("/") ? url : URI.create(url + "/");
    }

    /**
     * Whether {@code host} (as {@link URI#getHost()} gives it) is {@code localhost}, an IPv4 address in
     * 127.0.0.0/8 or the IPv6 address ::1, written as such. A name is never resolved: what a name resolves to
     * is the resolver's to change, and any other name may be another machine.
     */
    public static boolean isLoopback(String host) {
        if (host.equalsIgnoreCase("localhost")) {
            return true;
        }
        Matcher ipv4 = IPV4.matcher(host);
        if (ipv4.matches()) {
            for (int octet = 1; octet <= 4; octet++) {
                if (Integer.parseInt(ipv4.group(octet)) > 255) {
                    return false;
                }
            }
            return ipv4.group(1).equals("127");
        }
        if (host.startsWith("[") && host.endsWith("]")) {
            try {
                // A bracketed literal is parsed, never looked up: an invalid one is UnknownHostException.
                return InetAddress.getByName(host).isLoopbackAddress();
            } catch (UnknownHostException notAnAddress) {
                return false;
            }
        }
        return false;
    }
}

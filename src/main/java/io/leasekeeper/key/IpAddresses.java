package io.leasekeeper.key;

import com.google.common.net.InetAddresses;
import java.net.InetAddress;
import java.util.regex.Pattern;

/**
 * IP addresses in one spelling each: IPv4 as four plain decimal octets, IPv6 in RFC 5952 form, an
 * IPv4-mapped IPv6 address as the IPv4 address it maps. Parsing and formatting are Guava's.
 */
final class IpAddresses {

    private static final String OCTET = "(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])";
    /** Only the dotted-quad form: no leading zeros (octal to some parsers), no hex, no short forms. */
    private static final Pattern IPV4 = Pattern.compile(OCTET + "(\\." + OCTET + "){3}");

    private IpAddresses() {
    }

    /** The normalized address, or IllegalArgumentException saying why it is not one. */
    static String normalize(String raw) {
        String value = raw.strip();
        if (value.startsWith("[") && value.endsWith("]")) {
            value = value.substring(1, value.length() - 1);
        }
        if (value.contains("%")) {
            throw new IllegalArgumentException("must not carry a zone id");
        }
        if (!value.contains(":")) {
            if (!IPV4.matcher(value).matches()) {
                throw new IllegalArgumentException("must be an IPv4 address of four decimal octets or an IPv6 address");
            }
            return value;
        }
        InetAddress address;
        try {
            address = InetAddresses.forString(value);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("must be an IPv4 address of four decimal octets or an IPv6 address");
        }
        // Java already turns an IPv4-mapped address (::ffff:a.b.c.d) into the Inet4Address it maps.
        return InetAddresses.toAddrString(address);
    }

    /** True when the text is an IP literal in some spelling, bracketed or not: it then belongs to type ip. */
    static boolean looksLikeIp(String value) {
        String v = value.startsWith("[") && value.endsWith("]") ? value.substring(1, value.length() - 1) : value;
        return v.contains(":") || IPV4.matcher(v).matches();
    }
}

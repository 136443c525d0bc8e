package io.leasekeeper.key;

import java.text.Normalizer;
import java.util.Arrays;
import java.util.Optional;

/**
 * The kinds of target a lease can be taken on. Each normalizes its values its own way, so that two
 * spellings of one target are one key; the rules and examples are in docs/reference/targets.md.
 */
public enum TargetType {

    /**
     * Any string: Unicode NFC, surrounding whitespace trimmed, 1..512 characters, no control characters and no
     * bidirectional formatting characters ({@link Text#hasBidiControl}).
     */
    OPAQUE("opaque") {
        @Override
        Target normalizeValue(String raw) {
            String value = Normalizer.normalize(raw, Normalizer.Form.NFC).strip();
            int length = value.codePointCount(0, value.length());
            if (length < 1 || length > 512) {
                throw new IllegalArgumentException("must be 1..512 characters after trimming");
            }
            if (Text.hasControlOrUnpaired(value)) {
                throw new IllegalArgumentException("must not contain control characters or unpaired surrogates");
            }
            if (Text.hasBidiControl(value)) {
                throw new IllegalArgumentException(Text.NO_BIDI_CONTROLS);
            }
            return new Target(this, value);
        }
    },

    /** A DNS name (UTS #46 IDNA to ASCII, lowercased); an IP literal given as a host is an {@link #IP}. */
    HOST("host") {
        @Override
        Target normalizeValue(String raw) {
            String value = raw.strip();
            if (IpAddresses.looksLikeIp(value)) {
                return IP.normalizeValue(value);
            }
            return new Target(this, HostNames.normalize(value));
        }
    },

    /** An IPv4 (dotted quad) or IPv6 (RFC 5952) address; IPv4-mapped IPv6 is the IPv4 address. */
    IP("ip") {
        @Override
        Target normalizeValue(String raw) {
            return new Target(this, IpAddresses.normalize(raw));
        }
    },

    /** An absolute URL normalized per RFC 3986 section 6, without user info or fragment. */
    URL("url") {
        @Override
        Target normalizeValue(String raw) {
            String value = Urls.normalize(raw);
            if (value.length() > 2048) {
                throw new IllegalArgumentException("must be at most 2048 characters normalized");
            }
            return new Target(this, value);
        }
    };

    private final String wireName;

    TargetType(String wireName) {
        this.wireName = wireName;
    }

    public String wireName() {
        return wireName;
    }

    /**
     * The normalized target of a raw value of this type; its type may differ (a host that is an IP
     * literal is an ip target). Throws IllegalArgumentException saying why the value is not valid.
     */
    abstract Target normalizeValue(String raw);

    public static Optional<TargetType> fromWireName(String name) {
        return Arrays.stream(values()).filter(t -> t.wireName.equals(name)).findFirst();
    }

    /** Parses a wire name, throwing IllegalArgumentException that lists the known types. */
    public static TargetType parse(String name) {
        return fromWireName(name).orElseThrow(() -> new IllegalArgumentException(
                "unknown target type; known types: " + Arrays.stream(values()).map(TargetType::wireName).toList()));
    }
}

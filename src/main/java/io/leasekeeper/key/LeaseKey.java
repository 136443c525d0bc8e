package io.leasekeeper.key;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * The key a lease is held on. Every part is already normalized; {@code operation} is null when the
 * key has no operation class (a different key from any key with one).
 */
public record LeaseKey(String tenant, String program, Target target, String actor, String operation) {

    public static final String DEFAULT_PROGRAM = "default";

    public LeaseKey {
        Objects.requireNonNull(tenant);
        Objects.requireNonNull(program);
        Objects.requireNonNull(target);
        Objects.requireNonNull(actor);
    }

    /** {tenant}/{program}/{type}:{percent-encoded value}/{actor}[/{operation}] */
    public String canonical() {
        String key = tenant + "/" + program + "/" + target.type().wireName() + ":" + percentEncode(target.value())
                + "/" + actor;
        return operation == null ? key : key + "/" + operation;
    }

    /** RFC 3986: every byte of the UTF-8 form outside A-Z a-z 0-9 - . _ ~ is encoded as %XX. */
    static String percentEncode(String value) {
        StringBuilder out = new StringBuilder(value.length() + 16);
        for (byte b : value.getBytes(StandardCharsets.UTF_8)) {
            int c = b & 0xFF;
            if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
                    || c == '-' || c == '.' || c == '_' || c == '~') {
                out.append((char) c);
            } else {
                out.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(c & 0xF, 16)));
            }
        }
        return out.toString();
    }
}

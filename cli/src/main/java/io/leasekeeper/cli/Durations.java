package io.leasekeeper.cli;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;

/** Durations as the contract writes them: a whole number and a unit, {@code 500ms}, {@code 30s}, {@code 5m}, {@code 1h}; {@code 0} alone too. */
final class Durations implements CommandLine.ITypeConverter<Duration> {

    private static final Pattern DURATION = Pattern.compile("(\\d{1,9})(ms|s|m|h)");

    @Override
    public Duration convert(String text) {
        if (text.equals("0")) {
            return Duration.ZERO;
        }
        Matcher m = DURATION.matcher(text);
        if (!m.matches()) {
            throw new CommandLine.TypeConversionException(
                    "'" + text + "' is not a duration: write a whole number and ms, s, m or h (500ms, 30s, 5m, 1h)");
        }
        long n = Long.parseLong(m.group(1));
        switch (m.group(2)) {
            case "ms":
                return Duration.ofMillis(n);
            case "s":
                return Duration.ofSeconds(n);
            case "m":
                return Duration.ofMinutes(n);
            default:
                return Duration.ofHours(n);
        }
    }

    /** Whole seconds for the API's {@code ttlSeconds} and {@code lockDelaySeconds}, rounded up ({@code 1500ms} is 2). */
    static int seconds(Duration d) {
        long s = d.getSeconds() + (d.getNano() > 0 ? 1 : 0);
        return (int) Math.min(s, Integer.MAX_VALUE);
    }
}

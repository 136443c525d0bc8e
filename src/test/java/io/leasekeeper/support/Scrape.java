package io.leasekeeper.support;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** One scrape of {@code /actuator/prometheus}, in the Prometheus text format, read back series by series. */
public final class Scrape {

    public record Series(String name, Map<String, String> labels, double value) {
    }

    private static final Pattern SAMPLE = Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{(.*)})?\\s+(\\S+)(?:\\s+\\d+)?");
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\",?");

    private final List<Series> series;

    private Scrape(List<Series> series) {
        this.series = series;
    }

    public static Scrape of(int managementPort) {
        Api.Response response = new Api(managementPort).get("/actuator/prometheus", null);
        if (response.status() != 200) {
            throw new IllegalStateException("scrape answered " + response.status() + ": " + response.raw());
        }
        return parse(response.raw());
    }

    static Scrape parse(String text) {
        return new Scrape(text.lines().filter(l -> !l.isBlank() && !l.startsWith("#")).map(line -> {
            Matcher m = SAMPLE.matcher(line.trim());
            if (!m.matches()) {
                throw new IllegalStateException("not a sample line: " + line);
            }
            Map<String, String> labels = new HashMap<>();
            if (m.group(2) != null) {
                Matcher l = LABEL.matcher(m.group(2));
                while (l.find()) {
                    labels.put(l.group(1), l.group(2));
                }
            }
            return new Series(m.group(1), labels, Double.parseDouble(m.group(3)));
        }).toList());
    }

    /** The sum over every series of that name carrying at least these labels; 0 when there is none. */
    public double sum(String name, String... labelPairs) {
        return matching(name, labelPairs).stream().mapToDouble(Series::value).sum();
    }

    /** The names of every series, sorted. */
    public java.util.SortedSet<String> names() {
        return new java.util.TreeSet<>(series.stream().map(Series::name).toList());
    }

    public List<Series> matching(String name, String... labelPairs) {
        return series.stream().filter(s -> s.name().equals(name)).filter(s -> {
            for (int i = 0; i < labelPairs.length; i += 2) {
                if (!labelPairs[i + 1].equals(s.labels().get(labelPairs[i]))) {
                    return false;
                }
            }
            return true;
        }).toList();
    }
}

package io.leasekeeper.bench;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The service's own timing of one tenant's requests: the buckets of {@code leasekeeper_operation_seconds} (its
 * {@code tenant} tag on) from the instance's Prometheus scrape, so that a client-side tail can be split into the
 * time inside the service and the time outside it (the network stack, the load generator).
 */
final class ServerTimes {

    private static final HttpClient HTTP = HttpClient.newHttpClient();
    private static final Pattern BUCKET = Pattern.compile(
            "^leasekeeper_operation_seconds_bucket\\{(.*)\\} (\\S+)$", Pattern.MULTILINE);

    /** Upper bound of a bucket, in seconds, to its cumulative count. */
    record Buckets(Map<Double, Double> counts) {

        /** The smallest bucket bound that holds {@code percentile} of the requests counted since {@code before}, in ms. */
        double millis(Buckets before, double percentile) {
            double total = delta(before, Double.POSITIVE_INFINITY);
            for (double bound : counts.keySet()) {
                if (delta(before, bound) >= total * percentile / 100) {
                    return bound * 1000;
                }
            }
            return Double.NaN;
        }

        private double delta(Buckets before, double bound) {
            return counts.getOrDefault(bound, 0.0) - before.counts.getOrDefault(bound, 0.0);
        }
    }

    private ServerTimes() {
    }

    /** The tenant's successful requests of every operation, summed by bucket. */
    static Buckets of(int managementPort, String tenant) throws IOException, InterruptedException {
        String scrape = HTTP.send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + managementPort + "/actuator/prometheus")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        Map<Double, Double> counts = new TreeMap<>();
        Matcher m = BUCKET.matcher(scrape);
        while (m.find()) {
            String labels = m.group(1);
            if (labels.contains("tenant=\"" + tenant + "\"") && labels.contains("outcome=\"OK\"")) {
                String le = labels.replaceFirst(".*le=\"([^\"]+)\".*", "$1");
                double bound = le.equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(le);
                counts.merge(bound, Double.parseDouble(m.group(2)), Double::sum);
            }
        }
        return new Buckets(counts);
    }
}

package io.leasekeeper.harness;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The span of one injected fault, in {@link System#nanoTime()}, from just before it was injected to when
 * it was over (an instance restarted and ready, PostgreSQL restarted, answers delivered again). A
 * database outage is allowed to be answered with 503 until {@link #RECOVERY} after its end: the service
 * must be serving again by then.
 */
record FaultWindow(String name, long start, long end, boolean databaseOutage) {

    static final Duration RECOVERY = Duration.ofSeconds(10);
    static final String OUTSIDE = "outside every fault window";

    boolean covers(long at) {
        return at >= start && at <= end + RECOVERY.toNanos();
    }

    /**
     * Counts moments by the latest window that covers them ({@code databaseOnly}: only database outages
     * count), listed in the windows' order; the rest under {@link #OUTSIDE}, which is always present.
     */
    static Map<String, Long> attribute(List<Long> moments, List<FaultWindow> windows, boolean databaseOnly) {
        Map<String, Long> counts = new LinkedHashMap<>();
        windows.stream().filter(w -> w.databaseOutage() || !databaseOnly).forEach(w -> counts.put(w.name(), 0L));
        counts.put(OUTSIDE, 0L);
        for (long at : moments) {
            String window = windows.reversed().stream().filter(w -> (w.databaseOutage() || !databaseOnly) && w.covers(at))
                    .map(FaultWindow::name).findFirst().orElse(OUTSIDE);
            counts.merge(window, 1L, Long::sum);
        }
        return counts;
    }
}

package io.leasekeeper.client.autoconfigure;

import io.leasekeeper.client.HeldLease;
import io.leasekeeper.client.LeaseKey;
import io.leasekeeper.client.LeaseListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;

/**
 * The client's renewals, losses and waits as Micrometer meters. Every tag has a fixed set of values (never a
 * key, a holder or a lease id), and every series is registered at start-up, so a rate over it exists before
 * its first event.
 *
 * <ul>
 *   <li>{@code leasekeeper.client.renewals}, outcome {@code success} or {@code failure} (a failure is retried
 *       until the local deadline);</li>
 *   <li>{@code leasekeeper.client.losses}, reason one of {@link HeldLease.Loss} in lower case;</li>
 *   <li>{@code leasekeeper.client.waits}, outcome {@code acquired} or {@code busy}: waiting acquires as they
 *       ended, and {@code leasekeeper.client.wait.duration}, the same with how long they waited.</li>
 * </ul>
 */
public final class LeasekeeperClientMetrics implements LeaseListener {

    private final Counter renewed;
    private final Counter renewFailed;
    private final Map<HeldLease.Loss, Counter> losses = new EnumMap<>(HeldLease.Loss.class);
    private final Counter acquired;
    private final Counter busy;
    private final Timer acquiredAfter;
    private final Timer busyAfter;

    public LeasekeeperClientMetrics(MeterRegistry registry) {
        renewed = renewals(registry, "success");
        renewFailed = renewals(registry, "failure");
        for (HeldLease.Loss loss : HeldLease.Loss.values()) {
            losses.put(loss, Counter.builder("leasekeeper.client.losses")
                    .description("Held leases lost, by why")
                    .tag("reason", loss.name().toLowerCase(Locale.ROOT))
                    .register(registry));
        }
        acquired = waits(registry, "acquired");
        busy = waits(registry, "busy");
        acquiredAfter = waitDuration(registry, "acquired");
        busyAfter = waitDuration(registry, "busy");
    }

    @Override
    public void renewed(HeldLease lease) {
        renewed.increment();
    }

    @Override
    public void renewFailed(HeldLease lease, RuntimeException failure) {
        renewFailed.increment();
    }

    @Override
    public void lost(HeldLease lease, HeldLease.Loss loss) {
        losses.get(loss).increment();
    }

    @Override
    public void waited(LeaseKey key, Duration waited, boolean gotIt) {
        (gotIt ? acquired : busy).increment();
        (gotIt ? acquiredAfter : busyAfter).record(waited);
    }

    private static Counter renewals(MeterRegistry registry, String outcome) {
        return Counter.builder("leasekeeper.client.renewals")
                .description("Renewals of held leases, by outcome")
                .tag("outcome", outcome)
                .register(registry);
    }

    private static Counter waits(MeterRegistry registry, String outcome) {
        return Counter.builder("leasekeeper.client.waits")
                .description("Waiting acquires, by whether they got the key")
                .tag("outcome", outcome)
                .register(registry);
    }

    private static Timer waitDuration(MeterRegistry registry, String outcome) {
        return Timer.builder("leasekeeper.client.wait.duration")
                .description("How long waiting acquires waited, by whether they got the key")
                .tag("outcome", outcome)
                .register(registry);
    }
}

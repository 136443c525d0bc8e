package io.leasekeeper.client.autoconfigure;

import io.leasekeeper.client.HeldLease;
import io.leasekeeper.client.LeaseKey;
import io.leasekeeper.client.LeaseListener;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

/**
 * Every {@link LeaseListener} bean as the client's one listener, told in order. One listener's exception does
 * not keep the next from being told (the client only guards the call as a whole).
 */
final class LeaseListeners implements LeaseListener {

    private final List<LeaseListener> listeners;

    private LeaseListeners(List<LeaseListener> listeners) {
        this.listeners = listeners;
    }

    static LeaseListener all(List<LeaseListener> listeners) {
        return switch (listeners.size()) {
            case 0 -> LeaseListener.NONE;
            case 1 -> listeners.get(0);
            default -> new LeaseListeners(List.copyOf(listeners));
        };
    }

    @Override
    public void renewed(HeldLease lease) {
        tellEach(l -> l.renewed(lease));
    }

    @Override
    public void renewFailed(HeldLease lease, RuntimeException failure) {
        tellEach(l -> l.renewFailed(lease, failure));
    }

    @Override
    public void lost(HeldLease lease, HeldLease.Loss loss) {
        tellEach(l -> l.lost(lease, loss));
    }

    @Override
    public void waited(LeaseKey key, Duration waited, boolean acquired) {
        tellEach(l -> l.waited(key, waited, acquired));
    }

    private void tellEach(Consumer<LeaseListener> call) {
        for (LeaseListener listener : listeners) {
            try {
                call.accept(listener);
            } catch (RuntimeException ignored) {
                // a listener's failure is its own
            }
        }
    }
}

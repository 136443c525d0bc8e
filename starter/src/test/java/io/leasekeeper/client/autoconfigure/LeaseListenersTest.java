package io.leasekeeper.client.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.leasekeeper.client.LeaseKey;
import io.leasekeeper.client.LeaseListener;
import io.leasekeeper.client.Target;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class LeaseListenersTest {

    private static final LeaseKey KEY = LeaseKey.of(Target.opaque("nightly"), "report");

    @Test
    void aListenerThatThrowsDoesNotKeepTheNextFromBeingTold() {
        List<String> told = new ArrayList<>();
        LeaseListener throwing = new LeaseListener() {
            @Override
            public void waited(LeaseKey key, Duration waited, boolean acquired) {
                told.add("first");
                throw new IllegalStateException("broken listener");
            }
        };
        LeaseListener counting = new LeaseListener() {
            @Override
            public void waited(LeaseKey key, Duration waited, boolean acquired) {
                told.add("second");
            }
        };

        LeaseListeners.all(List.of(throwing, counting)).waited(KEY, Duration.ofSeconds(1), false);

        assertThat(told).containsExactly("first", "second");
    }

    @Test
    void noListenerIsTheLibrarysNone() {
        assertThat(LeaseListeners.all(List.of())).isSameAs(LeaseListener.NONE);
    }
}

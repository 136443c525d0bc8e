package io.leasekeeper.client.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.UncheckedIOException;
import java.net.UnknownHostException;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

class DefaultHolderTest {

    private static final Supplier<String> UNRESOLVABLE = () -> {
        throw new UncheckedIOException(new UnknownHostException("no such host"));
    };

    @Test
    void theJdksHostNameComesFirst() {
        assertThat(DefaultHolder.resolve(() -> "worker-3", "pod-1")).isEqualTo("worker-3");
    }

    @Test
    void anUnresolvableHostFallsBackToTheHostnameVariable() {
        assertThat(DefaultHolder.resolve(UNRESOLVABLE, "pod-1")).isEqualTo("pod-1");
    }

    @Test
    void neitherStopsStartUpAskingForTheProperty() {
        assertThatThrownBy(() -> DefaultHolder.resolve(UNRESOLVABLE, null))
                .hasMessageContaining("set leasekeeper.client.holder");
    }
}

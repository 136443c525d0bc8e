package io.leasekeeper.client.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.leasekeeper.client.HoldOptions;
import io.leasekeeper.client.LeaseListener;
import io.leasekeeper.client.LeasekeeperClient;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.InetAddress;
import java.net.URI;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** What {@code leasekeeper.client.*} makes, and what an application's own beans replace or join. */
class LeasekeeperClientAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(LeasekeeperClientAutoConfiguration.class));

    @Test
    void everyPropertyBindsUnderLeasekeeperClient() {
        runner.withPropertyValues("leasekeeper.client.base-url=https://leasekeeper.internal:8443",
                "leasekeeper.client.holder=indexer-7f9c", "leasekeeper.client.renew-fraction=0.5",
                "leasekeeper.client.margin=250ms", "leasekeeper.client.watch=false",
                "leasekeeper.client.connect-timeout=2s", "leasekeeper.client.request-timeout=3s",
                "leasekeeper.client.retries.max-attempts=2", "leasekeeper.client.retries.first-backoff=10ms",
                "leasekeeper.client.retries.max-backoff=50ms", "leasekeeper.client.token=static-token")
                .run(context -> {
                    LeasekeeperClientProperties properties = context.getBean(LeasekeeperClientProperties.class);
                    assertThat(properties.baseUrl()).isEqualTo(URI.create("https://leasekeeper.internal:8443"));
                    assertThat(properties.holder()).isEqualTo("indexer-7f9c");
                    assertThat(properties.connectTimeout()).isEqualTo(Duration.ofSeconds(2));
                    assertThat(properties.requestTimeout()).isEqualTo(Duration.ofSeconds(3));
                    assertThat(properties.retries()).isEqualTo(new LeasekeeperClientProperties.Retries(2,
                            Duration.ofMillis(10), Duration.ofMillis(50)));
                    assertThat(context.getBean(HoldOptions.class))
                            .isEqualTo(new HoldOptions(0.5, Duration.ofMillis(250), false));
                    assertThat(context.getBean(LeasekeeperTokenSupplier.class).get()).isEqualTo("static-token");
                    assertThat(context).hasSingleBean(LeasekeeperClient.class);
                });
    }

    @Test
    void withNothingSetTheDefaultsAreTheLibrarysAndTheHolderIsTheHostName() throws Exception {
        String hostName = InetAddress.getLocalHost().getHostName();
        runner.run(context -> {
            LeasekeeperClientProperties properties = context.getBean(LeasekeeperClientProperties.class);
            assertThat(properties.baseUrl()).isEqualTo(URI.create("http://localhost:8080"));
            assertThat(properties.holder()).isEqualTo(hostName);
            assertThat(properties.retries()).isEqualTo(new LeasekeeperClientProperties.Retries(4,
                    Duration.ofMillis(100), Duration.ofSeconds(2)));
            assertThat(context.getBean(HoldOptions.class)).isEqualTo(HoldOptions.defaults());
            assertThat(context.getBean(LeasekeeperTokenSupplier.class).get()).isNull();
        });
    }

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource(delimiter = '|', textBlock = """
            renew-fraction        | 1.5        | leasekeeper.client.renew-fraction must be between 0 and 1
            renew-fraction        | 0          | leasekeeper.client.renew-fraction must be between 0 and 1
            renew-fraction        | 1          | leasekeeper.client.renew-fraction must be between 0 and 1
            margin                | -1s        | leasekeeper.client.margin must not be negative
            base-url              | /relative  | leasekeeper.client.base-url must be an absolute http or https URL
            base-url              | ftp://host | leasekeeper.client.base-url must be an absolute http or https URL
            base-url              | http://leasekeeper.internal | leasekeeper.client.base-url must be https unless its host is loopback
            base-url              | https://leasekeeper.internal/?tenant=a | leasekeeper.client.base-url must not carry user info, a query or a fragment
            request-timeout       | 0s         | leasekeeper.client.request-timeout must be positive
            connect-timeout       | -2s        | leasekeeper.client.connect-timeout must be positive
            retries.max-attempts  | 0          | leasekeeper.client.retries.max-attempts must be at least 1
            retries.max-backoff   | 1ms        | leasekeeper.client.retries.max-backoff must be at least retries.first-backoff
            """)
    void anInvalidSettingStopsStartUpNamingTheProperty(String property, String value, String message) {
        runner.withPropertyValues("leasekeeper.client." + property + "=" + value).run(context -> {
            assertThat(context).hasFailed();
            assertThat(rootCause(context.getStartupFailure())).hasMessageContaining(message);
        });
    }

    @Test
    void plainHttpToAHostThatIsNotLoopbackStartsOnlyWhenAllowedExplicitly() {
        runner.withPropertyValues("leasekeeper.client.base-url=http://leasekeeper.internal:8080/lk")
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(rootCause(context.getStartupFailure())).hasMessageContaining("allow it with"
                            + " leasekeeper.client.allow-plain-http=true, was http://leasekeeper.internal:8080/lk");
                });
        runner.withPropertyValues("leasekeeper.client.base-url=http://leasekeeper.internal:8080/lk",
                        "leasekeeper.client.allow-plain-http=true")
                .run(context -> assertThat(context.getBean(LeasekeeperClient.class).baseUrl())
                        .isEqualTo(URI.create("http://leasekeeper.internal:8080/lk/")));
        runner.withPropertyValues("leasekeeper.client.base-url=http://127.0.0.1:8080")
                .run(context -> assertThat(context).as("loopback needs no allowing").hasNotFailed());
    }

    @Test
    void thePropertiesStringShowsEverySettingButTheToken() {
        runner.withPropertyValues("leasekeeper.client.base-url=https://leasekeeper.internal",
                        "leasekeeper.client.holder=indexer-7f9c", "leasekeeper.client.token=s3cret-static-token")
                .run(context -> assertThat(context.getBean(LeasekeeperClientProperties.class).toString())
                        .contains("baseUrl=https://leasekeeper.internal", "holder=indexer-7f9c", "token=(hidden)")
                        .doesNotContain("s3cret"));
        runner.run(context -> assertThat(context.getBean(LeasekeeperClientProperties.class).toString())
                .contains("token=none"));
    }

    @Test
    void aHolderLongerThanTheContractAllowsStopsStartUp() {
        runner.withPropertyValues("leasekeeper.client.holder=" + "h".repeat(129)).run(context -> {
            assertThat(context).hasFailed();
            assertThat(rootCause(context.getStartupFailure()))
                    .hasMessageContaining("leasekeeper.client.holder must be 1 to 128 characters");
        });
    }

    @Test
    void aStaticTokenAndAnOAuth2RegistrationTogetherStopStartUp() {
        runner.withPropertyValues("leasekeeper.client.token=t", "leasekeeper.client.oauth2.registration-id=idp")
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(rootCause(context.getStartupFailure())).hasMessageContaining("are both set");
                });
    }

    @Test
    void theApplicationsOwnClientWins() {
        LeasekeeperClient own = LeasekeeperClient.builder(URI.create("https://own:8443")).build();
        runner.withBean(LeasekeeperClient.class, () -> own).run(context ->
                assertThat(context.getBean(LeasekeeperClient.class)).isSameAs(own));
    }

    @Test
    void theApplicationsOwnHoldOptionsAndTokenSupplierWin() {
        HoldOptions own = HoldOptions.defaults().withWatch(false);
        runner.withBean(HoldOptions.class, () -> own)
                .withBean(LeasekeeperTokenSupplier.class, () -> () -> "from-the-vault")
                .withPropertyValues("leasekeeper.client.token=ignored")
                .run(context -> {
                    assertThat(context.getBean(HoldOptions.class)).isSameAs(own);
                    assertThat(context.getBean(LeasekeeperTokenSupplier.class).get()).isEqualTo("from-the-vault");
                });
    }

    @Test
    void aMeterRegistryBringsTheCountersAsAListenerBesideTheApplicationsOwn() {
        runner.withBean(SimpleMeterRegistry.class)
                .withBean(LeaseListener.class, () -> new LeaseListener() {
                })
                .run(context -> {
                    assertThat(context).hasSingleBean(LeasekeeperClientMetrics.class);
                    assertThat(context.getBeansOfType(LeaseListener.class)).hasSize(2);
                    MeterRegistry registry = context.getBean(MeterRegistry.class);
                    assertThat(registry.get("leasekeeper.client.renewals").tag("outcome", "success").counter()
                            .count()).isZero();
                    assertThat(registry.get("leasekeeper.client.losses").tag("reason", "local_deadline").counter()
                            .count()).isZero();
                });
    }

    @Test
    void withoutAMeterRegistryThereAreNoCounters() {
        runner.run(context -> assertThat(context).doesNotHaveBean(LeasekeeperClientMetrics.class));
    }

    @Test
    void withoutMicrometerOnTheClasspathTheClientStillStarts() {
        runner.withClassLoader(new FilteredClassLoader(MeterRegistry.class)).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).hasSingleBean(LeasekeeperClient.class);
            assertThat(context).doesNotHaveBean(LeasekeeperClientMetrics.class);
        });
    }

    static Throwable rootCause(Throwable failure) {
        Throwable cause = failure;
        while (cause.getCause() != null) {
            cause = cause.getCause();
        }
        return cause;
    }
}

package io.leasekeeper.support;

import java.util.Map;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.core.env.MapPropertySource;

/**
 * A database of the context's own ({@link TestDatabase#newDatabase}), dropped when the context closes: for a test
 * whose outcome depends on the rows and background jobs of every other test class (what a sweeper run reaches, how
 * far the audit's partitions go). {@code @ContextConfiguration(initializers = OwnDatabase.class)} with
 * {@code @DirtiesContext}. Its property source goes first, ahead of IntegrationTest's dynamic one.
 */
public class OwnDatabase implements ApplicationContextInitializer<ConfigurableApplicationContext> {

    @Override
    public void initialize(ConfigurableApplicationContext context) {
        String url = TestDatabase.newDatabase("own");
        context.getEnvironment().getPropertySources()
                .addFirst(new MapPropertySource("ownDatabase", Map.of("spring.datasource.url", url)));
        context.addApplicationListener(event -> {
            if (event instanceof ContextClosedEvent) {
                TestDatabase.dropDatabase(url);
            }
        });
    }
}

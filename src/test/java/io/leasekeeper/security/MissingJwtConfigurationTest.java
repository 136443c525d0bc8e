package io.leasekeeper.security;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.leasekeeper.LeasekeeperApplication;
import io.leasekeeper.support.TestDatabase;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;

/** Without a way to check tokens the service does not start, and says which property to set. */
class MissingJwtConfigurationTest {

    @Test
    void startUpFailsNamingTheResourceServerProperties() {
        TestDatabase.Connection db = TestDatabase.connection();
        assertThatThrownBy(() -> new SpringApplicationBuilder(LeasekeeperApplication.class)
                .run("--server.port=0", "--leasekeeper.sweeper.enabled=false",
                        "--spring.datasource.url=" + db.url(),
                        "--spring.datasource.username=" + db.username(),
                        "--spring.datasource.password=" + db.password())
                .close())
                .rootCause()
                .hasMessageContaining("spring.security.oauth2.resourceserver.jwt.issuer-uri");
    }
}

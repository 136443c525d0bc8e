package io.leasekeeper.replication;

import java.time.Duration;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.event.EventListener;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;

/**
 * The primary's {@code synchronous_commit} and {@code synchronous_standby_names}, read from the database: logged
 * once the service has started (a warning when a commit does not wait for a standby) and shown in the readiness
 * details as {@code replication} (always UP: it informs, the {@code db} check decides readiness; UNKNOWN when the
 * settings cannot be read). Read at most every 10 s, so that probes add no query of their own.
 */
@Component
public class ReplicationHealthIndicator implements HealthIndicator {

    private static final Logger log = LoggerFactory.getLogger(ReplicationHealthIndicator.class);
    private static final long REREAD_NANOS = Duration.ofSeconds(10).toNanos();

    /** The values of synchronous_commit that make a commit wait for the synchronous standbys, if any are named. */
    private static final Set<String> WAITING_FOR_STANDBYS = Set.of("on", "remote_write", "remote_apply");

    /** The two settings, as the primary has them for the service's sessions. */
    public record Settings(String synchronousCommit, String synchronousStandbyNames) {

        /** Whether a commit returns only once a synchronous standby has it: no failover then loses a grant. */
        public boolean synchronous() {
            return !synchronousStandbyNames.isBlank() && WAITING_FOR_STANDBYS.contains(synchronousCommit);
        }

        /** One sentence for the log: what a failover can lose with these settings. */
        public String describe() {
            String settings = "synchronous_commit=" + synchronousCommit + ", synchronous_standby_names='"
                    + synchronousStandbyNames + "'";
            return synchronous()
                    ? "Replication: " + settings + ": a commit waits for a synchronous standby; a failover to it "
                    + "loses no granted lease."
                    : "Replication: " + settings + ": commits do not wait for a standby. A failover may lose the "
                    + "last grants: their holders find their leases gone at their next renew, and a key's next lease "
                    + "still gets a larger fencing token than any it had (docs/guides/deployment.md, \"Replication\").";
        }
    }

    private record Reading(Settings settings, long atNanos) {
    }

    private final JdbcClient jdbc;
    private volatile Reading last;

    ReplicationHealthIndicator(JdbcClient jdbc) {
        this.jdbc = jdbc;
    }

    /** The settings now (read from the database, or as read less than 10 s ago). */
    public Settings settings() {
        Reading reading = last;
        if (reading == null || System.nanoTime() - reading.atNanos() > REREAD_NANOS) {
            Settings settings = jdbc.sql("""
                    SELECT current_setting('synchronous_commit') AS synchronous_commit,
                           current_setting('synchronous_standby_names') AS synchronous_standby_names
                    """).query((rs, row) -> new Settings(rs.getString("synchronous_commit"),
                    rs.getString("synchronous_standby_names"))).single();
            reading = new Reading(settings, System.nanoTime());
            last = reading;
        }
        return reading.settings();
    }

    @Override
    public Health health() {
        Settings settings;
        try {
            settings = settings();
        } catch (RuntimeException e) {
            return Health.unknown().build(); // the database is away: the db check says so
        }
        return Health.up().withDetail("synchronousCommit", settings.synchronousCommit())
                .withDetail("synchronousStandbyNames", settings.synchronousStandbyNames())
                .withDetail("synchronous", settings.synchronous()).build();
    }

    @EventListener(ApplicationReadyEvent.class)
    void reportAtStart() {
        Settings settings = settings();
        if (settings.synchronous()) {
            log.info(settings.describe());
        } else {
            log.warn(settings.describe());
        }
    }
}

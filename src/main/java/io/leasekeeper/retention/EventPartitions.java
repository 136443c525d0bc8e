package io.leasekeeper.retention;

import io.leasekeeper.config.LeasekeeperProperties;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.function.Function;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.ConnectionCallback;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;
import org.springframework.stereotype.Component;

/**
 * The partitions of {@code lease_event} (db/migration/V1__schema.sql): one per {@code partition-width} of lease acquisition times,
 * contiguous, made {@code partitions-ahead} widths ahead of the database clock at start (before the service takes
 * a request) and at every run of the retention job, and retired whole once every lease acquired before a
 * partition's upper bound has been over for the retention. The database function that makes them holds a PostgreSQL
 * advisory lock, so two replicas never make the same partition; a grant whose time is past them (the job has not
 * run for that long) makes the one it needs with the same function, so an audit write never lacks a partition.
 */
@Component
public class EventPartitions implements InitializingBean {

    private static final Logger log = LoggerFactory.getLogger(EventPartitions.class);

    /**
     * The advisory lock of making partitions (taken by lease_event_partitions_until): any constant that no other user
     * of the database takes.
     */
    static final long LOCK = 0x1ea5e_e7e47L;

    /**
     * The partitions, oldest first, with each one's upper bound (read back from its bound's text, in this session's
     * time zone and date style, by the same session) and whether a concurrent detach of it was left unfinished.
     */
    private static final String PARTITIONS = """
            SELECT c.relname AS name, i.inhdetachpending AS detaching,
                   CAST(substring(pg_get_expr(c.relpartbound, c.oid) FROM 'TO \\(''(.*)''\\)') AS timestamptz) AS upper_bound
            FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
            WHERE i.inhparent = CAST('lease_event' AS regclass)
            ORDER BY upper_bound
            """;

    /**
     * Whether a lease acquired before the bound is still active (not yet swept, or granted under a larger
     * lifetime cap than today's): its events would still be written to the partition. No index leads with
     * acquired_at among active leases (a renew would write to it), so this reads the active leases until it finds
     * one: once per partition due, a width apart.
     */
    private static final String ACTIVE_BEFORE = """
            -- Across tenants: retention.
            SELECT EXISTS (SELECT 1 FROM lease WHERE state = 'active' AND acquired_at < :bound)
            """;

    private final JdbcTemplate jdbc;
    /** The upper bound of the newest partition, as last read: how far ahead events have a partition. */
    private volatile Instant horizon = Instant.EPOCH;
    private final Duration width;
    private final int ahead;
    private final Duration kept;

    EventPartitions(JdbcTemplate jdbc, LeasekeeperProperties properties, MeterRegistry registry) {
        this.jdbc = jdbc;
        this.width = properties.audit().partitionWidth();
        this.ahead = properties.audit().partitionsAhead();
        this.kept = properties.audit().retention().plus(properties.lease().maxLifetimeCap());
        // The JVM's clock, for a gauge only: every decision of this job reads the database's (lease_now()).
        Gauge.builder("leasekeeper.audit.partitions.horizon", this,
                        p -> Duration.between(Instant.now(), p.horizon).toMillis() / 1000.0)
                .baseUnit("seconds")
                .description("How far past now the partitions of lease_event reach: an acquire after that fails")
                .register(registry);
        Gauge.builder("leasekeeper.audit.partition.width", width, w -> w.toSeconds()).baseUnit("seconds")
                .description("The acquisition times whose events share a partition").register(registry);
    }

    /**
     * How long after its acquisition a lease, its events and its key are kept: it lives at most the lifetime cap,
     * and is kept the retention after its end.
     */
    Duration kept() {
        return kept;
    }

    /**
     * Partitions are there before the first request writes an event. When another instance holds the job's lock
     * past the statement timeout (its concurrent detach waiting for old transactions), this instance starts all the
     * same if the partitions reach a width past now, and its schedule makes the rest.
     */
    @Override
    public void afterPropertiesSet() {
        try {
            makeAhead();
        } catch (DataAccessException e) {
            JdbcClient db = JdbcClient.create(jdbc);
            List<Partition> made = partitions(db);
            if (made.isEmpty() || !made.getLast().upper().isAfter(now(db).plus(width))) {
                throw e;
            }
            horizon = made.getLast().upper();
            log.warn("Audit partitions not made at start ({}); they reach {}, the schedule makes more", e.toString(),
                    horizon);
        }
    }

    /**
     * Makes partitions, contiguous from the newest, until they reach past {@code partitions-ahead} widths past now:
     * the function lease_event_partitions_until (db/migration/R__audit.sql), which a grant also calls when its time is past them.
     */
    public int makeAhead() {
        JdbcClient db = JdbcClient.create(jdbc);
        int made = db.sql("""
                SELECT lease_event_partitions_until(lease_now() + make_interval(secs => :reach),
                                                    make_interval(secs => :width))
                """).param("reach", width.toSeconds() * ahead).param("width", width.toSeconds())
                .query(Integer.class).single();
        this.horizon = db.sql("SELECT upper FROM lease_event_horizon").query(OffsetDateTime.class).single().toInstant();
        return made;
    }

    /**
     * Drops the partitions whose upper bound is at least the retention plus the lifetime cap ago, oldest first, while
     * no lease acquired before the bound is still active. A detach is concurrent (inserts into other partitions go on);
     * one left unfinished by a failure is finished first. Returns how many partitions it dropped. A concurrent detach
     * cannot run in a transaction, so this holds no lock: two instances retiring at once race, and the loser's
     * detach or drop fails (the partition is another's already) and ends its run, with a warning, until the next.
     */
    public int retire() {
        return autocommitted(db -> {
            Instant cutoff = now(db).minus(kept);
            int dropped = 0;
            for (Partition partition : partitions(db)) {
                if (partition.detaching()) {
                    db.sql("ALTER TABLE lease_event DETACH PARTITION " + partition.name() + " FINALIZE").update();
                } else if (partition.upper().isAfter(cutoff)
                        || db.sql(ACTIVE_BEFORE).param("bound", at(partition.upper())).query(Boolean.class).single()) {
                    break;
                } else {
                    db.sql("ALTER TABLE lease_event DETACH PARTITION " + partition.name() + " CONCURRENTLY").update();
                }
                db.sql("DROP TABLE " + partition.name()).update();
                log.info("Audit partition {} retired (leases acquired before {})", partition.name(), partition.upper());
                dropped++;
            }
            return dropped;
        });
    }

    record Partition(String name, Instant upper, boolean detaching) {
    }

    List<Partition> partitions() {
        return autocommitted(EventPartitions::partitions);
    }

    private static List<Partition> partitions(JdbcClient db) {
        return db.sql(PARTITIONS).query((rs, n) -> new Partition(rs.getString("name"),
                rs.getObject("upper_bound", OffsetDateTime.class).toInstant(), rs.getBoolean("detaching"))).list();
    }

    private static Instant now(JdbcClient db) {
        return db.sql("SELECT lease_now()").query(OffsetDateTime.class).single().toInstant();
    }

    private static OffsetDateTime at(Instant instant) {
        return instant.atOffset(ZoneOffset.UTC);
    }

    /** Runs {@code work} on one connection in autocommit: a concurrent detach cannot run inside a transaction. */
    private <T> T autocommitted(Function<JdbcClient, T> work) {
        return jdbc.execute((ConnectionCallback<T>) connection ->
                work.apply(JdbcClient.create(new SingleConnectionDataSource(connection, true))));
    }
}

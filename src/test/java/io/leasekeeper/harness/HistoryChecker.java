package io.leasekeeper.harness;

import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * The invariants of a run, checked over the service's own tables (leases and audit events, by the
 * database's times) and the fenced register's write log. Every violation is described; a correct run
 * has none.
 */
final class HistoryChecker {

    private record LeaseRow(UUID id, long keyId, long token, String state, Instant acquiredAt, Instant endedAt,
                            Instant expiresAt) {
        /** The last instant it was active: its end if recorded, else its expiry. */
        Instant activeUntil() {
            return endedAt != null && endedAt.isBefore(expiresAt) ? endedAt : expiresAt;
        }
    }

    private record Event(UUID leaseId, String type) {
    }

    private HistoryChecker() {
    }

    static List<String> check(JdbcClient service, String tenant, List<FencedRegister.Write> writes) {
        List<String> violations = new ArrayList<>();
        List<LeaseRow> leases = service.sql("""
                SELECT id, key_id, fencing_token, state, acquired_at, ended_at, expires_at
                FROM lease WHERE tenant = :tenant ORDER BY key_id, acquired_at, fencing_token
                """).param("tenant", tenant).query((rs, n) -> new LeaseRow(rs.getObject("id", UUID.class),
                rs.getLong("key_id"), rs.getLong("fencing_token"), rs.getString("state"),
                instant(rs.getObject("acquired_at", OffsetDateTime.class)),
                instant(rs.getObject("ended_at", OffsetDateTime.class)),
                instant(rs.getObject("expires_at", OffsetDateTime.class)))).list();

        // Per key: no two leases active at overlapping database times, and tokens rise in grant order.
        for (int i = 1; i < leases.size(); i++) {
            LeaseRow previous = leases.get(i - 1);
            LeaseRow next = leases.get(i);
            if (previous.keyId() != next.keyId()) {
                continue;
            }
            if (next.acquiredAt().isBefore(previous.activeUntil())) {
                violations.add("key " + next.keyId() + ": lease " + next.id() + " granted at " + next.acquiredAt()
                        + " while " + previous.id() + " was active until " + previous.activeUntil());
            }
            if (next.token() <= previous.token()) {
                violations.add("key " + next.keyId() + ": token " + next.token() + " granted after " + previous.token());
            }
        }

        // Every lease's event chain: ACQUIRED first, then only RENEWED, then at most one terminal event.
        Map<UUID, List<String>> chains = new HashMap<>();
        service.sql("""
                SELECT e.lease_id, e.type FROM lease_event e JOIN lease l ON l.id = e.lease_id
                WHERE l.tenant = :tenant ORDER BY e.id
                """).param("tenant", tenant)
                .query((rs, n) -> new Event(rs.getObject("lease_id", UUID.class), rs.getString("type"))).list()
                .forEach(e -> chains.computeIfAbsent(e.leaseId(), id -> new ArrayList<>()).add(e.type()));
        for (LeaseRow lease : leases) {
            List<String> chain = chains.getOrDefault(lease.id(), List.of());
            if (chain.isEmpty() || !chain.getFirst().equals("ACQUIRED")) {
                violations.add("lease " + lease.id() + ": events do not start with ACQUIRED: " + chain);
                continue;
            }
            List<String> rest = chain.subList(1, chain.size());
            long terminal = rest.stream().filter(t -> !t.equals("RENEWED")).count();
            boolean terminalLast = terminal == 0 || !rest.getLast().equals("RENEWED");
            if (terminal > 1 || !terminalLast || rest.contains("ACQUIRED")) {
                violations.add("lease " + lease.id() + ": invalid event chain " + chain);
            }
            String expectedTerminal = switch (lease.state()) {
                case "active" -> null;
                case "expired" -> "EXPIRED";
                case "released" -> "RELEASED";
                default -> "REVOKED";
            };
            if ((expectedTerminal == null) != (terminal == 0)
                    || (expectedTerminal != null && !rest.getLast().equals(expectedTerminal))) {
                violations.add("lease " + lease.id() + " is " + lease.state() + " but its events are " + chain);
            }
        }

        // The register never accepted a token lower than one it had accepted for the key before.
        Map<String, Long> highest = new HashMap<>();
        for (FencedRegister.Write w : writes) {
            long seen = highest.getOrDefault(w.key(), Long.MIN_VALUE);
            if (w.accepted() && w.token() < seen) {
                violations.add("register " + w.key() + ": accepted token " + w.token() + " after " + seen);
            }
            if (!w.accepted() && w.token() >= seen) {
                violations.add("register " + w.key() + ": refused token " + w.token() + " though the highest was " + seen);
            }
            if (w.accepted()) {
                highest.put(w.key(), Math.max(seen, w.token()));
            }
        }
        return violations;
    }

    /** The end-of-run summary: operations by outcome, faults, register writes, violations. */
    static void print(String title, Workload.Summary summary, List<FencedRegister.Write> writes,
                      List<String> violations, List<String> faults) {
        long accepted = writes.stream().filter(FencedRegister.Write::accepted).count();
        System.out.printf("%n%s%n  operations: %s%n  faults injected: %s%n  register writes: %d accepted, %d rejected%n"
                        + "  violations: %d %s%n", title, summary.outcomes(), faults, accepted, writes.size() - accepted,
                violations.size(), violations);
    }

    private static Instant instant(OffsetDateTime value) {
        return value == null ? null : value.toInstant();
    }
}

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

        // Each logical request (one Idempotency-Key, however often retried, on whichever instance) made at
        // most one lease. The audit events carry the key as their request id.
        service.sql("""
                SELECT e.request_id, count(*) AS leases FROM lease_event e JOIN lease l ON l.id = e.lease_id
                WHERE l.tenant = :tenant AND e.type = 'ACQUIRED' AND e.request_id IS NOT NULL
                GROUP BY e.request_id HAVING count(*) > 1 ORDER BY e.request_id
                """).param("tenant", tenant)
                .query((rs, n) -> "request " + rs.getString("request_id") + " made " + rs.getLong("leases") + " leases")
                .list().forEach(violations::add);

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

    /**
     * 503 answers are allowed only during a database outage (and the recovery time after it); any other
     * 5xx was reported by the workload when it happened. The message names the other faults the 503s fell in
     * (an instance killed, answers dropped), for the diagnosis.
     */
    static List<String> checkServerErrors(Workload.Summary summary, List<FaultWindow> windows) {
        List<Long> outside = summary.unavailableAt().stream()
                .filter(at -> windows.stream().noneMatch(w -> w.databaseOutage() && w.covers(at))).toList();
        if (outside.isEmpty()) {
            return List.of();
        }
        Map<String, Long> during = FaultWindow.attribute(outside, windows, false);
        during.values().removeIf(count -> count == 0);
        return List.of(outside.size() + " answers were 503 outside every database outage and its "
                + FaultWindow.RECOVERY.toSeconds() + " s of recovery (by fault window: " + during + ")");
    }

    /** Writes by clients that paused past their TTL: how many a newer holder's write had fenced off. */
    static String staleWrites(List<FencedRegister.Write> writes) {
        Map<String, Long> highest = new HashMap<>();
        long fenced = 0;
        long fencedRejected = 0;
        long unfencedAccepted = 0;
        long stale = 0;
        for (FencedRegister.Write w : writes) {
            long seen = highest.getOrDefault(w.key(), Long.MIN_VALUE);
            if (w.stale()) {
                stale++;
                if (seen > w.token()) {
                    fenced++;
                    fencedRejected += w.accepted() ? 0 : 1;
                } else if (w.accepted()) {
                    unfencedAccepted++;
                }
            }
            if (w.accepted()) {
                highest.put(w.key(), Math.max(seen, w.token()));
            }
        }
        return stale + " by clients paused past their TTL: " + fencedRejected + " of " + fenced
                + " written after a newer holder's write were rejected; " + unfencedAccepted
                + " came before any newer write and were accepted (the newer holder's write supersedes them)";
    }

    /** The end-of-run summary: operations by outcome, faults, register writes, errors by fault window, violations. */
    static void print(String title, Workload.Summary summary, List<FencedRegister.Write> writes,
                      List<String> violations, List<String> faults, List<FaultWindow> windows) {
        long accepted = writes.stream().filter(FencedRegister.Write::accepted).count();
        StringBuilder out = new StringBuilder();
        out.append(String.format("%n%s%n  operations: %s%n  faults injected (%d): %s%n", title, summary.outcomes(),
                faults.size(), faults));
        out.append(String.format("  register writes: %d accepted, %d rejected; %s%n", accepted,
                writes.size() - accepted, staleWrites(writes)));
        if (!windows.isEmpty()) {
            out.append(String.format("  503 by database outage window: %s%n",
                    FaultWindow.attribute(summary.unavailableAt(), windows, true)));
            out.append(String.format("  unreachable by fault window: %s%n",
                    FaultWindow.attribute(summary.unreachableAt(), windows, false)));
        }
        out.append(String.format("  violations: %d %s%n", violations.size(), violations));
        System.out.print(out);
    }

    private static Instant instant(OffsetDateTime value) {
        return value == null ? null : value.toInstant();
    }
}

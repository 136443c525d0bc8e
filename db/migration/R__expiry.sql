-- Expiry: the sweeper's batch of one tenant in one call, and the expiry an acquire records when it finds its key's
-- lease past its TTL before the sweeper did. Both are lease_expire_locked, the one place a lease expires.

-- With the keys of the leases p_leases of tenant p_tenant locked by the caller, at t (the caller's time of the
-- decision, read after the locks): expires those still active and due as of t, each with its EXPIRED event (at t, by
-- p_principal, with the request's id and trace when a request found it), and starts its key's lock-delay when it has
-- one. A lease that a transaction committed a change to before the lock (renewed, released, expired by another) is
-- read at that newest version and left alone. The leases are found by their primary key, one probe each, never by a
-- scan of the tenant's due or active leases (docs/decisions/tenant-statistics.md).
--
-- Post-state validation (docs/concepts/locking.md, "Post-state validation"): every lease expired has its one event
-- and each lock-delay due was written; and afterwards, read again in a new snapshot with the keys still locked, none
-- of those leases is still active and due as of t: either would be a write swallowed, and raises SQLSTATE LK001,
-- which rolls the call back. With p_channel (null: none), the keys among those freed that someone waits for or
-- watches are notified on it when the call commits: their ids comma-separated, or '*' (every key) when the list would
-- be too long for a payload (wait.FreedKeys). Returns how many leases it expired.
CREATE OR REPLACE FUNCTION lease_expire_locked(p_tenant text, p_leases uuid[], t timestamptz, p_principal text,
                                               p_request_id text, p_trace_id text, p_channel text)
    RETURNS integer
    LANGUAGE plpgsql VOLATILE
    AS $$
DECLARE
    expired integer;
    events integer;
    delays integer;
    delays_due integer;
    watched text;
    still_due uuid[];
BEGIN
    WITH expired AS (
        UPDATE lease l SET state = 'expired', ended_at = l.expires_at, end_reason = 'expired'
        WHERE l.tenant = p_tenant AND l.id = ANY (p_leases) AND l.ended_at IS NULL AND l.expires_at <= t
        RETURNING l.tenant, l.id, l.key_id, l.fencing_token, l.acquired_at, l.expires_at, l.lock_delay_seconds
    ), delayed AS (
        UPDATE lease_key k SET delayed_until = e.expires_at + make_interval(secs => e.lock_delay_seconds)
        FROM expired e
        WHERE k.tenant = p_tenant AND k.id = e.key_id AND e.lock_delay_seconds > 0
        RETURNING 1
    ), written AS (
        INSERT INTO lease_event (tenant, lease_id, lease_acquired_at, type, from_state, to_state, fencing_token, at,
                                 principal, request_id, trace_id, details)
        SELECT tenant, id, acquired_at, 'EXPIRED', 'active', 'expired', fencing_token, t, p_principal, p_request_id,
               p_trace_id, jsonb_build_object('expiresAt', rfc3339(expires_at))
        FROM expired
        RETURNING 1
    )
    SELECT (SELECT count(*)::integer FROM expired), (SELECT count(*)::integer FROM written),
           (SELECT count(*)::integer FROM delayed),
           (SELECT count(*)::integer FROM expired WHERE lock_delay_seconds > 0),
           (SELECT string_agg(CAST(k.id AS text), ',')
            FROM expired e JOIN lease_key k ON k.tenant = p_tenant AND k.id = e.key_id
            WHERE k.watched_until > t)
    INTO expired, events, delays, delays_due, watched;
    IF events <> expired OR delays <> delays_due THEN
        RAISE EXCEPTION 'lease_expire_locked on tenant %: it expired % leases but wrote % events and % of % lock-delays (rolled back)',
            p_tenant, expired, events, delays, delays_due USING ERRCODE = 'LK001';
    END IF;
    SELECT array_agg(l.id) INTO still_due FROM lease l
    WHERE l.tenant = p_tenant AND l.id = ANY (p_leases) AND l.ended_at IS NULL AND l.expires_at <= t;
    IF still_due IS NOT NULL THEN
        RAISE EXCEPTION 'lease_expire_locked on tenant %: leases % are still active and due, though their keys were locked (rolled back)',
            p_tenant, still_due USING ERRCODE = 'LK001';
    END IF;
    IF p_channel IS NOT NULL AND watched IS NOT NULL THEN
        PERFORM pg_notify(p_channel, CASE WHEN length(watched) > 7900 THEN '*' ELSE watched END);
    END IF;
    RETURN expired;
END
$$;

-- One sweeper batch of one tenant: it locks the keys of the active leases that are due, skipping keys another transaction
-- holds (an acquire, renew, release or another sweeper working on them); the limit applies after locking, so
-- concurrent sweepers take disjoint batches. Then, with those keys locked, lease_expire_locked (a new statement, a new
-- snapshot) expires those leases still active and due, by system:sweeper, and notifies on p_channel. Returns how many
-- leases it expired.
CREATE OR REPLACE FUNCTION lease_expire_due(p_tenant text, p_batch_size integer, p_channel text) RETURNS integer
    LANGUAGE plpgsql VOLATILE
    AS $$
DECLARE
    t constant timestamptz := lease_now();
    due uuid[];
BEGIN
    SELECT array_agg(d.id) INTO due FROM (
        SELECT l.id
        FROM lease l JOIN lease_key k ON k.tenant = p_tenant AND k.id = l.key_id
        WHERE l.tenant = p_tenant AND l.state = 'active' AND l.expires_at <= t
        ORDER BY l.expires_at
        LIMIT p_batch_size
        FOR NO KEY UPDATE OF k SKIP LOCKED
    ) AS d;
    IF due IS NULL THEN
        RETURN 0;
    END IF;
    RETURN lease_expire_locked(p_tenant, due, t, 'system:sweeper', NULL, NULL, p_channel);
END
$$;

-- Expiry: one sweeper batch of one tenant in one call.
--
-- It locks the keys whose active lease is due, skipping keys another transaction holds (an acquire, renew, release
-- or another sweeper working on them); the limit applies after locking, so concurrent sweepers take disjoint
-- batches. Then, with those keys locked, a new statement (a new snapshot) expires the leases still active and due,
-- each with its EXPIRED event (principal system:sweeper), and starts its key's lock-delay when it has one. A lease
-- that a transaction committed a change to before the lock (renewed, released, expired by an acquire) is read at
-- that newest version and left alone.
--
-- Post-state validation (docs/concepts/locking.md, "Post-state validation"): every lease expired has its one event
-- and each lock-delay due was written; and after the batch, read again in a new snapshot with the keys still
-- locked, no lease of a locked key is still active and due as of the batch's time: either would be a write
-- swallowed, and raises SQLSTATE LK001, which rolls the batch back. With p_channel (null: none), the keys among
-- those freed that someone waits for are notified on it when the batch commits: their ids comma-separated, or '*'
-- (every key) when the list would be too long for a payload (wait.FreedKeys). Returns how many leases it expired.
CREATE OR REPLACE FUNCTION lease_expire_due(p_tenant text, p_batch_size integer, p_channel text) RETURNS integer
    LANGUAGE plpgsql VOLATILE
    AS $$
DECLARE
    t constant timestamptz := lease_now();
    locked bigint[];
    expired integer;
    events integer;
    delays integer;
    delays_due integer;
    watched text;
    still_due uuid[];
BEGIN
    SELECT array_agg(d.id) INTO locked FROM (
        SELECT k.id
        FROM lease l JOIN lease_key k ON k.tenant = p_tenant AND k.id = l.key_id
        WHERE l.tenant = p_tenant AND l.state = 'active' AND l.expires_at <= t
        ORDER BY l.expires_at
        LIMIT p_batch_size
        FOR NO KEY UPDATE OF k SKIP LOCKED
    ) AS d;
    IF locked IS NULL THEN
        RETURN 0;
    END IF;
    WITH expired AS (
        UPDATE lease l SET state = 'expired', ended_at = l.expires_at, end_reason = 'expired'
        WHERE l.tenant = p_tenant AND l.key_id = ANY (locked) AND l.state = 'active' AND l.expires_at <= t
        RETURNING l.tenant, l.id, l.key_id, l.fencing_token, l.acquired_at, l.expires_at, l.lock_delay_seconds
    ), delayed AS (
        UPDATE lease_key k SET delayed_until = e.expires_at + make_interval(secs => e.lock_delay_seconds)
        FROM expired e
        WHERE k.tenant = p_tenant AND k.id = e.key_id AND e.lock_delay_seconds > 0
        RETURNING 1
    ), written AS (
        INSERT INTO lease_event (tenant, lease_id, lease_acquired_at, type, from_state, to_state, fencing_token, at,
                                 principal, details)
        SELECT tenant, id, acquired_at, 'EXPIRED', 'active', 'expired', fencing_token, t, 'system:sweeper',
               jsonb_build_object('expiresAt', rfc3339(expires_at))
        FROM expired
        RETURNING 1
    )
    SELECT (SELECT count(*) FROM expired), (SELECT count(*) FROM written), (SELECT count(*) FROM delayed),
           (SELECT count(*) FROM expired WHERE lock_delay_seconds > 0),
           (SELECT string_agg(CAST(k.id AS text), ',')
            FROM expired e JOIN lease_key k ON k.tenant = p_tenant AND k.id = e.key_id
            WHERE k.watched_until > t)
    INTO expired, events, delays, delays_due, watched;
    IF events <> expired OR delays <> delays_due THEN
        RAISE EXCEPTION 'lease_expire_due on tenant %: it expired % leases but wrote % events and % of % lock-delays (rolled back)',
            p_tenant, expired, events, delays, delays_due USING ERRCODE = 'LK001';
    END IF;
    SELECT array_agg(l.id) INTO still_due FROM lease l
    WHERE l.tenant = p_tenant AND l.key_id = ANY (locked) AND l.state = 'active' AND l.expires_at <= t;
    IF still_due IS NOT NULL THEN
        RAISE EXCEPTION 'lease_expire_due on tenant %: leases % are still active and due, though the batch locked their keys (rolled back)',
            p_tenant, still_due USING ERRCODE = 'LK001';
    END IF;
    IF p_channel IS NOT NULL AND watched IS NOT NULL THEN
        PERFORM pg_notify(p_channel, CASE WHEN length(watched) > 7900 THEN '*' ELSE watched END);
    END IF;
    RETURN expired;
END
$$;

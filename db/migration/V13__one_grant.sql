-- One grant (issue 19, "each operation's SQL whole and addressable by name"). A key is granted in three places: the
-- 1.0 acquire of one call (lease_acquire), the acquire of the service's locking path (lease_acquire_locked, new
-- here) and the hand-over of a free key to the first of its queue (LeaseStore.HAND_OVER). Each now calls
-- lease_grant, which writes the lease and its ACQUIRED event; until now the locking path assembled that grant
-- from a fragment of SQL in the service, a copy of the one in lease_acquire.

-- Grants the key k, which has no active lease and whose row the caller holds locked, at t (the caller's time of
-- the decision): the lease with the key's next fencing token, as the request asked, and its ACQUIRED event.
-- Answers 'granted' with the lease. A write that a rule or a trigger swallowed raises SQLSTATE LK001, which rolls
-- the caller's statement back whole (docs/design.md, "post-state validation").
CREATE FUNCTION lease_grant(
    k record, t timestamptz, p_owner text, p_holder text, p_ttl integer, p_max_lifetime integer,
    p_lock_delay integer, p_job_id text, p_trace_id text, p_metadata jsonb, p_request_id text,
    p_request_trace_id text)
    RETURNS lease_answer
    LANGUAGE plpgsql VOLATILE
    AS $$
DECLARE
    l lease%ROWTYPE;
BEGIN
    INSERT INTO lease (id, key_id, tenant, owner, holder, fencing_token, state, acquired_at, expires_at,
                       max_expires_at, ttl_seconds, max_lifetime_seconds, lock_delay_seconds, job_id, trace_id,
                       metadata)
    VALUES (gen_random_uuid(), k.id, k.tenant, p_owner, p_holder, next_fencing_token(k.tenant, k.id, t), 'active',
            t, t + make_interval(secs => LEAST(p_ttl, p_max_lifetime)), t + make_interval(secs => p_max_lifetime),
            p_ttl, p_max_lifetime, p_lock_delay, p_job_id, p_trace_id, p_metadata)
    RETURNING * INTO l;
    IF l.id IS NULL THEN
        RAISE EXCEPTION 'lease_grant on key %: it granted no lease, though the key was free and locked (rolled back)',
            k.id USING ERRCODE = 'LK001';
    END IF;
    INSERT INTO lease_event (tenant, lease_id, lease_acquired_at, type, to_state, fencing_token, at, principal,
                             request_id, trace_id, details)
    VALUES (k.tenant, l.id, l.acquired_at, 'ACQUIRED', 'active', l.fencing_token, l.acquired_at, p_owner,
            p_request_id, p_request_trace_id,
            jsonb_build_object('expiresAt', rfc3339(l.expires_at), 'ttlSeconds', l.ttl_seconds));
    IF NOT FOUND THEN
        RAISE EXCEPTION 'lease_grant on key % (%): it granted the lease but wrote no event (rolled back)',
            k.id, l.id USING ERRCODE = 'LK001';
    END IF;
    RETURN lease_answer_of('granted', t, k, l, NULL);
END
$$;

-- As in V11, its grant now lease_grant's: 'granted', 'held' (an unexpired lease holds the key), 'delayed' (its
-- lock-delay runs) or 'locked_path'.
CREATE OR REPLACE FUNCTION lease_acquire(
    p_tenant text, p_program text, p_target_type text, p_target_value text, p_actor text, p_operation text,
    p_owner text, p_holder text, p_ttl integer, p_max_lifetime integer, p_lock_delay integer, p_job_id text,
    p_trace_id text, p_metadata jsonb, p_request_id text, p_request_trace_id text)
    RETURNS lease_answer
    LANGUAGE plpgsql VOLATILE
    AS $$
DECLARE
    k lease_key%ROWTYPE;
    l lease%ROWTYPE;
    t timestamptz;
BEGIN
    SELECT * INTO k FROM lease_key lk
    WHERE lk.tenant = p_tenant AND lk.program = p_program AND lk.target_type = p_target_type
      AND lk.target_value = p_target_value AND lk.actor = p_actor AND lk.operation IS NOT DISTINCT FROM p_operation
    FOR NO KEY UPDATE;
    IF NOT FOUND THEN
        -- A key's first acquire makes its row; a concurrent first acquire waits here for the other's commit.
        INSERT INTO lease_key (tenant, program, target_type, target_value, actor, operation)
        VALUES (p_tenant, p_program, p_target_type, p_target_value, p_actor, p_operation)
        ON CONFLICT DO NOTHING;
        SELECT * INTO k FROM lease_key lk
        WHERE lk.tenant = p_tenant AND lk.program = p_program AND lk.target_type = p_target_type
          AND lk.target_value = p_target_value AND lk.actor = p_actor AND lk.operation IS NOT DISTINCT FROM p_operation
        FOR NO KEY UPDATE;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'lease_acquire on key %/%: the key''s row was neither found nor made (rolled back)',
                p_tenant, p_program USING ERRCODE = 'LK001';
        END IF;
    END IF;
    t := date_trunc('milliseconds', clock_timestamp());
    IF k.delayed_until > t THEN
        RETURN lease_answer_of('delayed', t, k, l, NULL); -- l not read: no lease in the answer
    ELSIF k.watched_until > t THEN
        RETURN lease_answer_of('locked_path', t, k, l, NULL);
    END IF;
    -- The key's lease, if it has an active one, is its newest (docs/design.md, "A key's newest lease").
    SELECT * INTO l FROM lease nl WHERE nl.tenant = p_tenant AND nl.key_id = k.id
    ORDER BY nl.fencing_token DESC LIMIT 1;
    IF l.state = 'active' THEN
        IF l.expires_at > t THEN
            RETURN lease_answer_of('held', t, k, l, NULL);
        END IF;
        l := NULL;
        RETURN lease_answer_of('locked_path', t, k, l, NULL);
    END IF;
    RETURN lease_grant(k, t, p_owner, p_holder, p_ttl, p_max_lifetime, p_lock_delay, p_job_id, p_trace_id,
                       p_metadata, p_request_id, p_request_trace_id);
END
$$;

-- The acquire of the service's locking path (LeaseOperations), in the transaction that locked the key's row and
-- saw to its lock-delay and its queue: 'granted', or 'unchanged' with the key's active lease as it is, which may
-- be past its TTL and not yet recorded as expired (the caller records that expiry, then calls again).
CREATE FUNCTION lease_acquire_locked(
    p_tenant text, p_key_id bigint, p_owner text, p_holder text, p_ttl integer, p_max_lifetime integer,
    p_lock_delay integer, p_job_id text, p_trace_id text, p_metadata jsonb, p_request_id text,
    p_request_trace_id text)
    RETURNS lease_answer
    LANGUAGE plpgsql VOLATILE
    AS $$
DECLARE
    k lease_key%ROWTYPE;
    l lease%ROWTYPE;
    t timestamptz;
BEGIN
    -- Held by the caller already: the lock is the locking rule's first step, here as in every transition.
    SELECT * INTO k FROM lease_key lk WHERE lk.tenant = p_tenant AND lk.id = p_key_id FOR NO KEY UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'lease_acquire_locked on key %: no such key, though the caller locked it (rolled back)',
            p_key_id USING ERRCODE = 'LK001';
    END IF;
    t := date_trunc('milliseconds', clock_timestamp());
    SELECT * INTO l FROM lease nl WHERE nl.tenant = p_tenant AND nl.key_id = k.id
    ORDER BY nl.fencing_token DESC LIMIT 1;
    IF l.state = 'active' THEN
        RETURN lease_answer_of('unchanged', t, k, l, NULL);
    END IF;
    RETURN lease_grant(k, t, p_owner, p_holder, p_ttl, p_max_lifetime, p_lock_delay, p_job_id, p_trace_id,
                       p_metadata, p_request_id, p_request_trace_id);
END
$$;

-- The grant and the acquire. Every transition is a function the service calls in one round trip, in autocommit (or
-- inside the transaction of an Idempotency-Key). Each follows the locking rule (docs/concepts/locking.md): it first
-- locks the key's row, then reads the clock and the key's lease, and makes the transition with its audit event only
-- if it is allowed. The tenant is every function's first argument (or its key's), the shape a distributed engine
-- delegates to the one node that holds the tenant (docs/guides/scale-out.md).
--
-- The time of the decision is read after the key's lock is held, with clock_timestamp(), so that it is later than
-- the time of every transition of the key that committed before: lease_now() would give the statement's start,
-- which may precede a wait for the lock. Each statement inside a function takes a new snapshot (they are VOLATILE,
-- under READ COMMITTED), so everything read after the lock is the key's newest state.
--
-- Each returns one lease_answer (V1__schema.sql). A write that a rule or a trigger swallowed raises an error
-- (SQLSTATE LK001, docs/concepts/locking.md, "Post-state validation"), which rolls the call back whole.

-- The answer of a function that decided at t on the key k: l the lease (null fields: none), beat the renewal's.
CREATE OR REPLACE FUNCTION lease_answer_of(outcome text, t timestamptz, k record, l record, beat double precision)
    RETURNS lease_answer
    LANGUAGE plpgsql IMMUTABLE
    AS $$
BEGIN
    RETURN ROW(outcome, t, k.id, CASE WHEN k.delayed_until > t THEN k.delayed_until END, beat,
               l.id, l.owner, l.holder, l.fencing_token, l.state, l.acquired_at, l.renewed_at, l.expires_at,
               l.max_expires_at, l.ended_at, l.end_reason, l.ttl_seconds, l.max_lifetime_seconds,
               l.lock_delay_seconds, l.job_id, l.trace_id, l.metadata,
               k.tenant, k.program, k.target_type, k.target_value, k.actor, k.operation)::lease_answer;
END
$$;

-- Grants the key k, which has no active lease and whose row the caller holds locked, at t (the caller's time of the
-- decision): the lease with the key's next fencing token, as the request asked, and its ACQUIRED event, before
-- which a grant whose time is past the audit's partitions makes the one it needs (R__audit.sql). Answers 'granted'
-- with the lease. Every grant is this one: the acquire of one call, the acquire of the service's locking path, and
-- the waiter's taking of a key offered to it (lease_hand_over).
CREATE OR REPLACE FUNCTION lease_grant(
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
    IF l.acquired_at >= (SELECT h.upper FROM lease_event_horizon h) THEN
        PERFORM lease_event_partitions_until(l.acquired_at, NULL);
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

-- The acquire of one call: 'granted', 'held' (an unexpired lease holds the key), 'delayed' (its lock-delay runs)
-- or 'locked_path', having changed nothing: the service's locking path (LeaseOperations) takes a key that someone
-- waits for or watches (the hand-over to its queue and the notifications), and a key whose lease is past its TTL
-- and not yet recorded as expired.
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
    -- The key's lease, if it has an active one, is its newest (docs/decisions/tenant-statistics.md).
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
-- saw to its lock-delay and its queue: 'granted', or 'unchanged' with the key's active lease as it is, which may be
-- past its TTL and not yet recorded as expired (the caller records that expiry, then calls again).
CREATE OR REPLACE FUNCTION lease_acquire_locked(
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

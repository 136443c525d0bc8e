-- One call per transition (issue 19): the 1.0 acquire, the renew and the release, each a function the service
-- calls in one round trip, in autocommit (or inside the transaction of an Idempotency-Key). Each follows the
-- locking rule (docs/design.md): it first locks the key's row, then reads the clock and the key's lease, and
-- makes the transition with its audit event only if it is allowed. The tenant is every function's first
-- argument, the shape a distributed engine delegates to the one node that holds the tenant (docs/scale-out.md).
--
-- The time of the decision is read after the key's lock is held, with clock_timestamp(), so that it is later
-- than the time of every transition of the key that committed before: lease_now() would give the statement's
-- start, which may precede a wait for the lock. Each statement inside a function takes a new snapshot (they are
-- VOLATILE, under READ COMMITTED), so everything read after the lock is the key's newest state.
--
-- What these functions leave to the service's locking path (LeaseOperations), answering 'locked_path' having
-- changed nothing: a key that someone waits for or watches (the hand-over to its queue and the notifications),
-- and an acquire that finds the key's lease past its TTL and not yet recorded as expired.
--
-- Each returns one row: the outcome, the time of the decision, the key's id and lock-delay, and the lease (as it
-- is after the transition, or as it was when nothing changed; null when there is none), its columns named as the
-- service reads a lease. A write that a rule or a trigger swallowed raises an error (SQLSTATE LK001, "post-state
-- validation", docs/design.md), which rolls the call back whole.

-- What every one of these functions answers, one row.
CREATE TYPE lease_answer AS (
    outcome text, now timestamptz, key_id bigint, delayed_until timestamptz, beat double precision,
    id uuid, owner text, holder text, fencing_token bigint, state text, acquired_at timestamptz,
    renewed_at timestamptz, expires_at timestamptz, max_expires_at timestamptz, ended_at timestamptz,
    end_reason text, ttl_seconds integer, max_lifetime_seconds integer, lock_delay_seconds integer, job_id text,
    trace_id text, metadata jsonb, tenant text, program text, target_type text, target_value text, actor text,
    operation text);

-- The answer of a function that decided at t on the key k: l the lease (null fields: none), beat the renewal's.
CREATE FUNCTION lease_answer_of(outcome text, t timestamptz, k record, l record, beat double precision)
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

-- 'granted', 'held' (an unexpired lease holds the key), 'delayed' (its lock-delay runs) or 'locked_path'.
CREATE FUNCTION lease_acquire(
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
    answer text;
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
    -- The key's lease, if it has an active one, is its newest (docs/design.md, "A key's newest lease").
    SELECT * INTO l FROM lease nl WHERE nl.tenant = p_tenant AND nl.key_id = k.id
    ORDER BY nl.fencing_token DESC LIMIT 1;
    IF k.delayed_until > t THEN
        answer := 'delayed';
    ELSIF k.watched_until > t THEN
        answer := 'locked_path';
    ELSIF l.state = 'active' THEN
        answer := CASE WHEN l.expires_at > t THEN 'held' ELSE 'locked_path' END;
    ELSE
        INSERT INTO lease (id, key_id, tenant, owner, holder, fencing_token, state, acquired_at, expires_at,
                           max_expires_at, ttl_seconds, max_lifetime_seconds, lock_delay_seconds, job_id, trace_id,
                           metadata)
        VALUES (gen_random_uuid(), k.id, p_tenant, p_owner, p_holder, next_fencing_token(p_tenant, k.id, t), 'active',
                t, t + make_interval(secs => LEAST(p_ttl, p_max_lifetime)), t + make_interval(secs => p_max_lifetime),
                p_ttl, p_max_lifetime, p_lock_delay, p_job_id, p_trace_id, p_metadata)
        RETURNING * INTO l;
        IF l.id IS NULL THEN
            RAISE EXCEPTION 'lease_acquire on key %: it granted no lease and found no active one (rolled back)',
                k.id USING ERRCODE = 'LK001';
        END IF;
        INSERT INTO lease_event (tenant, lease_id, lease_acquired_at, type, to_state, fencing_token, at, principal,
                                 request_id, trace_id, details)
        VALUES (p_tenant, l.id, l.acquired_at, 'ACQUIRED', 'active', l.fencing_token, l.acquired_at, p_owner,
                p_request_id, p_request_trace_id,
                jsonb_build_object('expiresAt', rfc3339(l.expires_at), 'ttlSeconds', l.ttl_seconds));
        IF NOT FOUND THEN
            RAISE EXCEPTION 'lease_acquire on key % (%): it granted the lease but wrote no event (rolled back)',
                k.id, l.id USING ERRCODE = 'LK001';
        END IF;
        answer := 'granted';
    END IF;
    IF answer NOT IN ('granted', 'held') THEN
        l := NULL;
    END IF;
    RETURN lease_answer_of(answer, t, k, l, NULL);
END
$$;

-- 'renewed' (the lease with its new expiry; beat: how much of its TTL had passed since its previous renew or its
-- grant), 'unchanged' (the lease as it was: not the caller's, another token, or no longer active) or 'not_found'
-- (the tenant has no such lease). ttl NULL keeps the lease's TTL.
CREATE FUNCTION lease_renew(
    p_tenant text, p_lease_id uuid, p_owner text, p_fencing_token bigint, p_ttl integer, p_request_id text,
    p_trace_id text)
    RETURNS lease_answer
    LANGUAGE plpgsql VOLATILE
    AS $$
DECLARE
    k lease_key%ROWTYPE;
    l lease%ROWTYPE;
    t timestamptz;
    previous timestamptz;
    passed double precision;
    answer text := 'unchanged';
BEGIN
    SELECT lk.* INTO k FROM lease fl JOIN lease_key lk ON lk.tenant = p_tenant AND lk.id = fl.key_id
    WHERE fl.tenant = p_tenant AND fl.id = p_lease_id
    FOR NO KEY UPDATE OF lk;
    IF NOT FOUND THEN
        RETURN lease_answer_of('not_found', NULL, k, l, NULL);
    END IF;
    t := date_trunc('milliseconds', clock_timestamp());
    SELECT * INTO l FROM lease fl WHERE fl.tenant = p_tenant AND fl.id = p_lease_id;
    IF l.owner = p_owner AND l.fencing_token = p_fencing_token AND l.ended_at IS NULL AND l.expires_at > t THEN
        previous := l.expires_at;
        passed := extract(epoch FROM t - coalesce(l.renewed_at, l.acquired_at)) / l.ttl_seconds;
        UPDATE lease ul
        SET renewed_at = t,
            ttl_seconds = coalesce(p_ttl, ul.ttl_seconds),
            expires_at = LEAST(t + make_interval(secs => coalesce(p_ttl, ul.ttl_seconds)), ul.max_expires_at)
        WHERE ul.tenant = p_tenant AND ul.id = p_lease_id AND ul.ended_at IS NULL
        RETURNING * INTO l;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'lease_renew on lease %: it changed no row, though the lease allowed the change and its key was locked (rolled back)',
                p_lease_id USING ERRCODE = 'LK001';
        END IF;
        INSERT INTO lease_event (tenant, lease_id, lease_acquired_at, type, from_state, to_state, fencing_token, at,
                                 principal, request_id, trace_id, details)
        VALUES (p_tenant, l.id, l.acquired_at, 'RENEWED', 'active', 'active', l.fencing_token, l.renewed_at,
                p_owner, p_request_id, p_trace_id,
                jsonb_build_object('previousExpiresAt', rfc3339(previous), 'expiresAt', rfc3339(l.expires_at),
                                   'ttlSeconds', l.ttl_seconds));
        IF NOT FOUND THEN
            RAISE EXCEPTION 'lease_renew on lease %: it renewed the lease but wrote no event (rolled back)',
                p_lease_id USING ERRCODE = 'LK001';
        END IF;
        answer := 'renewed';
    END IF;
    RETURN lease_answer_of(answer, t, k, l, passed);
END
$$;

-- The owner's compare-and-delete: 'released' (the lease as it is now), 'unchanged' (the lease as it was: not the
-- caller's, another token, or no longer active), 'locked_path' (someone waits for or watches the key: nothing
-- changed) or 'not_found' (the tenant has no such lease).
CREATE FUNCTION lease_release(
    p_tenant text, p_lease_id uuid, p_owner text, p_fencing_token bigint, p_request_id text, p_trace_id text)
    RETURNS lease_answer
    LANGUAGE plpgsql VOLATILE
    AS $$
DECLARE
    k lease_key%ROWTYPE;
    l lease%ROWTYPE;
    t timestamptz;
    answer text := 'unchanged';
BEGIN
    SELECT lk.* INTO k FROM lease fl JOIN lease_key lk ON lk.tenant = p_tenant AND lk.id = fl.key_id
    WHERE fl.tenant = p_tenant AND fl.id = p_lease_id
    FOR NO KEY UPDATE OF lk;
    IF NOT FOUND THEN
        RETURN lease_answer_of('not_found', NULL, k, l, NULL);
    END IF;
    t := date_trunc('milliseconds', clock_timestamp());
    SELECT * INTO l FROM lease fl WHERE fl.tenant = p_tenant AND fl.id = p_lease_id;
    IF k.watched_until > t THEN
        answer := 'locked_path';
    ELSIF l.owner = p_owner AND l.fencing_token = p_fencing_token AND l.ended_at IS NULL AND l.expires_at > t THEN
        UPDATE lease ul SET state = 'released', ended_at = t, end_reason = 'released'
        WHERE ul.tenant = p_tenant AND ul.id = p_lease_id AND ul.ended_at IS NULL
        RETURNING * INTO l;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'lease_release on lease %: it changed no row, though the lease allowed the change and its key was locked (rolled back)',
                p_lease_id USING ERRCODE = 'LK001';
        END IF;
        INSERT INTO lease_event (tenant, lease_id, lease_acquired_at, type, from_state, to_state, fencing_token, at,
                                 principal, request_id, trace_id, details)
        VALUES (p_tenant, l.id, l.acquired_at, 'RELEASED', 'active', 'released', l.fencing_token, t,
                p_owner, p_request_id, p_trace_id, '{}');
        IF NOT FOUND THEN
            RAISE EXCEPTION 'lease_release on lease %: it released the lease but wrote no event (rolled back)',
                p_lease_id USING ERRCODE = 'LK001';
        END IF;
        answer := 'released';
    END IF;
    IF answer = 'locked_path' THEN
        l := NULL;
    END IF;
    RETURN lease_answer_of(answer, t, k, l, NULL);
END
$$;

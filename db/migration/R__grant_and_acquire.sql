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
-- with the lease. Every grant is this one: an acquire's (lease_acquire), and a waiting request's taking of a key
-- offered to its row (lease_hand_over).
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

-- The key k (its lease_key row, a record as in lease_grant) as it is at t: 'delayed' (its lock-delay runs), 'held' (an
-- unexpired active lease, in the answer), 'due' (an active lease past its TTL that no one has recorded as expired yet,
-- in the answer) or 'free'. The key's lease, if it has an active one, is its newest
-- (docs/decisions/tenant-statistics.md).
CREATE OR REPLACE FUNCTION lease_key_state(p_tenant text, k record, t timestamptz) RETURNS lease_answer
    LANGUAGE plpgsql STABLE -- it reads in the snapshot of its caller's statement, taken after the key's lock
    AS $$
DECLARE
    l lease%ROWTYPE;
BEGIN
    IF k.delayed_until > t THEN
        RETURN lease_answer_of('delayed', t, k, l, NULL); -- l not read: no lease in the answer
    END IF;
    SELECT * INTO l FROM lease nl WHERE nl.tenant = p_tenant AND nl.key_id = k.id
    ORDER BY nl.fencing_token DESC LIMIT 1;
    IF l.state = 'active' THEN
        RETURN lease_answer_of(CASE WHEN l.expires_at > t THEN 'held' ELSE 'due' END, t, k, l, NULL);
    END IF;
    l := NULL;
    RETURN lease_answer_of('free', t, k, l, NULL);
END
$$;

-- Every acquire, waiting or not, is one call of this function (the queue: docs/concepts/waiting.md). r.try says which
-- try it is: 'once' (an acquire that does not wait), 'first' (a waiting request's first: when the key is busy, its row
-- r.waiter joins the key's queue, lease_queue), 'again' (a queued request's later try) or 'last' (its try at the
-- deadline, after which its row leaves the queue unless it took the key). With the key's row locked (made first when
-- the key is new; a concurrent first acquire waits for the other's commit) and the time read after the lock:
--   * a lock-delay that runs: 'delayed';
--   * an unexpired active lease: 'held', with the lease;
--   * an active lease past its TTL, not yet recorded by the sweeper: its expiry is recorded now (lease_expire_locked,
--     by system:acquire, notifying the key's watchers), after which its lock-delay may run ('delayed');
--   * a free key someone waits for or watches goes to its queue first (lease_hand_over): 'granted' when the row it
--     goes to is r.waiter, else 'held' by the offer to another row (its owner and holder, until the offer ends; no
--     lease);
--   * else the key is granted (lease_grant), unless r.may_grant is false (the tenant is at its quota): 'over_quota',
--     nothing granted (and a new key's row not made; an expiry found due on the way is recorded all the same).
-- A waiting request's first try looks at the key without its lock first: a key busy and marked watched for as long as
-- the request may wait is answered busy with the row queued, and the try neither waits for the key's lock nor delays
-- the holder's transitions (whatever frees the key later holds its lock and sees the mark and the queue). A retry (the
-- same Idempotency-Key and fingerprint) takes over its first request's row, with its place and any offer of the key
-- to it, which it then takes; the same Idempotency-Key with a different request while that row waits is 'key_reused',
-- nothing written.
-- Answers the transition's answer, the waiting row this call offered the key to (the service wakes it once the call
-- has committed), and how many leases it recorded as expired.
CREATE OR REPLACE FUNCTION lease_acquire(p_tenant text, r lease_acquire_request, p_offer_seconds integer, p_channel text,
                                         p_watch_horizon integer)
    RETURNS lease_acquire_answer
    LANGUAGE plpgsql VOLATILE
    AS $$
DECLARE
    k lease_key%ROWTYPE;
    nothing lease%ROWTYPE;
    t timestamptz;
    answer lease_answer;
    handed lease_answer;
    offered uuid;
    expired integer := 0;
    queued text; -- what lease_queue answered, when this call queued the row
BEGIN
    IF r.try = 'first' THEN
        SELECT * INTO k FROM lease_key lk
        WHERE lk.tenant = p_tenant AND lk.program = r.program AND lk.target_type = r.target_type
          AND lk.target_value = r.target_value AND lk.actor = r.actor AND lk.operation IS NOT DISTINCT FROM r.operation;
        t := date_trunc('milliseconds', clock_timestamp());
        IF k.watched_until >= t + make_interval(secs => r.wait_seconds + 1) THEN
            answer := lease_key_state(p_tenant, k, t);
            IF answer.outcome IN ('held', 'delayed') THEN
                queued := lease_queue(p_tenant, r, k, t, p_watch_horizon);
                IF queued <> 'offered' THEN
                    RETURN ROW(CASE WHEN queued = 'key_reused' THEN lease_answer_of(queued, t, k, nothing, NULL)
                                    ELSE answer END, NULL, 0)::lease_acquire_answer;
                END IF;
                answer := NULL; -- the row taken over is offered the key: taken below, under the key's lock
            END IF;
        END IF;
    END IF;

    SELECT * INTO k FROM lease_key lk
    WHERE lk.tenant = p_tenant AND lk.program = r.program AND lk.target_type = r.target_type
      AND lk.target_value = r.target_value AND lk.actor = r.actor AND lk.operation IS NOT DISTINCT FROM r.operation
    FOR NO KEY UPDATE;
    IF NOT FOUND AND NOT r.may_grant THEN -- a new key is free, and this request may not be granted it: no row made
        RETURN ROW(lease_answer_of('over_quota', date_trunc('milliseconds', clock_timestamp()), k, nothing, NULL), NULL,
                   0)::lease_acquire_answer;
    ELSIF NOT FOUND THEN
        INSERT INTO lease_key (tenant, program, target_type, target_value, actor, operation)
        VALUES (p_tenant, r.program, r.target_type, r.target_value, r.actor, r.operation)
        ON CONFLICT DO NOTHING;
        SELECT * INTO k FROM lease_key lk
        WHERE lk.tenant = p_tenant AND lk.program = r.program AND lk.target_type = r.target_type
          AND lk.target_value = r.target_value AND lk.actor = r.actor AND lk.operation IS NOT DISTINCT FROM r.operation
        FOR NO KEY UPDATE;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'lease_acquire on key %/%: the key''s row was neither found nor made (rolled back)',
                p_tenant, r.program USING ERRCODE = 'LK001';
        END IF;
    END IF;
    t := date_trunc('milliseconds', clock_timestamp());
    answer := lease_key_state(p_tenant, k, t);
    IF answer.outcome = 'due' THEN
        expired := lease_expire_locked(p_tenant, ARRAY[answer.id], t, 'system:acquire', r.request_id,
                                       r.request_trace_id, p_channel);
        SELECT * INTO k FROM lease_key lk WHERE lk.tenant = p_tenant AND lk.id = k.id; -- its lock-delay, if any
        answer := CASE WHEN k.delayed_until > t THEN lease_answer_of('delayed', t, k, nothing, NULL) END;
    ELSIF answer.outcome = 'free' THEN
        answer := NULL;
    END IF;
    IF answer.outcome IS NULL AND (k.watched_until > t OR r.waiter IS NOT NULL) THEN
        answer := lease_offered_or_granted(lease_hand_over(p_tenant, k.id, r.waiter, p_offer_seconds, p_channel));
        IF answer.outcome = 'held' THEN
            offered := answer.id;
            answer.id := NULL;
        END IF;
    END IF;
    IF answer.outcome IS NULL THEN
        answer := CASE WHEN r.may_grant
                       THEN lease_grant(k, t, r.owner, r.holder, r.ttl_seconds, r.max_lifetime_seconds,
                                        r.lock_delay_seconds, r.job_id, r.trace_id, r.metadata, r.request_id,
                                        r.request_trace_id)
                       ELSE lease_answer_of('over_quota', t, k, nothing, NULL) END;
    ELSIF answer.outcome <> 'granted' AND r.try = 'first' AND queued IS NULL THEN
        queued := lease_queue(p_tenant, r, k, t, p_watch_horizon);
        IF queued = 'key_reused' THEN
            answer := lease_answer_of(queued, t, k, nothing, NULL);
        ELSIF queued = 'offered' THEN -- the row taken over is offered the key (its first request's): taken now
            handed := lease_hand_over(p_tenant, k.id, r.waiter, p_offer_seconds, p_channel);
            IF handed.outcome = 'granted' THEN
                answer := handed;
            END IF; -- else the key is held after all (the offer's mark lapsed and an acquire took it): still busy
        END IF;
    END IF;
    IF r.try = 'last' THEN -- the row, unless the key was handed to it
        PERFORM lease_waiter_delete(p_tenant, r.waiter, 'lease_acquire (last try)');
    END IF;
    RETURN ROW(answer, offered, expired)::lease_acquire_answer;
END
$$;

-- A hand-over's answer as an acquire's: 'granted' as it is; 'offered' (this call offered the key) and 'on_offer' (an
-- offer made before runs) both 'held' by the row the key is offered to, whose id stays in the answer's id only when
-- this call made the offer; 'none' (no one waits for the free key) null.
CREATE OR REPLACE FUNCTION lease_offered_or_granted(handed lease_answer) RETURNS lease_answer
    LANGUAGE plpgsql IMMUTABLE
    AS $$
BEGIN
    IF handed.outcome = 'none' THEN
        RETURN NULL;
    ELSIF handed.outcome IN ('offered', 'on_offer') THEN
        IF handed.outcome = 'on_offer' THEN
            handed.id := NULL;
        END IF;
        handed.outcome := 'held';
    END IF;
    RETURN handed;
END
$$;

DROP FUNCTION IF EXISTS lease_acquire(text, text, text, text, text, text, text, text, integer, integer, integer, text,
                                      text, jsonb, text, text);
DROP FUNCTION IF EXISTS lease_acquire_locked(text, bigint, text, text, integer, integer, integer, text, text, jsonb,
                                             text, text);

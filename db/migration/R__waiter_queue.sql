-- The waiter queue's hand-over (docs/concepts/waiting.md, "A free key is offered, and taken by the waiter itself").
--
-- The transaction that frees a key offers it to its queue: the row is marked offered_until and notified, the key
-- stays busy for everyone else, and the grant is made by the waiting request itself, in a transaction of its own,
-- after it has seen its client still there (a look at its connection, made after the offer). A request whose client
-- has gone declines: it leaves the queue, and the key is offered to the next row, or is free. An offer not taken in
-- time (its request's instance stopped) lapses; the key then goes on to the next row at the next try of any waiter.
--
-- With the key's row locked by the caller, at t (read here, after the lock): a free key (no active lease, no
-- lock-delay) goes to its queue, first to the row an offer runs for (one at a time), else to the row of lowest
-- position whose wait runs and that was not offered the key before (an offer that lapsed is not made again; that
-- row's request may still take the key itself while no other offer runs). When that row is p_taker's (the calling
-- waiting request's own), the key is granted to it (lease_grant, as the request asked) and the row leaves the queue;
-- else the key is offered to that row, for p_offer_seconds, and notified on p_channel (null: not at all) with the
-- payload keyId>rowId (FreedKeys).
-- Answers one row: 'granted' (the lease), 'offered' (this call offered the key), 'on_offer' (an offer made earlier
-- runs), both with the row's id, owner and holder as the lease's and the offer's end as its expiry, or 'none' (no
-- one waits for a free key; the key as it is).
CREATE OR REPLACE FUNCTION lease_hand_over(p_tenant text, p_key_id bigint, p_taker uuid, p_offer_seconds integer,
                                p_channel text)
    RETURNS lease_answer
    LANGUAGE plpgsql VOLATILE
    AS $$
DECLARE
    k lease_key%ROWTYPE;
    l lease%ROWTYPE;
    nothing lease%ROWTYPE;
    w lease_waiter%ROWTYPE;
    t timestamptz;
    answer text := 'on_offer';
BEGIN
    SELECT * INTO k FROM lease_key lk WHERE lk.tenant = p_tenant AND lk.id = p_key_id FOR NO KEY UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'lease_hand_over on key %: no such key, though the caller locked it (rolled back)',
            p_key_id USING ERRCODE = 'LK001';
    END IF;
    t := date_trunc('milliseconds', clock_timestamp());
    SELECT * INTO l FROM lease nl WHERE nl.tenant = p_tenant AND nl.key_id = k.id
    ORDER BY nl.fencing_token DESC LIMIT 1;
    IF l.state = 'active' OR k.delayed_until > t THEN
        RETURN lease_answer_of('none', t, k, nothing, NULL);
    END IF;
    -- A retry takes over its first request's row (a new id, its place kept) without the key's lock: the row is
    -- locked before it is granted or offered, and then read as the takeover left it.
    SELECT * INTO w FROM lease_waiter lw
    WHERE lw.tenant = p_tenant AND lw.key_id = k.id AND lw.lease_id IS NULL AND lw.wait_until > t
      AND lw.offered_until > t
    ORDER BY lw.position LIMIT 1
    FOR UPDATE;
    IF NOT FOUND THEN
        SELECT * INTO w FROM lease_waiter lw
        WHERE lw.tenant = p_tenant AND lw.key_id = k.id AND lw.lease_id IS NULL AND lw.wait_until > t
          AND (lw.offered_until IS NULL OR lw.id = p_taker)
        ORDER BY lw.position LIMIT 1
        FOR UPDATE;
        IF NOT FOUND THEN
            RETURN lease_answer_of('none', t, k, nothing, NULL);
        END IF;
        answer := 'offered';
    END IF;
    IF w.id = p_taker THEN
        DELETE FROM lease_waiter dw WHERE dw.tenant = p_tenant AND dw.id = w.id;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'lease_hand_over on key %: the taker''s row % was not deleted, though it was locked (rolled back)',
                k.id, w.id USING ERRCODE = 'LK001';
        END IF;
        RETURN lease_grant(k, t, w.owner, w.holder, w.ttl_seconds, w.max_lifetime_seconds, w.lock_delay_seconds,
                           w.job_id, w.trace_id, w.metadata, w.request_id, w.request_trace_id);
    END IF;
    IF answer = 'offered' THEN
        UPDATE lease_waiter ow SET offered_until = t + make_interval(secs => p_offer_seconds)
        WHERE ow.tenant = p_tenant AND ow.id = w.id
        RETURNING * INTO w;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'lease_hand_over on key %: the row % was not offered the key, though it was locked (rolled back)',
                k.id, w.id USING ERRCODE = 'LK001';
        END IF;
        IF p_channel IS NOT NULL THEN
            PERFORM pg_notify(p_channel, k.id || '>' || w.id);
        END IF;
    END IF;
    RETURN ROW(answer, t, k.id, NULL, NULL, w.id, w.owner, w.holder, NULL, NULL, NULL, NULL, w.offered_until,
               NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, k.tenant, k.program, k.target_type,
               k.target_value, k.actor, k.operation)::lease_answer;
END
$$;

-- A waiting acquire's row joins its key's queue (docs/concepts/waiting.md), with the key k (its lease_key row, found by
-- the caller, locked or looked at without its lock; a record, as lease_grant's, so that no function depends on the
-- table's row type, which partitioning the schema replaces) at t: written once, when its first try finds the key
-- busy; the row's wait ends with the request's (t + r.wait_seconds). A retry of the same request (Idempotency-Key and fingerprint) takes over the row
-- its first request left (that request failed, or its client gave up on it): the row gets the retry's id and wait, and
-- keeps its place, and the offer of the key to it when one runs (the retry then takes the key at once). The key is
-- marked watched (lease_key.watched_until), reaching p_watch_horizon seconds ahead, when the mark would not cover the
-- request's wait and a second: the transition that frees it then hands it over and notifies. Most waits find the mark
-- long enough and write nothing to the key.
-- Answers 'queued', 'offered' (the row taken over is offered the key) or 'key_reused' (the row of the request's
-- Idempotency-Key belongs to a different request, which waits: nothing written). A write swallowed raises LK001.
CREATE OR REPLACE FUNCTION lease_queue(p_tenant text, r lease_acquire_request, k record, t timestamptz,
                                       p_watch_horizon integer)
    RETURNS text
    LANGUAGE plpgsql VOLATILE
    AS $$
DECLARE
    w lease_waiter%ROWTYPE;
BEGIN
    INSERT INTO lease_waiter (id, key_id, wait_until, tenant, owner, holder, ttl_seconds, max_lifetime_seconds,
                              lock_delay_seconds, job_id, trace_id, metadata, request_id, request_trace_id,
                              idempotency_key, fingerprint)
    VALUES (r.waiter, k.id, t + make_interval(secs => r.wait_seconds), p_tenant, r.owner, r.holder, r.ttl_seconds,
            r.max_lifetime_seconds, r.lock_delay_seconds, r.job_id, r.trace_id, r.metadata, r.request_id,
            r.request_trace_id, r.idempotency_key, r.fingerprint)
    ON CONFLICT (tenant, owner, idempotency_key) WHERE idempotency_key IS NOT NULL
    DO UPDATE SET id = EXCLUDED.id, wait_until = EXCLUDED.wait_until
    WHERE lease_waiter.fingerprint = EXCLUDED.fingerprint
    RETURNING * INTO w;
    IF NOT FOUND THEN
        -- The tries of one Idempotency-Key run one after another, each holding its claim (IdempotencyStore).
        PERFORM FROM lease_waiter ow
        WHERE ow.tenant = p_tenant AND ow.owner = r.owner AND ow.idempotency_key = r.idempotency_key
          AND ow.fingerprint IS DISTINCT FROM r.fingerprint;
        IF FOUND THEN
            RETURN 'key_reused';
        END IF;
        RAISE EXCEPTION 'lease_queue on key %: it wrote no row for the waiting request % (rolled back)',
            k.id, r.waiter USING ERRCODE = 'LK001';
    END IF;
    IF k.watched_until IS NULL OR k.watched_until < t + make_interval(secs => r.wait_seconds + 1) THEN
        UPDATE lease_key mk SET watched_until = t + make_interval(secs => p_watch_horizon)
        WHERE mk.tenant = k.tenant AND mk.id = k.id;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'lease_queue on key %: the key was not marked watched (rolled back)',
                k.id USING ERRCODE = 'LK001';
        END IF;
    END IF;
    RETURN CASE WHEN w.offered_until > t THEN 'offered' ELSE 'queued' END;
END
$$;

-- A waiting acquire whose client has gone (or that failed) leaves its key's queue: with the key's row locked first (as
-- a hand-over takes the key's lock before a row's), its row is deleted, and the key, when it was offered to that row,
-- goes on to the next row or is free (lease_hand_over, notifying on p_channel). Nothing is done when the row is gone
-- (a retry took it over, under a new id). Returns the row the key was offered to (null: none), for the service to wake
-- once the call has committed.
CREATE OR REPLACE FUNCTION lease_leave_queue(p_tenant text, p_waiter uuid, p_offer_seconds integer, p_channel text)
    RETURNS uuid
    LANGUAGE plpgsql VOLATILE
    AS $$
DECLARE
    k lease_key%ROWTYPE;
    handed lease_answer;
BEGIN
    SELECT lk.* INTO k FROM lease_waiter lw JOIN lease_key lk ON lk.tenant = p_tenant AND lk.id = lw.key_id
    WHERE lw.tenant = p_tenant AND lw.id = p_waiter
    FOR NO KEY UPDATE OF lk;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    PERFORM lease_waiter_delete(p_tenant, p_waiter, 'lease_leave_queue');
    handed := lease_hand_over(p_tenant, k.id, NULL, p_offer_seconds, p_channel);
    RETURN CASE WHEN handed.outcome = 'offered' THEN handed.id END;
END
$$;

-- Deletes the waiting row p_waiter when it is still there (a retry may have taken it over under a new id), locked
-- first: a row found and not deleted is a write swallowed, which raises LK001 naming p_caller.
CREATE OR REPLACE FUNCTION lease_waiter_delete(p_tenant text, p_waiter uuid, p_caller text) RETURNS void
    LANGUAGE plpgsql VOLATILE
    AS $$
BEGIN
    PERFORM FROM lease_waiter lw WHERE lw.tenant = p_tenant AND lw.id = p_waiter FOR UPDATE;
    IF FOUND THEN
        DELETE FROM lease_waiter dw WHERE dw.tenant = p_tenant AND dw.id = p_waiter;
        IF NOT FOUND THEN
            RAISE EXCEPTION '% on waiting row %: it was found but not deleted (rolled back)',
                p_caller, p_waiter USING ERRCODE = 'LK001';
        END IF;
    END IF;
END
$$;

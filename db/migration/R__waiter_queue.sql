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

-- The owner's renew, and the end of a lease by its owner (release) or an admin (revoke), each one call under the
-- locking rule, as the acquire (R__grant_and_acquire.sql).

-- The renew r of a lease of tenant p_tenant (one lease_renew_request row, so that a batch of renewals can be an array
-- of them): 'renewed' (the lease with its new expiry; beat: how much of its TTL had passed since its previous renew
-- or its grant), 'unchanged' (the lease as it was: not the caller's, another token, or no longer active) or
-- 'not_found' (the tenant has no such lease). r.ttl_seconds NULL keeps the lease's TTL.
DROP FUNCTION IF EXISTS lease_renew(text, uuid, text, bigint, integer, text, text);
CREATE OR REPLACE FUNCTION lease_renew(p_tenant text, r lease_renew_request)
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
    WHERE fl.tenant = p_tenant AND fl.id = r.lease_id
    FOR NO KEY UPDATE OF lk;
    IF NOT FOUND THEN
        RETURN lease_answer_of('not_found', NULL, k, l, NULL);
    END IF;
    t := date_trunc('milliseconds', clock_timestamp());
    SELECT * INTO l FROM lease fl WHERE fl.tenant = p_tenant AND fl.id = r.lease_id;
    IF l.owner = r.owner AND l.fencing_token = r.fencing_token AND l.ended_at IS NULL AND l.expires_at > t THEN
        previous := l.expires_at;
        passed := extract(epoch FROM t - coalesce(l.renewed_at, l.acquired_at)) / l.ttl_seconds;
        UPDATE lease ul
        SET renewed_at = t,
            ttl_seconds = coalesce(r.ttl_seconds, ul.ttl_seconds),
            expires_at = LEAST(t + make_interval(secs => coalesce(r.ttl_seconds, ul.ttl_seconds)), ul.max_expires_at)
        WHERE ul.tenant = p_tenant AND ul.id = r.lease_id AND ul.ended_at IS NULL
        RETURNING * INTO l;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'lease_renew on lease %: it changed no row, though the lease allowed the change and its key was locked (rolled back)',
                r.lease_id USING ERRCODE = 'LK001';
        END IF;
        INSERT INTO lease_event (tenant, lease_id, lease_acquired_at, type, from_state, to_state, fencing_token, at,
                                 principal, request_id, trace_id, details)
        VALUES (p_tenant, l.id, l.acquired_at, 'RENEWED', 'active', 'active', l.fencing_token, l.renewed_at,
                r.owner, r.request_id, r.trace_id,
                jsonb_build_object('previousExpiresAt', rfc3339(previous), 'expiresAt', rfc3339(l.expires_at),
                                   'ttlSeconds', l.ttl_seconds));
        IF NOT FOUND THEN
            RAISE EXCEPTION 'lease_renew on lease %: it renewed the lease but wrote no event (rolled back)',
                r.lease_id USING ERRCODE = 'LK001';
        END IF;
        answer := 'renewed';
    END IF;
    RETURN lease_answer_of(answer, t, k, l, passed);
END
$$;

-- Ends an active lease of the tenant as r asks (one lease_end_request row, so that a batch can be an array of them):
-- 'released' by its owner with its own fencing token (compare-and-delete), or
-- 'revoked' by an admin, whoever holds it, with the reason; its event is written, and a revoke starts the key's
-- lock-delay when the lease has one. A key someone waits for or watches is then handed to its queue
-- (lease_hand_over: offered to the longest-waiting request, whose id is returned as offered for the service to wake
-- once this call has committed), or, when no one queues or the lock-delay holds it, its waiters are notified on
-- p_channel (NULL: not at all). answer: the lease ended, or 'unchanged' with the lease as it was (not the owner's,
-- another token, or no longer active: the caller tells which), or 'not_found' (the tenant has no such lease).
-- lease_end replaces lease_release, which no release of the service ever called (so it goes without a release that
-- keeps both, the rule from the first release on: docs/decisions/functions-live-in-repeatable-migrations.md).
DROP FUNCTION IF EXISTS lease_release(text, uuid, text, bigint, text, text);
DROP FUNCTION IF EXISTS lease_end(text, uuid, text, text, bigint, text, text, text, integer, text);
CREATE OR REPLACE FUNCTION lease_end(p_tenant text, r lease_end_request, p_offer_seconds integer, p_channel text)
    RETURNS lease_end_answer
    LANGUAGE plpgsql VOLATILE
    AS $$
DECLARE
    result lease_end_answer;
    k lease_key%ROWTYPE;
    l lease%ROWTYPE;
    handed lease_answer;
    t timestamptz;
    outcome text := 'unchanged';
BEGIN
    IF r.state NOT IN ('released', 'revoked') THEN
        RAISE EXCEPTION 'lease_end on lease %: % is not an end', r.lease_id, r.state;
    END IF;
    SELECT lk.* INTO k FROM lease fl JOIN lease_key lk ON lk.tenant = p_tenant AND lk.id = fl.key_id
    WHERE fl.tenant = p_tenant AND fl.id = r.lease_id
    FOR NO KEY UPDATE OF lk;
    IF NOT FOUND THEN
        result.answer := lease_answer_of('not_found', NULL, k, l, NULL);
        RETURN result;
    END IF;
    t := date_trunc('milliseconds', clock_timestamp());
    SELECT * INTO l FROM lease fl WHERE fl.tenant = p_tenant AND fl.id = r.lease_id;
    IF l.ended_at IS NULL AND l.expires_at > t
       AND (r.state = 'revoked' OR (l.owner = r.principal AND l.fencing_token = r.fencing_token)) THEN
        UPDATE lease ul SET state = r.state, ended_at = t, end_reason = r.reason
        WHERE ul.tenant = p_tenant AND ul.id = r.lease_id AND ul.ended_at IS NULL
        RETURNING * INTO l;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'lease_end on lease %: it changed no row, though the lease allowed the change and its key was locked (rolled back)',
                r.lease_id USING ERRCODE = 'LK001';
        END IF;
        INSERT INTO lease_event (tenant, lease_id, lease_acquired_at, type, from_state, to_state, fencing_token, at,
                                 principal, request_id, trace_id, details)
        VALUES (p_tenant, l.id, l.acquired_at, upper(r.state), 'active', r.state, l.fencing_token, t,
                r.principal, r.request_id, r.trace_id,
                CASE WHEN r.state = 'revoked' THEN jsonb_build_object('reason', r.reason) ELSE '{}' END);
        IF NOT FOUND THEN
            RAISE EXCEPTION 'lease_end on lease %: it ended the lease but wrote no event (rolled back)',
                r.lease_id USING ERRCODE = 'LK001';
        END IF;
        IF r.state = 'revoked' AND l.lock_delay_seconds > 0 THEN
            UPDATE lease_key dk SET delayed_until = t + make_interval(secs => l.lock_delay_seconds)
            WHERE dk.tenant = p_tenant AND dk.id = k.id;
            IF NOT FOUND THEN
                RAISE EXCEPTION 'lease_end on lease %: it revoked the lease but wrote no lock-delay (rolled back)',
                    r.lease_id USING ERRCODE = 'LK001';
            END IF;
        END IF;
        outcome := r.state;
        IF k.watched_until > t THEN
            -- lease_hand_over offers no key in its lock-delay: after a revoke that starts one, the waiters are told
            -- and try when it ends.
            handed := lease_hand_over(p_tenant, k.id, NULL, p_offer_seconds, p_channel);
            IF handed.outcome = 'offered' THEN
                result.offered := handed.id;
            ELSIF handed.outcome = 'none' AND p_channel IS NOT NULL THEN
                PERFORM pg_notify(p_channel, k.id::text);
            END IF;
        END IF;
    END IF;
    result.answer := lease_answer_of(outcome, t, k, l, NULL);
    RETURN result;
END
$$;

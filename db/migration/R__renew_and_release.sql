-- The owner's renew and release, each one call under the locking rule, as the acquire (R__grant_and_acquire.sql).
-- (A revoke is made by the service's locking path, LeaseOperations.)

-- 'renewed' (the lease with its new expiry; beat: how much of its TTL had passed since its previous renew or its
-- grant), 'unchanged' (the lease as it was: not the caller's, another token, or no longer active) or 'not_found'
-- (the tenant has no such lease). ttl NULL keeps the lease's TTL.
CREATE OR REPLACE FUNCTION lease_renew(
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
-- changed; the service's locking path releases it and hands the key over) or 'not_found' (the tenant has no such
-- lease).
CREATE OR REPLACE FUNCTION lease_release(
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

-- An audit write never fails for a missing partition (issue 32). The retention job makes lease_event's partitions
-- ahead of the clock (EventPartitions, every cleanup interval), but a job that has not run for longer than the
-- partitions reach (an outage of the database or of every instance longer than that, a stopped schedule) left the
-- next grant without a partition for its ACQUIRED event: PostgreSQL refused the insert, and the client got a 500.
-- Now the partitions are made by one function, called by the job ahead of time and by a grant when its time is past
-- the partitions (rare: one grant in a lifetime of the job's lag, and it takes the job's lock), so whatever the
-- job's state, the event has a partition to go to. Only a grant can meet the edge: every later event of a lease
-- goes to the partition of its acquisition, which its grant made sure of and which retention keeps while the lease
-- is active.
--
-- lease_event_horizon: the upper bound of the newest partition (exclusive), and the width of the partitions to
-- make, as the job last set it (leasekeeper.audit.partition-width). One row, read by each grant.
CREATE TABLE lease_event_horizon (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    upper    timestamptz NOT NULL,
    width    interval NOT NULL CHECK (width > interval '0')
);

INSERT INTO lease_event_horizon (upper, width)
SELECT max(CAST(substring(pg_get_expr(c.relpartbound, c.oid) FROM 'TO \(''(.*)''\)') AS timestamptz)), interval '1 day'
FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
WHERE i.inhparent = CAST('lease_event' AS regclass);

-- Makes partitions of lease_event, contiguous from the newest, until they reach past p_until: each holds the
-- events of the leases acquired in one width (p_width, or the last one set when null), aligned to whole widths
-- since the epoch, and is named after its lower bound in UTC. Attaching a new table locks lease_event only against
-- other schema changes (SHARE UPDATE EXCLUSIVE), so inserts go on meanwhile. Under the job's advisory lock
-- (EventPartitions.LOCK) and the horizon's row lock: two callers never make the same partition. Returns how many
-- it made.
CREATE FUNCTION lease_event_partitions_until(p_until timestamptz, p_width interval) RETURNS integer
    LANGUAGE plpgsql VOLATILE
    AS $$
DECLARE
    h lease_event_horizon%ROWTYPE;
    width_ms numeric;
    lower_bound timestamptz;
    upper_bound timestamptz;
    name text;
    made integer := 0;
BEGIN
    PERFORM pg_advisory_xact_lock(131632889415);
    SELECT * INTO h FROM lease_event_horizon FOR UPDATE;
    IF p_width IS NOT NULL AND p_width <> h.width THEN
        UPDATE lease_event_horizon SET width = p_width;
        h.width := p_width;
    END IF;
    width_ms := extract(epoch FROM h.width) * 1000;
    lower_bound := h.upper;
    WHILE lower_bound <= p_until LOOP
        upper_bound := to_timestamp((floor(extract(epoch FROM lower_bound) * 1000 / width_ms) + 1) * width_ms / 1000);
        name := 'lease_event_' || to_char(lower_bound AT TIME ZONE 'UTC', 'YYYYMMDD_HH24MISS_MS');
        EXECUTE format('CREATE TABLE %I (LIKE lease_event INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', name);
        EXECUTE format('ALTER TABLE lease_event ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)',
                       name, lower_bound, upper_bound);
        lower_bound := upper_bound;
        made := made + 1;
    END LOOP;
    IF made > 0 THEN
        UPDATE lease_event_horizon SET upper = lower_bound;
    END IF;
    RETURN made;
END
$$;

-- As in V13, and before its event: a grant whose time is past the partitions makes the one it needs.
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

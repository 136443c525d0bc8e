-- The audit log's functions: its append-only rule, and the partitions it is written to.

-- The audit log is append-only, without exception: retention drops whole partitions and deletes no event. (TRUNCATE
-- stays an operator's tool and is not guarded.) The trigger is made here with its function, so that the rule reads
-- whole in one place; CREATE OR REPLACE TRIGGER makes this file safe to apply again.
CREATE OR REPLACE FUNCTION lease_event_append_only() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    RAISE EXCEPTION 'lease_event is append-only (% refused)', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END
$$;

CREATE OR REPLACE TRIGGER lease_event_append_only
    BEFORE UPDATE OR DELETE ON lease_event
    FOR EACH ROW EXECUTE FUNCTION lease_event_append_only();

-- An audit write never fails for a missing partition. The retention job makes lease_event's partitions ahead of the
-- clock (EventPartitions, every cleanup interval), and a grant whose time is past the partitions makes the one it
-- needs (lease_grant; rare: one grant in a lifetime of the job's lag, and it takes the job's lock), so whatever the
-- job's state, the event has a partition to go to. Only a grant can meet the edge: every later event of a lease goes
-- to the partition of its acquisition, which its grant made sure of and which retention keeps while the lease is
-- active.
--
-- Makes partitions of lease_event, contiguous from the newest, until they reach past p_until: each holds the events
-- of the leases acquired in one width (p_width, or the last one set when null), aligned to whole widths since the
-- epoch, and is named after its lower bound in UTC. Attaching a new table locks lease_event only against other
-- schema changes (SHARE UPDATE EXCLUSIVE), so inserts go on meanwhile. Under the job's advisory lock
-- (EventPartitions.LOCK) and the horizon's row lock (lease_event_horizon): two callers never make the same
-- partition. Returns how many it made.
CREATE OR REPLACE FUNCTION lease_event_partitions_until(p_until timestamptz, p_width interval) RETURNS integer
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

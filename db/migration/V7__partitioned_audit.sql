-- Retention that keeps up at any event rate: lease_event partitioned by the acquisition time of its lease.
--
-- Every event carries its lease's acquired_at (lease_acquired_at), the partition key, so a lease's whole story
-- lies in one partition: a page of its history reads one partition, and retention retires whole stories by
-- dropping whole partitions, never by deleting events one by one (EventPartitions). The partition of the leases
-- acquired in [a, b) is dropped once b + lease.max-lifetime-cap + audit.retention has passed (every lease in it
-- has then been over for at least the retention) and no lease acquired before b is still active.
-- The service makes partitions ahead, at start and at every cleanup interval; this migration makes the first
-- one, for the leases acquired before it ran, and moves the existing events into it.
--
-- The per-lease invariants keep their unique indexes: they include the partition key, which has one value
-- per lease. The foreign key from lease_event to lease goes, as does the one from idempotency_record: lease
-- rows are retired by the same rule as their events (EndedLeases), and each foreign key would make every
-- lease deleted probe the referencing table (every partition of lease_event; idempotency_record, unindexed
-- on lease_id) for rows that the retention rules have removed long before.
CREATE TABLE lease_event_partitioned (
    id                bigint GENERATED ALWAYS AS IDENTITY,
    lease_id          uuid NOT NULL,
    lease_acquired_at timestamptz(3) NOT NULL,   -- the lease's acquired_at: the partition key
    type              text NOT NULL,
    from_state        text,
    to_state          text NOT NULL,
    fencing_token     bigint NOT NULL,
    at                timestamptz(3) NOT NULL,
    principal         text NOT NULL,
    request_id        text,
    trace_id          text,
    details           jsonb NOT NULL DEFAULT '{}',
    CONSTRAINT lease_event_type CHECK (type IN ('ACQUIRED', 'RENEWED', 'RELEASED', 'EXPIRED', 'REVOKED'))
) PARTITION BY RANGE (lease_acquired_at);

CREATE TABLE lease_event_before_v7 PARTITION OF lease_event_partitioned
    FOR VALUES FROM (MINVALUE) TO (date_trunc('milliseconds', statement_timestamp()) + interval '1 millisecond');

INSERT INTO lease_event_partitioned (id, lease_id, lease_acquired_at, type, from_state, to_state, fencing_token,
                                     at, principal, request_id, trace_id, details)
OVERRIDING SYSTEM VALUE
SELECT e.id, e.lease_id, l.acquired_at, e.type, e.from_state, e.to_state, e.fencing_token,
       e.at, e.principal, e.request_id, e.trace_id, e.details
FROM lease_event e JOIN lease l ON l.id = e.lease_id;

DROP TABLE lease_event;
ALTER TABLE lease_event_partitioned RENAME TO lease_event;
ALTER SEQUENCE lease_event_partitioned_id_seq RENAME TO lease_event_id_seq;
SELECT setval('lease_event_id_seq', coalesce(max(id), 0) + 1, false) FROM lease_event;

-- A lease's history in event order (and the table's primary key: the event id with the partition key).
ALTER TABLE lease_event ADD CONSTRAINT lease_event_pkey PRIMARY KEY (lease_id, id, lease_acquired_at);
CREATE UNIQUE INDEX lease_event_one_acquired ON lease_event (lease_id, lease_acquired_at) WHERE type = 'ACQUIRED';
CREATE UNIQUE INDEX lease_event_one_end ON lease_event (lease_id, lease_acquired_at)
    WHERE type IN ('RELEASED', 'EXPIRED', 'REVOKED');

-- Append-only, now without exception: retention drops whole partitions and deletes no event.
CREATE OR REPLACE FUNCTION lease_event_append_only() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    RAISE EXCEPTION 'lease_event is append-only (% refused)', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END
$$;

CREATE TRIGGER lease_event_append_only
    BEFORE UPDATE OR DELETE ON lease_event
    FOR EACH ROW EXECUTE FUNCTION lease_event_append_only();

ALTER TABLE idempotency_record DROP CONSTRAINT idempotency_record_lease_id_fkey;

-- The retention of ended leases (EndedLeases): oldest acquisitions first. Active leases are not in it, so
-- a renew writes nothing to it.
CREATE INDEX lease_ended_by_acquisition ON lease (acquired_at) WHERE state <> 'active';

-- The Leasekeeper schema: its tables, keys, indexes, checks, its one sequence, the first partition of the audit and
-- the type every transition answers. The functions are in the repeatable migrations (R__*.sql), one file per
-- subject, which Flyway applies after this one and again whenever one of them changes; lease_now() alone is here,
-- because a column's default calls it (docs/decisions/functions-live-in-repeatable-migrations.md).
--
-- Invariants the database itself guarantees:
--   * one lease_key row per normalized key (lease_key_natural);
--   * at most one lease in state 'active' per key (lease_one_active_per_key);
--   * a lease's tenant is its key's tenant (lease_key_of_its_tenant), and a terminal lease is final (the trigger
--     lease_terminal_is_final, R__lease_rules.sql);
--   * fencing tokens are exact in every JSON parser (lease_fencing_token_exact), and a key's tokens only grow
--     (next_fencing_token, R__clock_and_tokens.sql);
--   * each lease has at most one ACQUIRED event (the granting transaction writes it, so exactly one) and at most
--     one terminal event (RELEASED, EXPIRED, REVOKED); the audit is append-only (R__audit.sql).
-- The rule the code keeps: every write to the leases of a key happens while holding that key's lease_key row lock
-- (SELECT ... FOR NO KEY UPDATE), so acquire, renew, release, revoke and the sweeper are serialized per key
-- (docs/concepts/locking.md).
--
-- Ready to shard by tenant (docs/guides/scale-out.md): every table's primary key and foreign keys lead with the
-- tenant, so that each table can be partitioned, or distributed across nodes, by tenant, with every lease statement
-- reaching one tenant's rows. A key's id stays unique by itself (one identity), so notifications name keys by id
-- alone.

-- The one clock of the service: PostgreSQL's, at the start of the current statement, in whole milliseconds (the
-- precision of every stored instant and of the API). Statements that decide expiry run after the key's row lock is
-- held, so the time they read is a time at which nobody else can change the key.
CREATE FUNCTION lease_now() RETURNS timestamptz
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT date_trunc('milliseconds', statement_timestamp()) $$;

-- The source of fencing tokens, raised to the clock's floor by next_fencing_token (docs/concepts/fencing.md). CACHE
-- 1: the tokens are handed out in order.
CREATE SEQUENCE fencing_token_seq AS bigint START WITH 1 INCREMENT BY 1 CACHE 1 NO CYCLE;

CREATE TABLE lease_key (
    id            bigint GENERATED ALWAYS AS IDENTITY,
    tenant        text NOT NULL,
    program       text NOT NULL,
    target_type   text NOT NULL,
    target_value  text NOT NULL,
    actor         text NOT NULL,
    operation     text,            -- NULL: no operation class, a different key from any operation
    created_at    timestamptz(3) NOT NULL DEFAULT now(),
    -- The end of the key's lock-delay, written (under the key's row lock) by the transition that ends a lease with a
    -- lock-delay involuntarily; an acquire before it answers LOCK_DELAYED.
    delayed_until timestamptz(3),
    -- Until when some request waits for the key (a waiting acquire that found it busy, a watch of one of its
    -- leases). A transition that frees a watched key sends a notification on the channel leasekeeper_key_freed
    -- (payload: key ids, comma-separated); an unwatched key sends none, so leases nobody waits for never pay for
    -- notifications.
    watched_until timestamptz(3),
    CONSTRAINT lease_key_pkey PRIMARY KEY (tenant, id),
    CONSTRAINT lease_key_natural
        UNIQUE NULLS NOT DISTINCT (tenant, program, target_type, target_value, actor, operation)
);

-- Serves the list filter on actor alone; the natural key serves program and target filters.
CREATE INDEX lease_key_by_actor ON lease_key (tenant, actor);

CREATE TABLE lease (
    id                   uuid NOT NULL,
    key_id               bigint NOT NULL,
    tenant               text NOT NULL,   -- copied from the key: every lookup is confined to a tenant
    owner                text NOT NULL,
    holder               text NOT NULL,
    fencing_token        bigint NOT NULL,
    state                text NOT NULL,
    acquired_at          timestamptz(3) NOT NULL,
    renewed_at           timestamptz(3),
    expires_at           timestamptz(3) NOT NULL,
    max_expires_at       timestamptz(3) NOT NULL,
    ended_at             timestamptz(3),
    end_reason           text,
    ttl_seconds          integer NOT NULL,
    max_lifetime_seconds integer NOT NULL,
    job_id               text,
    trace_id             text,
    metadata             jsonb NOT NULL DEFAULT '{}',
    -- When the lease ends involuntarily (expired or revoked), its key cannot be acquired for that long after the
    -- end; a release frees the key at once.
    lock_delay_seconds   integer NOT NULL DEFAULT 0
        CONSTRAINT lease_lock_delay_range CHECK (lock_delay_seconds BETWEEN 0 AND 60),
    CONSTRAINT lease_state CHECK (state IN ('active', 'expired', 'released', 'revoked')),
    CONSTRAINT lease_ended_iff_not_active CHECK ((state = 'active') = (ended_at IS NULL)),
    CONSTRAINT lease_expiry_within_lifetime CHECK (expires_at <= max_expires_at),
    -- Tokens stay below 2^53, exact in every JSON parser: the clock's floor reaches it in the year 2242. Tokens of
    -- different keys are not comparable and may, rarely, be equal (two grants raising the sequence in the same
    -- second), so they are not unique; pages of the list are ordered by (fencing_token, id).
    CONSTRAINT lease_fencing_token_exact CHECK (fencing_token > 0 AND fencing_token < 9007199254740992),
    CONSTRAINT lease_pkey PRIMARY KEY (tenant, id),
    CONSTRAINT lease_key_of_its_tenant FOREIGN KEY (tenant, key_id) REFERENCES lease_key (tenant, id)
);

CREATE UNIQUE INDEX lease_one_active_per_key ON lease (tenant, key_id) WHERE state = 'active';
-- The sweeper's scan for due leases, a tenant at a time (LeaseSweeper).
CREATE INDEX lease_due ON lease (tenant, expires_at) WHERE state = 'active';
-- Keyset pagination of the list (newest token first) with its filters.
CREATE INDEX lease_list ON lease (tenant, fencing_token DESC);
CREATE INDEX lease_list_active ON lease (tenant, fencing_token DESC) WHERE state = 'active';
-- A key's leases, newest token first: the list by key, and a grant's probe for the key's last token.
CREATE INDEX lease_list_by_key ON lease (tenant, key_id, fencing_token DESC);
CREATE INDEX lease_list_by_owner ON lease (tenant, owner, fencing_token DESC);
CREATE INDEX lease_list_by_holder ON lease (tenant, holder, fencing_token DESC);
-- The retention of ended leases (EndedLeases): oldest acquisitions first. Active leases are not in it, so a renew
-- writes nothing to it.
CREATE INDEX lease_ended_by_acquisition ON lease (acquired_at) WHERE state <> 'active';

-- The tenant columns keep their statistics. Without them a tenant is estimated at 1/200 of the table whatever its
-- size: the sweeper's batch, thinking a large tenant's due leases few, hashed all of them for each batch, and a list
-- of a large tenant was planned as if the tenant were small. With statistics, a tenant that grew since the last
-- ANALYZE is estimated at almost no rows until the next one, and a lookup of one of its leases by (tenant, id) may
-- then scan the tenant's rows through another tenant-led index (LeasePlansTest). So the two tables a new tenant
-- grows fastest are analyzed after every 10,000 changed rows rather than after 10% of the table: the window of a
-- stale estimate is bounded by that and by autovacuum's naptime (docs/decisions/tenant-statistics.md).
ALTER TABLE lease SET (autovacuum_analyze_scale_factor = 0, autovacuum_analyze_threshold = 10000);
ALTER TABLE lease_key SET (autovacuum_analyze_scale_factor = 0, autovacuum_analyze_threshold = 10000);

-- The queue of waiting acquires, in the database (docs/concepts/waiting.md).
--
-- A waiting acquire that finds its key busy writes a row here, once. The transaction that frees the key offers it
-- to the key's row an offer runs for, else to its row of lowest position whose wait has not run out and that was
-- not offered the key before (lease_hand_over, R__waiter_queue.sql); the waiting request takes the offer in a
-- transaction of its own, after it has seen its client still there, and its row leaves the queue. So the key
-- passes from holder to waiter in arrival order across instances. The row carries what the acquire asked, to make
-- the lease and its ACQUIRED event as the request would have. The waiting request deletes its row when it answers
-- (in the transaction that records its Idempotency-Key, when it sent one); rows of requests that never answered
-- (their instance died) are skipped once wait_until passes and deleted by the sweeper.
CREATE TABLE lease_waiter (
    id                   uuid NOT NULL,
    key_id               bigint NOT NULL,
    position             bigint GENERATED ALWAYS AS IDENTITY,
    wait_until           timestamptz(3) NOT NULL,
    tenant               text NOT NULL,
    owner                text NOT NULL,
    holder               text NOT NULL,
    ttl_seconds          integer NOT NULL,
    max_lifetime_seconds integer NOT NULL,
    lock_delay_seconds   integer NOT NULL,
    job_id               text,
    trace_id             text,            -- the lease's trace
    metadata             jsonb NOT NULL,
    request_id           text,            -- the waiting request's, for the ACQUIRED event
    request_trace_id     text,
    idempotency_key      text,            -- the request's Idempotency-Key and fingerprint, when it sent one:
    fingerprint          text,            -- a retry after a lost answer adopts the lease granted to the row
    lease_id             uuid,            -- never written: a hand-over offers the key, the waiter grants it itself
    offered_until        timestamptz(3),  -- the end of the offer of the key to this row; NULL until it is offered
    CONSTRAINT lease_waiter_pkey PRIMARY KEY (tenant, id),
    CONSTRAINT lease_waiter_key_of_its_tenant FOREIGN KEY (tenant, key_id) REFERENCES lease_key (tenant, id)
);

-- The hand-over's pick: a key's waiting rows in arrival order.
CREATE INDEX lease_waiter_queue ON lease_waiter (tenant, key_id, position) WHERE lease_id IS NULL;
-- One row per logical request: a retry of a waiting acquire (the same Idempotency-Key) takes over its first
-- request's row (and its place in the queue) instead of queueing a second one, so that one key is never handed to
-- one request twice; it also finds there a grant its first request did not answer.
CREATE UNIQUE INDEX lease_waiter_one_per_request ON lease_waiter (tenant, owner, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
-- The sweeper's cleanup of rows whose request never answered.
CREATE INDEX lease_waiter_by_age ON lease_waiter (wait_until);

-- The audit log, partitioned by the acquisition time of its lease, so that retention keeps up at any event rate.
--
-- Every event carries its lease's acquired_at (lease_acquired_at), the partition key, so a lease's whole story lies
-- in one partition: a page of its history reads one partition, and retention retires whole stories by dropping
-- whole partitions, never by deleting events one by one (EventPartitions). The partition of the leases acquired in
-- [a, b) is dropped once b + lease.max-lifetime-cap + audit.retention has passed (every lease in it has then been
-- over for at least the retention) and no lease acquired before b is still active. The partitions are made ahead
-- by lease_event_partitions_until (R__audit.sql).
--
-- The per-lease invariants are unique indexes that include the partition key, which has one value per lease. No
-- foreign key leads from lease_event (or idempotency_record) to lease: lease rows are retired by the same rule as
-- their events (EndedLeases), and each foreign key would make every lease deleted probe the referencing table
-- (every partition of lease_event; idempotency_record, unindexed on lease_id) for rows that the retention rules
-- have removed long before (docs/decisions/no-foreign-keys-into-lease.md).
CREATE TABLE lease_event (
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
    tenant            text NOT NULL,             -- its lease's tenant
    CONSTRAINT lease_event_type CHECK (type IN ('ACQUIRED', 'RENEWED', 'RELEASED', 'EXPIRED', 'REVOKED')),
    -- A lease's history in event order.
    CONSTRAINT lease_event_pkey PRIMARY KEY (tenant, lease_id, id, lease_acquired_at)
) PARTITION BY RANGE (lease_acquired_at);

CREATE UNIQUE INDEX lease_event_one_acquired ON lease_event (tenant, lease_id, lease_acquired_at) WHERE type = 'ACQUIRED';
CREATE UNIQUE INDEX lease_event_one_end ON lease_event (tenant, lease_id, lease_acquired_at)
    WHERE type IN ('RELEASED', 'EXPIRED', 'REVOKED');

-- The first partition: the leases acquired before the schema was made, none. The horizon starts where it ends.
CREATE TABLE lease_event_first PARTITION OF lease_event
    FOR VALUES FROM (MINVALUE) TO (date_trunc('milliseconds', statement_timestamp()) + interval '1 millisecond');

-- The upper bound of the newest partition of lease_event (exclusive), and the width of the partitions to make, as
-- the retention job last set it (leasekeeper.audit.partition-width). One row, read by each grant: a grant whose time
-- is past the partitions makes the one it needs (docs/decisions/a-grant-makes-the-partition-it-needs.md).
CREATE TABLE lease_event_horizon (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    upper    timestamptz NOT NULL,
    width    interval NOT NULL CHECK (width > interval '0')
);

INSERT INTO lease_event_horizon (upper, width)
SELECT max(CAST(substring(pg_get_expr(c.relpartbound, c.oid) FROM 'TO \(''(.*)''\)') AS timestamptz)), interval '1 day'
FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
WHERE i.inhparent = CAST('lease_event' AS regclass);

-- Idempotent retries (Idempotency-Key header). One row per (tenant, subject, key): claimed at the start of the
-- operation's transaction and completed in it, so a row exists only for a committed success. A concurrent identical
-- request blocks on the primary key until the first commits, then replays it.
CREATE TABLE idempotency_record (
    tenant          text NOT NULL,
    subject         text NOT NULL,
    idempotency_key text NOT NULL,
    fingerprint     text NOT NULL,          -- SHA-256 of method, path and body
    status          integer,                -- the original success status; NULL only inside the claiming transaction
    lease_id        uuid,
    created_at      timestamptz(3) NOT NULL DEFAULT lease_now(),
    PRIMARY KEY (tenant, subject, idempotency_key)
);

-- The retention job's scan.
CREATE INDEX idempotency_record_by_age ON idempotency_record (created_at);

-- What every transition function answers, one row: the outcome, the time of the decision, the key's id and
-- lock-delay, the renewal's beat, and the lease (as it is after the transition, or as it was when nothing changed;
-- null fields when there is none), its columns named as the service reads a lease, then the key's.
CREATE TYPE lease_answer AS (
    outcome text, now timestamptz, key_id bigint, delayed_until timestamptz, beat double precision,
    id uuid, owner text, holder text, fencing_token bigint, state text, acquired_at timestamptz,
    renewed_at timestamptz, expires_at timestamptz, max_expires_at timestamptz, ended_at timestamptz,
    end_reason text, ttl_seconds integer, max_lifetime_seconds integer, lock_delay_seconds integer, job_id text,
    trace_id text, metadata jsonb, tenant text, program text, target_type text, target_value text, actor text,
    operation text);

-- What ending a lease answers (lease_end): the transition's answer, and the waiting request the freed key was offered
-- to (null: none), for the service to wake once the call has committed.
CREATE TYPE lease_end_answer AS (answer lease_answer, offered uuid);

-- What an acquire asks (lease_acquire, whose first argument is the tenant: the one a distributed engine delegates the
-- call by), one row; a batch of one tenant's acquires is an array of them. The key, the lease asked for
-- (owner and holder, TTL, maximum lifetime, lock-delay, job, the lease's trace, metadata), the request's id and trace
-- for the audit; may_grant false when the tenant is at its quota (a free key is then refused, not granted); and for a
-- waiting acquire its queue row's id (waiter), its try ('once' for an acquire that does not wait, else 'first',
-- 'again' or 'last'), how long it waits, and its Idempotency-Key and fingerprint (a retry takes over its row).
CREATE TYPE lease_acquire_request AS (
    program text, target_type text, target_value text, actor text, operation text,
    owner text, holder text, ttl_seconds integer, max_lifetime_seconds integer, lock_delay_seconds integer,
    job_id text, trace_id text, metadata jsonb, request_id text, request_trace_id text,
    may_grant boolean, waiter uuid, try text, wait_seconds integer, idempotency_key text, fingerprint text);

-- What an acquire answers (lease_acquire): the transition's answer; the waiting request the key was offered to (null:
-- none), for the service to wake once the call has committed; and how many leases past their TTL it recorded as
-- expired (0 or 1).
CREATE TYPE lease_acquire_answer AS (answer lease_answer, offered uuid, expired integer);

-- What a renew asks (lease_renew, the tenant its first argument), one row: the lease, its owner and fencing token, the
-- new TTL (null: the lease's own), and the request's id and trace for the audit.
CREATE TYPE lease_renew_request AS (
    lease_id uuid, owner text, fencing_token bigint, ttl_seconds integer, request_id text, trace_id text);

-- What ending a lease asks (lease_end, the tenant its first argument), one row: the lease, the end ('released' by its
-- owner with its fencing token, or 'revoked' by an admin with the reason), who asks, and the request's id and trace.
CREATE TYPE lease_end_request AS (
    lease_id uuid, state text, principal text, fencing_token bigint, reason text, request_id text, trace_id text);

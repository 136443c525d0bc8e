-- The queue of waiting acquires, one per key, in the database (contract 1.1, "Waiting acquire").
--
-- A waiting acquire that finds its key busy writes a row here, once; the transaction that frees the key
-- (a release, a revoke without lock-delay, or a try that finds the key free) grants it in the same
-- transaction to the key's row of lowest position whose wait has not run out, and notes the lease in
-- lease_id. So the key passes from holder to waiter with one commit, in arrival order across instances.
-- The row carries what the acquire asked, to make the lease and its ACQUIRED event as the request would
-- have. The waiting request deletes its row when it answers (in the transaction that records its
-- Idempotency-Key, when it sent one); rows of requests that never answered (their instance died) are
-- skipped once wait_until passes and deleted by the sweeper.
CREATE TABLE lease_waiter (
    id                   uuid PRIMARY KEY,
    key_id               bigint NOT NULL REFERENCES lease_key (id),
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
    lease_id             uuid             -- the lease a hand-over granted to this row; NULL while it waits
);

-- The hand-over's pick: a key's waiting rows in arrival order.
CREATE INDEX lease_waiter_queue ON lease_waiter (key_id, position) WHERE lease_id IS NULL;
-- One row per logical request: a retry of a waiting acquire (the same Idempotency-Key) takes over its first
-- request's row (and its place in the queue) instead of queueing a second one, so that one key is never
-- handed to one request twice; it also finds there a grant its first request did not answer.
CREATE UNIQUE INDEX lease_waiter_one_per_request ON lease_waiter (tenant, owner, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
-- The sweeper's cleanup of rows whose request never answered.
CREATE INDEX lease_waiter_by_age ON lease_waiter (wait_until);

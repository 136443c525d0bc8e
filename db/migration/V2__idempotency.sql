-- Idempotent retries (Idempotency-Key header). One row per (tenant, subject, key): claimed at the start
-- of the operation's transaction and completed in it, so a row exists only for a committed success.
-- A concurrent identical request blocks on the primary key until the first commits, then replays it.
CREATE TABLE idempotency_record (
    tenant          text NOT NULL,
    subject         text NOT NULL,
    idempotency_key text NOT NULL,
    fingerprint     text NOT NULL,          -- SHA-256 of method, path and body
    status          integer,                -- the original success status; NULL only inside the claiming transaction
    lease_id        uuid REFERENCES lease (id),
    created_at      timestamptz(3) NOT NULL DEFAULT lease_now(),
    PRIMARY KEY (tenant, subject, idempotency_key)
);

-- The retention job's scan.
CREATE INDEX idempotency_record_by_age ON idempotency_record (created_at);

-- Leasekeeper schema, version 1.
--
-- Invariants the database itself guarantees:
--   * one lease_key row per normalized key (lease_key_natural);
--   * at most one lease in state 'active' per key (lease_one_active_per_key);
--   * fencing tokens are unique and come from one sequence with CACHE 1, so they are handed out in order;
--   * each lease has at most one ACQUIRED event (the acquiring transaction writes it, so exactly one)
--     and at most one terminal event (RELEASED, EXPIRED, REVOKED).
-- The rule the code keeps: every write to the leases of a key happens while holding that key's
-- lease_key row lock (SELECT ... FOR UPDATE), so acquire, renew, release, revoke and the sweeper
-- are serialized per key.

-- The one clock of the service: PostgreSQL's, at the start of the current statement, in whole
-- milliseconds (the precision of every stored instant and of the API). Statements that decide expiry
-- run after the key's row lock is held, so the time they read is a time at which nobody else can
-- change the key.
CREATE FUNCTION lease_now() RETURNS timestamptz
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT date_trunc('milliseconds', statement_timestamp()) $$;

CREATE SEQUENCE fencing_token_seq AS bigint START WITH 1 INCREMENT BY 1 CACHE 1 NO CYCLE;

CREATE TABLE lease_key (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant       text NOT NULL,
    program      text NOT NULL,
    target_type  text NOT NULL,
    target_value text NOT NULL,
    actor        text NOT NULL,
    operation    text,            -- NULL: no operation class, a different key from any operation
    created_at   timestamptz(3) NOT NULL DEFAULT now(),
    CONSTRAINT lease_key_natural
        UNIQUE NULLS NOT DISTINCT (tenant, program, target_type, target_value, actor, operation)
);

-- Serves the list filter on actor alone; the natural key serves program and target filters.
CREATE INDEX lease_key_by_actor ON lease_key (tenant, actor);

CREATE TABLE lease (
    id                   uuid PRIMARY KEY,
    key_id               bigint NOT NULL REFERENCES lease_key (id),
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
    CONSTRAINT lease_state CHECK (state IN ('active', 'expired', 'released', 'revoked')),
    CONSTRAINT lease_ended_iff_not_active CHECK ((state = 'active') = (ended_at IS NULL)),
    CONSTRAINT lease_expiry_within_lifetime CHECK (expires_at <= max_expires_at),
    CONSTRAINT lease_fencing_token_unique UNIQUE (fencing_token)
);

CREATE UNIQUE INDEX lease_one_active_per_key ON lease (key_id) WHERE state = 'active';
-- The sweeper's scan for due leases.
CREATE INDEX lease_due ON lease (expires_at) WHERE state = 'active';
-- Keyset pagination of the list (newest token first) with its filters.
CREATE INDEX lease_list ON lease (tenant, fencing_token DESC);
CREATE INDEX lease_list_active ON lease (tenant, fencing_token DESC) WHERE state = 'active';
CREATE INDEX lease_list_by_key ON lease (key_id, fencing_token DESC);
CREATE INDEX lease_list_by_owner ON lease (tenant, owner, fencing_token DESC);
CREATE INDEX lease_list_by_holder ON lease (tenant, holder, fencing_token DESC);

CREATE TABLE lease_event (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    lease_id      uuid NOT NULL REFERENCES lease (id),
    type          text NOT NULL,
    from_state    text,
    to_state      text NOT NULL,
    fencing_token bigint NOT NULL,
    at            timestamptz(3) NOT NULL,
    principal     text NOT NULL,
    request_id    text,
    trace_id      text,
    details       jsonb NOT NULL DEFAULT '{}',
    CONSTRAINT lease_event_type CHECK (type IN ('ACQUIRED', 'RENEWED', 'RELEASED', 'EXPIRED', 'REVOKED'))
);

CREATE INDEX lease_event_by_lease ON lease_event (lease_id, id);
CREATE UNIQUE INDEX lease_event_one_acquired ON lease_event (lease_id) WHERE type = 'ACQUIRED';
CREATE UNIQUE INDEX lease_event_one_end ON lease_event (lease_id) WHERE type IN ('RELEASED', 'EXPIRED', 'REVOKED');

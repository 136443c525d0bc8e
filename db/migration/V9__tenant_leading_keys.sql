-- A schema ready to shard by tenant (issue 18; docs/scale-out.md), and two lease rules made structural.
--
-- Every table's primary key and foreign keys lead with the tenant, so that each table can be partitioned, or
-- distributed across nodes, by tenant, with every lease statement reaching one tenant's rows: lease_key,
-- lease, lease_waiter and lease_event by (tenant, id); idempotency_record already was. The key's id stays
-- unique by itself (one identity), so notifications still name keys by id alone.
--
-- "A lease's tenant is its key's tenant": the foreign keys from lease and lease_waiter to lease_key are composite,
-- (tenant, key_id). "A terminal lease is final": an UPDATE of a lease that is no longer active is refused by a
-- trigger (lease_terminal_is_final); retention still deletes ended leases.

ALTER TABLE lease DROP CONSTRAINT lease_key_id_fkey;
ALTER TABLE lease_waiter DROP CONSTRAINT lease_waiter_key_id_fkey;

ALTER TABLE lease_key DROP CONSTRAINT lease_key_pkey;
ALTER TABLE lease_key ADD CONSTRAINT lease_key_pkey PRIMARY KEY (tenant, id);

ALTER TABLE lease DROP CONSTRAINT lease_pkey;
ALTER TABLE lease ADD CONSTRAINT lease_pkey PRIMARY KEY (tenant, id);
ALTER TABLE lease ADD CONSTRAINT lease_key_of_its_tenant FOREIGN KEY (tenant, key_id) REFERENCES lease_key (tenant, id);

DROP INDEX lease_one_active_per_key;
CREATE UNIQUE INDEX lease_one_active_per_key ON lease (tenant, key_id) WHERE state = 'active';
-- The sweeper's scan for due leases, a tenant at a time (LeaseSweeper).
DROP INDEX lease_due;
CREATE INDEX lease_due ON lease (tenant, expires_at) WHERE state = 'active';
-- A key's leases, newest token first: the list by key, and a grant's probe for the key's last token.
DROP INDEX lease_list_by_key;
CREATE INDEX lease_list_by_key ON lease (tenant, key_id, fencing_token DESC);

ALTER TABLE lease_waiter DROP CONSTRAINT lease_waiter_pkey;
ALTER TABLE lease_waiter ADD CONSTRAINT lease_waiter_pkey PRIMARY KEY (tenant, id);
ALTER TABLE lease_waiter ADD CONSTRAINT lease_waiter_key_of_its_tenant
    FOREIGN KEY (tenant, key_id) REFERENCES lease_key (tenant, id);
DROP INDEX lease_waiter_queue;
CREATE INDEX lease_waiter_queue ON lease_waiter (tenant, key_id, position) WHERE lease_id IS NULL;

-- lease_event gets its lease's tenant. The table is append-only (V7); this migration alone may write to it,
-- through a setting local to its own transaction that the trigger function honours only while it runs.
-- Events whose lease row is gone are deleted: retention deletes a lease row only once the lease is past the
-- retention (EndedLeases), so these only await their partition's drop, and no request can reach them (every
-- read of events goes through the lease); their tenant is unknown, and none is made up.
ALTER TABLE lease_event ADD COLUMN tenant text;

CREATE OR REPLACE FUNCTION lease_event_append_only() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF current_setting('leasekeeper.migrating', true) = 'V9' THEN
        RETURN CASE TG_OP WHEN 'DELETE' THEN OLD ELSE NEW END;
    END IF;
    RAISE EXCEPTION 'lease_event is append-only (% refused)', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END
$$;

SELECT set_config('leasekeeper.migrating', 'V9', true);
UPDATE lease_event e SET tenant = l.tenant FROM lease l WHERE l.id = e.lease_id;
DELETE FROM lease_event WHERE tenant IS NULL;
SELECT set_config('leasekeeper.migrating', '', true);

CREATE OR REPLACE FUNCTION lease_event_append_only() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    RAISE EXCEPTION 'lease_event is append-only (% refused)', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END
$$;

ALTER TABLE lease_event ALTER COLUMN tenant SET NOT NULL;
ALTER TABLE lease_event DROP CONSTRAINT lease_event_pkey;
ALTER TABLE lease_event ADD CONSTRAINT lease_event_pkey PRIMARY KEY (tenant, lease_id, id, lease_acquired_at);
DROP INDEX lease_event_one_acquired;
CREATE UNIQUE INDEX lease_event_one_acquired ON lease_event (tenant, lease_id, lease_acquired_at) WHERE type = 'ACQUIRED';
DROP INDEX lease_event_one_end;
CREATE UNIQUE INDEX lease_event_one_end ON lease_event (tenant, lease_id, lease_acquired_at)
    WHERE type IN ('RELEASED', 'EXPIRED', 'REVOKED');

-- No statistics on the tenant columns. Every statement of a request is confined to one tenant, so the tenant's
-- selectivity is a factor common to every plan of it; per-tenant statistics only ever misled. A tenant that grew
-- since the last ANALYZE (a new one, absent from the statistics) was estimated at a row or two, where a lookup by
-- (tenant, id) and a scan of a tenant-led list index filtering on the id then cost the same to the planner, and it
-- could scan all of the tenant's leases for one (LeasePlansTest). Without statistics a tenant is estimated at the
-- default 1/200 of the table: the primary key, one row, wins.
ALTER TABLE lease_key ALTER COLUMN tenant SET STATISTICS 0;
ALTER TABLE lease ALTER COLUMN tenant SET STATISTICS 0;
ALTER TABLE lease_waiter ALTER COLUMN tenant SET STATISTICS 0;
ALTER TABLE lease_event ALTER COLUMN tenant SET STATISTICS 0;

-- The token rule of V8, the key now named by its tenant and id: its last token is one probe of lease_list_by_key.
DROP FUNCTION next_fencing_token(bigint, timestamptz);
CREATE FUNCTION next_fencing_token(tenant text, key bigint, now timestamptz) RETURNS bigint
    LANGUAGE plpgsql VOLATILE
    AS $$
DECLARE
    floor_token constant bigint := floor(extract(epoch FROM now))::bigint * 1048576;
    token bigint := nextval('fencing_token_seq');
    key_last bigint;
BEGIN
    IF token < floor_token THEN
        token := setval('fencing_token_seq', floor_token);
    END IF;
    SELECT l.fencing_token INTO key_last FROM lease l
    WHERE l.tenant = next_fencing_token.tenant AND l.key_id = key
    ORDER BY l.fencing_token DESC LIMIT 1;
    RETURN greatest(token, key_last + 1);
END
$$;

-- A terminal lease is final: no statement may change a lease that has expired, been released or been revoked.
CREATE FUNCTION lease_terminal_is_final() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    RAISE EXCEPTION 'lease % is %, and a terminal lease is final (UPDATE refused)', OLD.id, OLD.state
        USING ERRCODE = 'integrity_constraint_violation';
END
$$;

CREATE TRIGGER lease_terminal_is_final
    BEFORE UPDATE ON lease
    FOR EACH ROW WHEN (OLD.state <> 'active') EXECUTE FUNCTION lease_terminal_is_final();

-- The schema partitioned by tenant, the way a distributed engine shards it (docs/guides/scale-out.md): run by the tests on
-- a database that Flyway has just migrated (TestDatabase.partitionedByTenant). Each table keyed by tenant is rebuilt
-- as a table hash-partitioned by tenant into four partitions, with its columns, defaults, identity, checks, indexes,
-- foreign keys and triggers, and its rows; the names of its indexes and constraints are PostgreSQL's own. lease_event
-- keeps its partitioning by time (retention drops its partitions; a distributed engine shards each by tenant).
DO $$
DECLARE
    name text;
    remainder int;
BEGIN
    ALTER TABLE lease DROP CONSTRAINT lease_key_of_its_tenant;
    ALTER TABLE lease_waiter DROP CONSTRAINT lease_waiter_key_of_its_tenant;
    FOREACH name IN ARRAY ARRAY['lease_key', 'lease', 'lease_waiter', 'idempotency_record'] LOOP
        EXECUTE format('ALTER TABLE %I RENAME TO %I', name, name || '_unpartitioned');
        EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING ALL) PARTITION BY HASH (tenant)',
                       name, name || '_unpartitioned');
        FOR remainder IN 0..3 LOOP
            EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES WITH (MODULUS 4, REMAINDER %s)',
                           name || '_' || remainder, name, remainder);
        END LOOP;
        EXECUTE format('INSERT INTO %I OVERRIDING SYSTEM VALUE SELECT * FROM %I', name, name || '_unpartitioned');
        EXECUTE format('DROP TABLE %I', name || '_unpartitioned');
    END LOOP;
END
$$;

-- The identities continue where the tables' rows left them.
SELECT setval(pg_get_serial_sequence('lease_key', 'id'), coalesce((SELECT max(id) FROM lease_key), 0) + 1, false);
SELECT setval(pg_get_serial_sequence('lease_waiter', 'position'),
              coalesce((SELECT max(position) FROM lease_waiter), 0) + 1, false);

ALTER TABLE lease ADD CONSTRAINT lease_key_of_its_tenant FOREIGN KEY (tenant, key_id) REFERENCES lease_key (tenant, id);
ALTER TABLE lease_waiter ADD CONSTRAINT lease_waiter_key_of_its_tenant
    FOREIGN KEY (tenant, key_id) REFERENCES lease_key (tenant, id);
-- LIKE copies no trigger: the rule of db/migration/R__lease_rules.sql, on the rebuilt table.
CREATE TRIGGER lease_terminal_is_final
    BEFORE UPDATE ON lease
    FOR EACH ROW WHEN (OLD.state <> 'active') EXECUTE FUNCTION lease_terminal_is_final();

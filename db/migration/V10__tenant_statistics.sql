-- The tenant columns keep their statistics again (V9 had dropped them).
--
-- Without statistics a tenant is estimated at 1/200 of the table whatever its size. The first runs on a large
-- tenant showed what that costs: the sweeper's batch, thinking the tenant's due leases few, hashed all of them
-- for each batch (100,000 due leases: 63 s to expire them against 45 s before V9), and a list of a large
-- tenant is planned as if the tenant were small. With statistics, a tenant that grew since the last ANALYZE
-- is estimated at almost no rows until the next one, and a lookup of one of its leases by (tenant, id) may then
-- scan the tenant's rows through another tenant-led index. So the two tables a new tenant grows fastest are
-- analyzed after every 10,000 changed rows rather than after 10% of the table: the window of a stale estimate
-- is bounded by that and by autovacuum's naptime (docs/decisions.md, "A schema ready to shard by tenant").
ALTER TABLE lease_key ALTER COLUMN tenant SET STATISTICS -1;
ALTER TABLE lease ALTER COLUMN tenant SET STATISTICS -1;
ALTER TABLE lease_waiter ALTER COLUMN tenant SET STATISTICS -1;
ALTER TABLE lease_event ALTER COLUMN tenant SET STATISTICS -1;

ALTER TABLE lease SET (autovacuum_analyze_scale_factor = 0, autovacuum_analyze_threshold = 10000);
ALTER TABLE lease_key SET (autovacuum_analyze_scale_factor = 0, autovacuum_analyze_threshold = 10000);

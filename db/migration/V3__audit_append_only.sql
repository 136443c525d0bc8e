-- The audit log is append-only for the service: UPDATE and DELETE of lease_event are refused, except
-- in a transaction that has declared itself the retention job with
--   SELECT set_config('leasekeeper.audit_retention', 'on', true);   -- local to that transaction
-- (TRUNCATE stays an operator's tool and is not guarded.)
CREATE FUNCTION lease_event_append_only() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF TG_OP = 'DELETE' AND current_setting('leasekeeper.audit_retention', true) = 'on' THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'lease_event is append-only (% refused)', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END
$$;

CREATE TRIGGER lease_event_append_only
    BEFORE UPDATE OR DELETE ON lease_event
    FOR EACH ROW EXECUTE FUNCTION lease_event_append_only();

-- The retention job's scan.
CREATE INDEX lease_event_by_time ON lease_event (at);

-- A terminal lease is final: no statement may change a lease that has expired, been released or been revoked;
-- retention still deletes ended leases. The trigger is made here with its function, so that the rule reads whole in
-- one place; CREATE OR REPLACE TRIGGER makes this file safe to apply again.
CREATE OR REPLACE FUNCTION lease_terminal_is_final() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    RAISE EXCEPTION 'lease % is %, and a terminal lease is final (UPDATE refused)', OLD.id, OLD.state
        USING ERRCODE = 'integrity_constraint_violation';
END
$$;

CREATE OR REPLACE TRIGGER lease_terminal_is_final
    BEFORE UPDATE ON lease
    FOR EACH ROW WHEN (OLD.state <> 'active') EXECUTE FUNCTION lease_terminal_is_final();

-- Fencing tokens per key that survive lost commits (contract 1.1, "Fencing tokens"; issue 18).
--
-- A new lease of a key, granted at the database's time now (the grant's lease_now()), gets the greatest of:
--   * the sequence's next value, as before;
--   * a floor from the database's clock, the whole seconds of now since 1970 times 2^20: whenever the
--     sequence is below it, the sequence is raised to it (the first grant of each second does so), so a
--     sequence that a failover or a restore set back jumps forward at once;
--   * the key's largest token + 1 (one probe of lease_list_by_key).
-- Every token is then below the floor of the second after the one it was granted in, as long as a second
-- sees fewer than 2^20 grants. A grant made at least a second (by the database's clock) after every forgotten
-- grant of a failover or a restore is therefore larger than each of them, and larger than every token its key
-- still holds. Bound: the clock of the primary that grants after the failover may run behind the old one's by
-- less than the time the failover took minus one second (docs/design.md, "Fencing tokens").
--
-- Tokens of different keys are not comparable and may, rarely, be equal (two grants raising the sequence in
-- the same second), so their uniqueness goes; pages of the list are ordered by (fencing_token, id). Tokens
-- stay below 2^53, exact in every JSON parser: the floor reaches it in the year 2242.
CREATE FUNCTION next_fencing_token(key bigint, now timestamptz) RETURNS bigint
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
    SELECT l.fencing_token INTO key_last FROM lease l WHERE l.key_id = key ORDER BY l.fencing_token DESC LIMIT 1;
    RETURN greatest(token, key_last + 1);
END
$$;

ALTER TABLE lease DROP CONSTRAINT lease_fencing_token_unique;
ALTER TABLE lease ADD CONSTRAINT lease_fencing_token_exact
    CHECK (fencing_token > 0 AND fencing_token < 9007199254740992) NOT VALID;
ALTER TABLE lease VALIDATE CONSTRAINT lease_fencing_token_exact;

-- The clock and the fencing tokens. (lease_now(), the service's clock, is in V1__schema.sql: a column's default
-- calls it.)

-- Instants inside audit details, written by the functions that make the transitions, in the API's format: RFC 3339,
-- UTC, exactly three fraction digits ("2026-12-04T19:06:17.120Z"), the same text the service's JSON mapper writes
-- for an Instant.
CREATE OR REPLACE FUNCTION rfc3339(t timestamptz) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') $$;

-- Fencing tokens per key that survive lost commits (docs/concepts/fencing.md, "How a token is made").
--
-- A new lease of the key (tenant, key), granted at the database's time now (the grant's time of the decision), gets
-- the greatest of:
--   * the sequence's next value;
--   * a floor from the database's clock, the whole seconds of now since 1970 times 2^20: whenever the sequence is
--     below it, the sequence is raised to it (the first grant of each second does so), so a sequence that a failover
--     or a restore set back jumps forward at once;
--   * the key's largest token + 1 (one probe of lease_list_by_key).
-- Every token is then below the floor of the second after the one it was granted in, as long as a second sees fewer
-- than 2^20 grants. A grant made at least a second (by the database's clock) after every forgotten grant of a
-- failover or a restore is therefore larger than each of them, and larger than every token its key still holds.
-- Bound: the clock of the primary that grants after the failover may run behind the old one's by less than the time
-- the failover took minus one second.
CREATE OR REPLACE FUNCTION next_fencing_token(tenant text, key bigint, now timestamptz) RETURNS bigint
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

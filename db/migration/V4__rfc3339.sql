-- Instants inside audit details, written by the statements that make the transitions, in the API's
-- format: RFC 3339, UTC, exactly three fraction digits ("2026-12-04T19:06:17.120Z"), the same text the
-- service's JSON mapper writes for an Instant.
CREATE FUNCTION rfc3339(t timestamptz) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') $$;

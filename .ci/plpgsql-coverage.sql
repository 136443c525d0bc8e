-- The statement and branch coverage of each PL/pgSQL function over every database the tests used, from the rows of
-- .ci/plpgsql-profile.sql loaded into the temporary table profile (.ci/plpgsql-coverage does). A function's
-- profiles are summed statement by statement across databases, for one version of its source: the reference
-- database's (psql variable reference: the database the tests share, migrated to the newest version), else the one
-- most databases have; a database that held another version (a test of an older migration) is left out of it, and so
-- is a function the reference database does not have (one the newest migrations dropped).
-- Statements and branches are counted as plpgsql_coverage_statements and plpgsql_coverage_branches count them: a
-- statement ran when it ran once; a branch is a list of statements (IF's THEN, each ELSIF and ELSE, a loop's body,
-- each WHEN and the ELSE of CASE, a block's body and each of its handlers when it has handlers), taken when its
-- first statement ran; an IF without ELSE has one more, taken when the IF ran more often than its lists; a CASE
-- without ELSE has an empty one, never taken. Output: function|statements run|statements|branches taken|branches,
-- one line per function by name, then total.
WITH version AS (
    SELECT DISTINCT ON (function) function, source
    FROM (SELECT function, source, bool_or(database = :'reference') AS in_reference,
                 count(DISTINCT database) AS databases
          FROM profile
          -- The functions the newest migrations define: one a test's older migrations made, and the newest dropped,
          -- is not the service's.
          WHERE function IN (SELECT function FROM profile WHERE database = :'reference')
             OR NOT EXISTS (SELECT 1 FROM profile WHERE database = :'reference')
          GROUP BY function, source) v
    ORDER BY function, in_reference DESC, databases DESC
), stmt AS (
    SELECT p.function, p.stmtid, min(p.parent_stmtid) AS parent_stmtid, min(p.parent_note) AS parent_note,
           min(p.lineno) AS lineno, min(p.stmtname) AS stmtname, sum(p.exec_stmts) AS runs
    FROM profile p JOIN version USING (function, source)
    GROUP BY p.function, p.stmtid
), list AS (
    SELECT s.function, s.parent_stmtid, s.parent_note, (array_agg(s.runs ORDER BY s.stmtid))[1] AS runs
    FROM stmt s
    WHERE s.parent_note IN ('then body', 'else body', 'loop body', 'case else')
       OR s.parent_note ~ '^(elsif|case when|exception) '
       OR (s.parent_note = 'body' AND EXISTS (SELECT 1 FROM stmt h WHERE h.function = s.function
                                              AND h.parent_stmtid = s.parent_stmtid AND h.parent_note LIKE 'exception %'))
    GROUP BY s.function, s.parent_stmtid, s.parent_note
), branch AS (
    SELECT function, runs FROM list
    UNION ALL
    SELECT i.function, i.runs - coalesce((SELECT sum(b.runs) FROM list b WHERE b.function = i.function
                                          AND b.parent_stmtid = i.stmtid), 0)
    FROM stmt i
    WHERE i.stmtname = 'IF' AND NOT EXISTS (SELECT 1 FROM list e WHERE e.function = i.function
                                             AND e.parent_stmtid = i.stmtid AND e.parent_note = 'else body')
    UNION ALL
    SELECT c.function, 0
    FROM stmt c
    WHERE c.stmtname = 'CASE' AND NOT EXISTS (SELECT 1 FROM list e WHERE e.function = c.function
                                               AND e.parent_stmtid = c.stmtid AND e.parent_note = 'case else')
), per_function AS (
    SELECT v.function,
           (SELECT count(*) FILTER (WHERE s.runs > 0) FROM stmt s WHERE s.function = v.function AND s.lineno <> -1) AS statements_run,
           (SELECT count(*) FROM stmt s WHERE s.function = v.function AND s.lineno <> -1) AS statements,
           (SELECT count(*) FILTER (WHERE b.runs > 0) FROM branch b WHERE b.function = v.function) AS branches_taken,
           (SELECT count(*) FROM branch b WHERE b.function = v.function) AS branches
    FROM version v
)
SELECT name, statements_run, statements, branches_taken, branches
FROM (SELECT CASE WHEN count(*) OVER (PARTITION BY split_part(function, '(', 1)) > 1 THEN function
                  ELSE split_part(function, '(', 1) END AS name, 0 AS last, *
      FROM per_function
      UNION ALL
      SELECT 'total', 1, NULL, sum(statements_run), sum(statements), sum(branches_taken), sum(branches)
      FROM per_function) f
ORDER BY last, name

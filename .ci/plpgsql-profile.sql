-- One row per statement of every PL/pgSQL function of schema public in the current database, with how often it ran
-- since the cluster's profile was last reset (plpgsql_check's profiler: the cluster runs with
-- shared_preload_libraries = 'plpgsql,plpgsql_check' and plpgsql_check.profiler = on). The profile is kept by
-- function oid and database, so each database is read on its own: by .ci/plpgsql-coverage for the databases the
-- tests leave, by TestDatabase.dropDatabase for the ones they drop; .ci/plpgsql-coverage.sql then sums the rows by
-- function. One SELECT, no semicolon: the readers wrap it in COPY (…) TO STDOUT.
SELECT current_database() AS database, p.oid::regprocedure::text AS function, md5(p.prosrc) AS source,
       s.stmtid, s.parent_stmtid, s.parent_note, s.lineno, s.stmtname, s.exec_stmts
FROM pg_proc p
JOIN pg_namespace n ON n.oid = p.pronamespace
JOIN pg_language l ON l.oid = p.prolang
CROSS JOIN LATERAL plpgsql_profiler_function_statements_tb(p.oid) s
WHERE n.nspname = 'public' AND l.lanname = 'plpgsql'

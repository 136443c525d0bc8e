package io.leasekeeper.lease;

import static org.assertj.core.api.Assertions.assertThat;

import io.leasekeeper.support.MigratedDatabase;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * plpgsql_check's static check (docs/decisions/plpgsql-check.md) over every PL/pgSQL function of schema public, as
 * the migrations make it, in a database of the test's own where the test creates the extension (the service never
 * needs it): every function, each trigger function once per table it is a trigger of, with every warning class on.
 * No error passes, and no warning but those {@link #ALLOWED} names with the reason it is kept; an allowance that no
 * longer matches anything fails too, so the list never outlives its warnings. Skipped only when the test's cluster
 * does not have the extension (Testcontainers' image has none), unless {@code LEASEKEEPER_TEST_REQUIRE_PLPGSQL_CHECK}
 * is true, as {@code .ci/run} sets it.
 */
class PlpgsqlCheckTest {

    /** A warning kept on purpose: of {@code function}, with SQLSTATE {@code sqlstate} and this {@code detail}. */
    record Allowed(String function, String sqlstate, String detail, String reason) {

        boolean matches(Map<String, Object> issue) {
            return function.equals(issue.get("name")) && sqlstate.equals(issue.get("sqlstate"))
                    && detail.equals(issue.get("detail"));
        }
    }

    /** The warnings kept, each with why. */
    static final List<Allowed> ALLOWED = List.of(
            new Allowed("lease_renew", "42804", "cast \"numeric\" value to \"double precision\" type",
                    "the share of the TTL gone by when the renew comes, extract(epoch ...) / ttl, is numeric, held in"
                            + " the double precision the answer carries: one cast per call, in no condition an index serves"));

    /**
     * The row type of each {@code record} parameter, by function: a static check cannot know what a caller passes, so
     * without them it stops at the first field read ("record is not assigned yet"). The function is checked as a copy
     * (in this test's database only) that declares them with plpgsql_check's pragma, {@code PERFORM 'PRAGMA:TYPE:…'}.
     */
    static final Map<String, List<String>> RECORD_PARAMETERS = Map.of(
            "lease_answer_of", List.of("k lease_key", "l lease"),
            "lease_grant", List.of("k lease_key"),
            "lease_queue", List.of("k lease_key"),
            "lease_key_state", List.of("k lease_key"));

    /** Every PL/pgSQL function of schema public, with each table it is a trigger of (relation 0 for none). */
    private static final String FUNCTIONS = """
            SELECT p.oid, p.proname AS name, p.oid::regprocedure::text AS signature,
                   coalesce(t.tgrelid, 0) AS relation, t.tgrelid::regclass::text AS trigger_of
            FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace JOIN pg_language l ON l.oid = p.prolang
            LEFT JOIN pg_trigger t ON t.tgfoid = p.oid
            WHERE n.nspname = 'public' AND l.lanname = 'plpgsql'
            ORDER BY 3, 4
            """;

    private static MigratedDatabase database;
    private static JdbcClient jdbc;

    @BeforeAll
    static void database() {
        database = MigratedDatabase.create("plpgsql_check");
        jdbc = database.jdbc();
    }

    @AfterAll
    static void dropDatabase() {
        database.close();
    }

    /** Creates the extension in this test's database, or skips the test when the cluster does not have it. */
    private static void createExtension() {
        boolean available = jdbc.sql("SELECT count(*) FROM pg_available_extensions WHERE name = 'plpgsql_check'")
                .query(Long.class).single() > 0;
        if (!available) {
            boolean required = "true".equals(System.getenv("LEASEKEEPER_TEST_REQUIRE_PLPGSQL_CHECK"));
            assertThat(required).as("plpgsql_check is not installed in the test's cluster,"
                    + " and LEASEKEEPER_TEST_REQUIRE_PLPGSQL_CHECK is true").isFalse();
            Assumptions.abort("plpgsql_check is not installed in the test's cluster"
                    + " (apt-get install postgresql-15-plpgsql-check); skipping");
        }
        jdbc.sql("CREATE EXTENSION plpgsql_check").update();
    }

    /** Replaces {@code function} by a copy that names the row type of each of its record parameters. */
    private static void declareRecordParameters(String function, List<String> types) {
        String source = jdbc.sql("SELECT pg_get_functiondef(CAST(:name AS regproc))").param("name", function)
                .query(String.class).single();
        StringBuilder pragmas = new StringBuilder();
        types.forEach(type -> pragmas.append("    PERFORM 'PRAGMA:TYPE:").append(type).append("';\n"));
        String declared = source.replaceFirst("\nBEGIN\n", "\nBEGIN\n" + pragmas);
        assertThat(declared).as("%s's body starts with a line BEGIN", function).isNotEqualTo(source);
        jdbc.sql(declared).update();
    }

    @Test
    void everyFunctionPassesTheStaticCheckWithNoWarningButTheAllowedOnes() {
        createExtension();
        RECORD_PARAMETERS.forEach(PlpgsqlCheckTest::declareRecordParameters);
        List<Map<String, Object>> functions = jdbc.sql(FUNCTIONS).query().listOfRows();
        assertThat(functions).extracting(f -> f.get("name"))
                .contains("lease_acquire", "lease_grant", "lease_expire_due", "lease_event_append_only");

        List<String> failures = new ArrayList<>();
        List<Allowed> used = new ArrayList<>();
        for (Map<String, Object> function : functions) {
            for (Map<String, Object> issue : issuesOf(function)) {
                issue.put("name", function.get("name"));
                List<Allowed> allowing = ALLOWED.stream()
                        .filter(a -> !"error".equals(issue.get("level")) && a.matches(issue)).toList();
                if (allowing.isEmpty()) {
                    failures.add(describe(function, issue));
                }
                used.addAll(allowing);
            }
        }

        assertThat(failures).as("plpgsql_check's findings (docs/decisions/plpgsql-check.md)").isEmpty();
        assertThat(ALLOWED).as("allowances that no longer match a warning: remove them").allMatch(used::contains);
    }

    private static List<Map<String, Object>> issuesOf(Map<String, Object> function) {
        return jdbc.sql("""
                SELECT level, sqlstate, message, detail, hint, lineno, statement, query
                FROM plpgsql_check_function_tb(CAST(:oid AS oid), CAST(:relation AS oid), all_warnings => true)
                """).param("oid", function.get("oid")).param("relation", function.get("relation"))
                .query().listOfRows().stream().<Map<String, Object>>map(HashMap::new).toList();
    }

    private static String describe(Map<String, Object> function, Map<String, Object> issue) {
        String trigger = function.get("trigger_of") == null ? "" : " (trigger of " + function.get("trigger_of") + ")";
        return "%s%s line %s, %s: %s %s: %s%s%s%s".formatted(function.get("signature"), trigger, issue.get("lineno"),
                issue.get("statement"), issue.get("level"), issue.get("sqlstate"), issue.get("message"),
                issue.get("detail") == null ? "" : "; " + issue.get("detail"),
                issue.get("hint") == null ? "" : "; hint: " + issue.get("hint"),
                issue.get("query") == null ? "" : "; in: " + issue.get("query"));
    }
}

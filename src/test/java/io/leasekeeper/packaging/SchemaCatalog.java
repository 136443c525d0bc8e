package io.leasekeeper.packaging;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * A database's schema as its catalogs describe it, object by object, for comparing two databases: every column of
 * every table and partition (position, type, default, nullability, identity, statistics target), every table's kind,
 * options, partition key and partition bound, its constraints ({@code pg_get_constraintdef}), indexes
 * ({@code pg_get_indexdef}), triggers ({@code pg_get_triggerdef}), the sequences with their parameters, the composite
 * types, every function ({@code pg_get_functiondef}) and the rows of {@code lease_event_horizon}. Flyway's own table
 * is left out.
 *
 * <p>Two things are normalized, and nothing else: a function's text outside its string literals, whose comments are
 * dropped and whose runs of white space become one space (a body that differs only there is the same function); and
 * an instant that lies within the migration's run ({@link #describe}'s window), written as {@code <migrated at N>},
 * N counting the distinct such instants in the order met, so that two databases migrated at different times compare
 * equal while an instant the migration did not take from its clock, or two that should be one, still differ.
 */
final class SchemaCatalog {

    /** The entries of one aspect of the schema, by object name, sorted. */
    record Aspect(String name, Map<String, String> entries) {
    }

    private static final String SCHEMA = "n.nspname = current_schema()";

    private static final String TABLES = """
            SELECT c.relname AS name,
                   concat_ws(' | ', c.relkind, 'partition ' || c.relispartition, c.reloptions::text, c.relacl::text,
                             pg_get_partkeydef(c.oid),
                             (SELECT 'of ' || p.relname FROM pg_inherits i JOIN pg_class p ON p.oid = i.inhparent
                              WHERE i.inhrelid = c.oid),
                             pg_get_expr(c.relpartbound, c.oid)) AS description
            FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE %s AND c.relkind IN ('r', 'p') AND c.relname <> 'flyway_schema_history'
            """.formatted(SCHEMA);

    private static final String COLUMNS = """
            SELECT c.relname || '.' || a.attname AS name,
                   concat_ws(' | ', row_number() OVER (PARTITION BY c.oid ORDER BY a.attnum),
                             format_type(a.atttypid, a.atttypmod), CASE WHEN a.attnotnull THEN 'not null' END,
                             'default ' || pg_get_expr(d.adbin, d.adrelid),
                             'identity ' || nullif(a.attidentity, '')::text,
                             'generated ' || nullif(a.attgenerated, '')::text, 'statistics ' || a.attstattarget,
                             'collation ' || nullif(a.attcollation, 0)::regcollation::text) AS description
            FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
            LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
            WHERE %s AND c.relkind IN ('r', 'p') AND c.relname <> 'flyway_schema_history'
              AND a.attnum > 0 AND NOT a.attisdropped
            """.formatted(SCHEMA);

    private static final String CONSTRAINTS = """
            SELECT c.relname || '.' || k.conname AS name,
                   concat_ws(' | ', k.contype, pg_get_constraintdef(k.oid), 'validated ' || k.convalidated,
                             'inherited ' || (k.conparentid <> 0)) AS description
            FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE %s AND c.relname <> 'flyway_schema_history'
            """.formatted(SCHEMA);

    private static final String INDEXES = """
            SELECT c.relname || '.' || x.relname AS name, pg_get_indexdef(x.oid) AS description
            FROM pg_index i JOIN pg_class x ON x.oid = i.indexrelid JOIN pg_class c ON c.oid = i.indrelid
            JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE %s AND c.relname <> 'flyway_schema_history'
            """.formatted(SCHEMA);

    private static final String TRIGGERS = """
            SELECT c.relname || '.' || t.tgname AS name,
                   concat_ws(' | ', pg_get_triggerdef(t.oid), 'enabled ' || t.tgenabled::text) AS description
            FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE %s AND NOT t.tgisinternal
            """.formatted(SCHEMA);

    private static final String SEQUENCES = """
            SELECT s.sequencename AS name,
                   concat_ws(' | ', s.data_type, 'start ' || s.start_value, 'min ' || s.min_value,
                             'max ' || s.max_value, 'increment ' || s.increment_by, 'cycle ' || s.cycle,
                             'cache ' || s.cache_size, 'last ' || coalesce(s.last_value::text, 'none')) AS description
            FROM pg_sequences s WHERE s.schemaname = current_schema()
            """;

    private static final String TYPES = """
            SELECT t.typname AS name,
                   (SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod), ', ' ORDER BY a.attnum)
                    FROM pg_attribute a WHERE a.attrelid = t.typrelid AND a.attnum > 0 AND NOT a.attisdropped)
                       AS description
            FROM pg_type t JOIN pg_class c ON c.oid = t.typrelid JOIN pg_namespace n ON n.oid = t.typnamespace
            WHERE %s AND c.relkind = 'c'
            """.formatted(SCHEMA);

    private static final String FUNCTIONS = """
            SELECT p.oid::regprocedure::text AS name,
                   concat_ws(' | ', pg_get_functiondef(p.oid), p.proacl::text) AS description
            FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
            WHERE %s
            """.formatted(SCHEMA);

    private static final String HORIZON = """
            SELECT 'lease_event_horizon' AS name, concat_ws(' | ', 'upper ' || upper, 'width ' || width) AS description
            FROM lease_event_horizon
            """;

    private static final Map<String, String> QUERIES = new LinkedHashMap<>();

    static {
        QUERIES.put("tables", TABLES);
        QUERIES.put("columns", COLUMNS);
        QUERIES.put("constraints", CONSTRAINTS);
        QUERIES.put("indexes", INDEXES);
        QUERIES.put("triggers", TRIGGERS);
        QUERIES.put("sequences", SEQUENCES);
        QUERIES.put("types", TYPES);
        QUERIES.put("functions", FUNCTIONS);
        QUERIES.put("rows", HORIZON);
    }

    /** An instant as PostgreSQL writes one, such as {@code 2026-12-07 20:31:38.164+00}. */
    private static final Pattern INSTANT =
            Pattern.compile("\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d(?:\\.\\d+)?[+-]\\d\\d(?::\\d\\d)?");

    private SchemaCatalog() {
    }

    /**
     * The schema of the database {@code db}, which was migrated between {@code from} and {@code to} by its own clock,
     * aspect by aspect.
     */
    static List<Aspect> describe(JdbcClient db, Instant from, Instant to) {
        Map<Instant, Integer> migrationTimes = new LinkedHashMap<>();
        return QUERIES.entrySet().stream().map(query -> {
            Map<String, String> entries = new TreeMap<>();
            db.sql(query.getValue()).query().listOfRows()
                    .forEach(row -> entries.put((String) row.get("name"), (String) row.get("description")));
            entries.replaceAll((name, description) -> query.getKey().equals("functions")
                    ? withoutComments(description)
                    : withMigrationTimes(db, description, from, to, migrationTimes));
            return new Aspect(query.getKey(), entries);
        }).toList();
    }

    /** {@code text} with each instant of the migration's run written as {@code <migrated at N>}. */
    private static String withMigrationTimes(JdbcClient db, String text, Instant from, Instant to,
                                             Map<Instant, Integer> migrationTimes) {
        Matcher literal = INSTANT.matcher(text);
        StringBuilder normalized = new StringBuilder();
        while (literal.find()) {
            Instant at = Instant.ofEpochMilli(db.sql("""
                    SELECT CAST(extract(epoch FROM CAST(:text AS timestamptz)) * 1000 AS bigint)
                    """).param("text", literal.group()).query(Long.class).single());
            String replacement = literal.group();
            if (!at.isBefore(from) && !at.isAfter(to)) {
                int n = migrationTimes.computeIfAbsent(at, key -> migrationTimes.size() + 1);
                replacement = "<migrated at " + n + ">";
            }
            literal.appendReplacement(normalized, Matcher.quoteReplacement(replacement));
        }
        return literal.appendTail(normalized).toString();
    }

    /**
     * SQL text with its comments ({@code --} to the end of the line, and {@code /* *\/}) dropped and each run of
     * white space made one space, outside its string literals and quoted identifiers, which are kept as they are.
     */
    static String withoutComments(String sql) {
        StringBuilder out = new StringBuilder();
        int i = 0;
        while (i < sql.length()) {
            char c = sql.charAt(i);
            if (c == '\'' || c == '"') {
                int end = i + 1;
                while (end < sql.length()) {
                    if (sql.charAt(end) == c && sql.startsWith(String.valueOf(c) + c, end)) {
                        end += 2; // a doubled quote inside the literal
                    } else if (sql.charAt(end) == c) {
                        break;
                    } else {
                        end++;
                    }
                }
                out.append(sql, i, Math.min(end + 1, sql.length()));
                i = end + 1;
            } else if (sql.startsWith("--", i)) {
                int end = sql.indexOf('\n', i);
                i = end < 0 ? sql.length() : end;
            } else if (sql.startsWith("/*", i)) {
                int end = sql.indexOf("*/", i + 2);
                i = end < 0 ? sql.length() : end + 2;
            } else if (Character.isWhitespace(c)) {
                while (i < sql.length() && Character.isWhitespace(sql.charAt(i))) {
                    i++;
                }
                if (!out.isEmpty() && out.charAt(out.length() - 1) != ' ') {
                    out.append(' ');
                }
            } else {
                out.append(c);
                i++;
            }
        }
        return out.toString().strip();
    }
}

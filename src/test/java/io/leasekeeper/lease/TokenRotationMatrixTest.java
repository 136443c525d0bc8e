package io.leasekeeper.lease;

import static org.assertj.core.api.Assertions.assertThat;

import io.leasekeeper.support.Api;
import io.leasekeeper.support.IntegrationTest;
import io.leasekeeper.sweeper.LeaseSweeper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.beans.factory.annotation.Autowired;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The token-rotation matrix of docs/concepts/fencing.md ("The token-rotation matrix"), every cell against the running service: what an
 * event does to the key's fencing token and to the lease id. A new token is larger than every earlier token of
 * the key (contract 1.1: per key); unchanged is the token and id of the lease the event acted on; none is no
 * lease at all. Each case starts from a fresh tenant, so the key's earlier tokens are the tenant's leases.
 */
class TokenRotationMatrixTest extends IntegrationTest {

    private static final Path FENCING = Path.of("docs/concepts/fencing.md");
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final String TARGET = "matrix";

    /** What an event does to the token, or to the lease id: the first word of the matrix's columns. */
    enum Outcome { NEW, UNCHANGED, NONE }

    /** The matrix's cells, named as in its first column. */
    enum Cell {
        FIRST_ACQUIRE,
        AFTER_RELEASE_SAME_OWNER,
        AFTER_RELEASE_OTHER_OWNER,
        AFTER_SWEPT_EXPIRY_SAME_OWNER,
        AFTER_SWEPT_EXPIRY_OTHER_OWNER,
        AFTER_UNSWEPT_EXPIRY_SAME_OWNER,
        AFTER_UNSWEPT_EXPIRY_OTHER_OWNER,
        AFTER_REVOKE_SAME_OWNER,
        AFTER_REVOKE_OTHER_OWNER,
        IDEMPOTENT_REPLAY(Outcome.UNCHANGED),
        ACQUIRE_WHILE_HELD(Outcome.NONE),
        RENEW(Outcome.UNCHANGED),
        RELEASE(Outcome.UNCHANGED),
        REVOKE(Outcome.UNCHANGED);

        /** What the event does to the token; the lease id goes the same way in every cell. */
        final Outcome token;
        final Outcome leaseId;

        /** A grant: a new token and a new lease id. */
        Cell() {
            this(Outcome.NEW);
        }

        Cell(Outcome outcome) {
            this.token = outcome;
            this.leaseId = outcome;
        }

        String cellName() {
            return name().toLowerCase().replace('_', '-');
        }

        boolean sameOwner() {
            return name().endsWith("SAME_OWNER");
        }
    }

    /** A lease of the key as the table stores it. */
    record Stored(String id, long token) {
    }

    @Autowired
    LeaseSweeper sweeper;

    @ParameterizedTest(name = "{0}")
    @EnumSource(Cell.class)
    void everyCellOfTheTokenRotationMatrixHoldsAgainstTheService(Cell cell) {
        String alice = writer("alice");
        String next = cell.sameOwner() ? alice : writer("bob");
        JsonNode before = null; // the lease an event acts on, or ended before a new acquire
        if (cell != Cell.FIRST_ACQUIRE && cell != Cell.IDEMPOTENT_REPLAY) {
            before = granted(acquire(alice, TARGET, "job", "h1", 30));
        }
        switch (cell) {
            case AFTER_RELEASE_SAME_OWNER, AFTER_RELEASE_OTHER_OWNER ->
                    assertThat(release(alice, id(before), token(before)).status()).isEqualTo(200);
            case AFTER_SWEPT_EXPIRY_SAME_OWNER, AFTER_SWEPT_EXPIRY_OTHER_OWNER -> {
                backdateExpiry(id(before));
                // Leases other test classes left behind may be due first: batches until this one is swept.
                for (int batch = 0; batch < 1000 && !storedState(id(before)).equals("expired"); batch++) {
                    sweeper.sweepOnce(tenant);
                }
                assertThat(storedState(id(before))).isEqualTo("expired");
            }
            case AFTER_UNSWEPT_EXPIRY_SAME_OWNER, AFTER_UNSWEPT_EXPIRY_OTHER_OWNER -> backdateExpiry(id(before));
            case AFTER_REVOKE_SAME_OWNER, AFTER_REVOKE_OTHER_OWNER ->
                    assertThat(revoke(admin("root"), id(before), "matrix").status()).isEqualTo(200);
            default -> { }
        }
        List<Stored> earlier = storedLeases();

        Api.Response event = switch (cell) {
            case IDEMPOTENT_REPLAY -> {
                Api.Response first = acquireWithKey(alice, "\"matrix-1\"");
                earlier = storedLeases();
                before = granted(first);
                Api.Response replay = acquireWithKey(alice, "\"matrix-1\"");
                assertThat(replay.header("Idempotent-Replayed")).isEqualTo("true");
                yield replay;
            }
            case ACQUIRE_WHILE_HELD -> acquire(next, TARGET, "job", "h2", 30);
            case RENEW -> renew(alice, id(before), token(before));
            case RELEASE -> release(alice, id(before), token(before));
            case REVOKE -> revoke(admin("root"), id(before), "matrix");
            default -> acquire(next, TARGET, "job", "h2", 30);
        };
        List<Stored> after = storedLeases();

        switch (cell.token) {
            case NEW -> {
                JsonNode lease = granted(event);
                long newest = token(lease);
                assertThat(earlier).allSatisfy(e -> assertThat(newest).isGreaterThan(e.token()));
                assertThat(after).hasSize(earlier.size() + 1).contains(new Stored(id(lease), newest));
            }
            case UNCHANGED -> {
                assertThat(event.status()).isIn(200, 201);
                assertThat(token(event.body())).isEqualTo(token(before));
                assertThat(after).isEqualTo(earlier);
            }
            case NONE -> {
                assertThat(event.status()).isEqualTo(409);
                assertThat(event.code()).isEqualTo("LEASE_HELD");
                assertThat(event.body().has("fencingToken")).isFalse();
                assertThat(event.raw()).doesNotContain(id(before));
                assertThat(after).isEqualTo(earlier);
            }
        }
        switch (cell.leaseId) {
            case NEW -> assertThat(earlier).extracting(Stored::id).doesNotContain(id(event.body()));
            case UNCHANGED -> assertThat(id(event.body())).isEqualTo(id(before));
            case NONE -> assertThat(event.body().has("leaseId")).isFalse();
        }
        if (cell == Cell.AFTER_UNSWEPT_EXPIRY_SAME_OWNER || cell == Cell.AFTER_UNSWEPT_EXPIRY_OTHER_OWNER) {
            assertThat(eventTypes(id(before))).containsExactly("ACQUIRED", "EXPIRED"); // recorded by the acquire
        }
    }

    @Test
    void theMatrixInTheDesignAndTheCasesOfItsTestNameTheSameCells() throws IOException {
        List<String> rows = matrixRows();
        List<String> cells = rows.stream().map(row -> column(row, 0).replace("`", "")).toList();
        assertThat(cells).containsExactlyElementsOf(Arrays.stream(Cell.values()).map(Cell::cellName).toList());
        for (String row : rows) {
            Cell cell = Cell.valueOf(column(row, 0).replace("`", "").toUpperCase().replace('-', '_'));
            assertThat(firstWord(column(row, 3))).as("fencing token of %s", cell.cellName())
                    .isEqualTo(cell.token.name().toLowerCase());
            assertThat(firstWord(column(row, 4))).as("lease id of %s", cell.cellName())
                    .isEqualTo(cell.leaseId.name().toLowerCase());
        }
    }

    /** The table's rows between its markers in docs/concepts/fencing.md, without the header and its rule. */
    private static List<String> matrixRows() throws IOException {
        Matcher table = Pattern.compile("<!-- token-rotation-matrix: begin -->\\n(.*?)<!-- token-rotation-matrix: end -->",
                Pattern.DOTALL).matcher(Files.readString(FENCING));
        assertThat(table.find()).as("the token-rotation matrix in %s", FENCING).isTrue();
        List<String> lines = table.group(1).lines().filter(line -> line.startsWith("|")).toList();
        assertThat(lines.get(0)).startsWith("| cell | event | by | fencing token | lease id |");
        return lines.subList(2, lines.size());
    }

    private static String column(String row, int index) {
        String[] columns = row.substring(1, row.length() - 1).split("\\|");
        assertThat(columns).as(row).hasSize(5);
        return columns[index].strip();
    }

    private static String firstWord(String text) {
        return text.split("[^a-z]", 2)[0];
    }

    private JsonNode granted(Api.Response response) {
        assertThat(response.status()).as(response.raw()).isEqualTo(201);
        return response.body();
    }

    private Api.Response acquireWithKey(String token, String idempotencyKey) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/leases"))
                .header("Content-Type", "application/json").header("Idempotency-Key", idempotencyKey)
                .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(Api.acquireBody(TARGET, "job", "h1", 30))));
        return api.send(request, token);
    }

    /** Every lease of the tenant, that is of the one key, oldest first. */
    private List<Stored> storedLeases() {
        return jdbc.sql("SELECT CAST(id AS text) AS id, fencing_token FROM lease WHERE tenant = :t ORDER BY fencing_token")
                .param("t", tenant).query((rs, n) -> new Stored(rs.getString("id"), rs.getLong("fencing_token"))).list();
    }

    private String storedState(String leaseId) {
        return jdbc.sql("SELECT state FROM lease WHERE id = CAST(:id AS uuid)").param("id", leaseId)
                .query(String.class).single();
    }

    private static String id(JsonNode lease) {
        return lease.get("leaseId").asString();
    }

    private static long token(JsonNode lease) {
        return lease.get("fencingToken").asLong();
    }
}

package io.leasekeeper.lease;

import static org.assertj.core.api.Assertions.assertThat;

import io.leasekeeper.support.Api;
import io.leasekeeper.support.IntegrationTest;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/**
 * What a 400 says (contract 1.2, "Keys that cannot deceive"; issue 34): bidirectional formatting characters refused
 * wherever a key's target value, a holder or a reason arrives; an unknown member named as unknown, with the member
 * meant; bytes that are not UTF-8 said to be so; every number out of its field's range told the range; a syntax
 * error placed by line and column; a value of the wrong type told the type expected.
 */
class RequestMessagesTest extends IntegrationTest {

    /** U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069: every bidirectional formatting character. */
    static final List<Character> BIDI_CONTROLS = List.of('\u061C', '\u200E', '\u200F', '\u202A', '\u202B', '\u202C',
            '\u202D', '\u202E', '\u2066', '\u2067', '\u2068', '\u2069');
    private static final String BIDI_MESSAGE = "must not contain bidirectional formatting characters";
    private static final String KEY = "\"target\":{\"type\":\"opaque\",\"value\":\"x\"},\"actor\":\"a\"";

    // Bidirectional formatting characters: each field, each place it arrives.

    @Test
    void aTargetValueInAnAcquireBodyWithABidiControlIsRefusedNamingIt() {
        long[] before = rowCounts();
        for (char c : BIDI_CONTROLS) {
            Api.Response r = api.post("/v1/leases", writer("alice"), Api.acquireBody("invoice" + c + "fdp.txt", "a", "h", 30));
            assertOnlyError(r, "target.value", BIDI_MESSAGE, c);
        }
        assertThat(rowCounts()).isEqualTo(before);
    }

    @Test
    void aHolderInAnAcquireBodyWithABidiControlIsRefusedNamingIt() {
        long[] before = rowCounts();
        for (char c : BIDI_CONTROLS) {
            Api.Response r = api.post("/v1/leases", writer("alice"), Api.acquireBody("x", "a", "pod" + c + "-1", 30));
            assertOnlyError(r, "holder", BIDI_MESSAGE, c);
        }
        assertThat(rowCounts()).isEqualTo(before);
    }

    @Test
    void aRevokeReasonWithABidiControlIsRefusedNamingItAndTheLeaseStaysActive() {
        String leaseId = acquire(writer("alice"), "revoked-with-reason", "a", "h", 30).body().get("leaseId").asString();
        for (char c : BIDI_CONTROLS) {
            assertOnlyError(revoke(admin("root"), leaseId, "broken " + c + "disk"), "reason", BIDI_MESSAGE, c);
        }
        assertThat(api.get("/v1/leases/" + leaseId, reader("r")).body().get("state").asString()).isEqualTo("active");
    }

    @Test
    void aTargetInTheCurrentQueryWithABidiControlIsRefusedNamingIt() {
        for (char c : BIDI_CONTROLS) {
            assertOnlyError(api.get("/v1/leases/current?targetType=opaque&actor=a&target=" + query("x" + c + "y"),
                    reader("r")), "target", BIDI_MESSAGE, c);
        }
    }

    @Test
    void aTargetOrHolderListFilterWithABidiControlIsRefusedNamingIt() {
        for (char c : BIDI_CONTROLS) {
            assertOnlyError(api.get("/v1/leases?targetType=opaque&target=" + query("x" + c + "y"), reader("r")),
                    "target", BIDI_MESSAGE, c);
            assertOnlyError(api.get("/v1/leases?holder=" + query("pod" + c + "1"), reader("r")), "holder",
                    BIDI_MESSAGE, c);
        }
    }

    @Test
    void otherInvisibleCharactersAreKeptAsSentAndFindTheirLease() {
        String zeroWidthSpace = "a\u200Bb";
        String emojiSequence = "\uD83D\uDC69\u200D\uD83D\uDCBB"; // woman, zero width joiner, laptop
        for (String value : List.of(zeroWidthSpace, emojiSequence)) {
            Api.Response granted = acquire(writer("alice"), value, "a", "pod\u200B" + value, 30);
            assertThat(granted.status()).as(granted.raw()).isEqualTo(201);
            assertThat(granted.body().get("target").get("value").asString()).isEqualTo(value);
            assertThat(granted.body().get("holder").asString()).isEqualTo("pod\u200B" + value);
            Api.Response current = api.get("/v1/leases/current?targetType=opaque&actor=a&target=" + query(value),
                    reader("r"));
            assertThat(current.body().get("leaseId").asString()).isEqualTo(granted.body().get("leaseId").asString());
        }
    }

    // Members the contract does not name.

    @Test
    void anUnknownMemberIsNamedAsUnknownWithTheMemberMeantWhenOneIsClose() {
        String leaseId = acquire(writer("alice"), "renewed", "a", "h", 30).body().get("leaseId").asString();
        Map<String, Post> cases = new LinkedHashMap<>();
        cases.put("ttl:ttlSeconds", new Post("/v1/leases", "{" + KEY + ",\"holder\":\"h\",\"ttl\":30}"));
        cases.put("holdr:holder", new Post("/v1/leases", "{" + KEY + ",\"holdr\":\"h\",\"ttlSeconds\":30}"));
        cases.put("TTL_seconds:ttlSeconds", new Post("/v1/leases", "{" + KEY + ",\"holder\":\"h\",\"TTL_seconds\":30}"));
        cases.put("waitSecond:waitSeconds", new Post("/v1/leases",
                "{" + KEY + ",\"holder\":\"h\",\"ttlSeconds\":30,\"waitSecond\":1}"));
        cases.put("target.vaule:value", new Post("/v1/leases",
                "{\"target\":{\"type\":\"opaque\",\"vaule\":\"x\"},\"actor\":\"a\",\"holder\":\"h\",\"ttlSeconds\":30}"));
        cases.put("ttl:ttlSeconds (renew)", new Post("/v1/leases/" + leaseId + "/renew", "{\"fencingToken\":1,\"ttl\":5}"));
        cases.put("token:fencingToken", new Post("/v1/leases/" + leaseId + "/release", "{\"token\":1}"));
        long[] before = rowCounts();
        cases.forEach((name, post) -> {
            String field = name.substring(0, name.indexOf(':'));
            String meant = name.substring(name.indexOf(':') + 1).replace(" (renew)", "");
            Api.Response r = api.post(post.path(), writer("alice"), post.body());
            assertOnlyError(r, field, "is unknown; did you mean " + meant + "?", name);
        });
        assertThat(api.post("/v1/admin/leases/" + leaseId + "/revoke", admin("root"), "{\"reasn\":\"x\"}").body()
                .get("errors").get(0).get("message").asString()).isEqualTo("is unknown; did you mean reason?");
        assertThat(rowCounts()).isEqualTo(before);
    }

    @Test
    void anUnknownMemberCloseToNoneIsNamedWithTheMembersTheBodyHas() {
        Api.Response r = api.post("/v1/leases", writer("alice"), "{" + KEY + ",\"holder\":\"h\",\"ttlSeconds\":30,\"foo\":1}");
        assertOnlyError(r, "foo", "is unknown; the known fields here are actor, ", "foo");
        String message = r.body().get("errors").get(0).get("message").asString();
        assertThat(message).contains("ttlSeconds").contains("holder").doesNotContain("did you mean");
        assertThat(r.body().get("detail").asString()).isEqualTo("foo " + message);
    }

    @Test
    void bytesThatAreNotUtf8AreSaidToBeSoNotCalledAnUnknownOrMistypedMember() {
        Map<String, byte[]> cases = new LinkedHashMap<>();
        cases.put("invalid start byte", body("{" + KEY + ",\"holder\":\"", new byte[] {(byte) 0xFF}, "\",\"ttlSeconds\":30}"));
        cases.put("truncated sequence", body("{" + KEY + ",\"holder\":\"", new byte[] {(byte) 0xC3, 'x'}, "\",\"ttlSeconds\":30}"));
        long[] before = rowCounts();
        cases.forEach((name, bytes) -> {
            Api.Response r = api.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/leases"))
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofByteArray(bytes)), writer("alice"));
            assertOnlyError(r, "holder", "holds bytes that are not UTF-8 at line 1, column ", name);
        });
        assertThat(rowCounts()).isEqualTo(before);
    }

    // Numbers out of range.

    @Test
    void everyNumberOutOfItsFieldsRangeIsToldTheRange() {
        String leaseId = acquire(writer("alice"), "ranges", "a", "h", 30).body().get("leaseId").asString();
        Map<String, String> acquires = new LinkedHashMap<>();
        for (String ttl : List.of("3601", "0", "-5", "1e12", "1000000000000", "99999999999999999999999", "1e400", "-1e400",
                "1E+999999999")) {
            acquires.put("ttlSeconds=" + ttl + ":ttlSeconds:1..3600", "\"holder\":\"h\",\"ttlSeconds\":" + ttl);
        }
        for (String wait : List.of("31", "-1", "1e12", "1e400", "2147483648")) {
            acquires.put("waitSeconds=" + wait + ":waitSeconds:0..30", "\"holder\":\"h\",\"ttlSeconds\":30,\"waitSeconds\":" + wait);
        }
        acquires.put("lockDelaySeconds=61:lockDelaySeconds:0..60", "\"holder\":\"h\",\"ttlSeconds\":30,\"lockDelaySeconds\":61");
        acquires.put("lockDelaySeconds=-1:lockDelaySeconds:0..60", "\"holder\":\"h\",\"ttlSeconds\":30,\"lockDelaySeconds\":-1");
        acquires.put("maxLifetimeSeconds=1e12:maxLifetimeSeconds:1..604800",
                "\"holder\":\"h\",\"ttlSeconds\":30,\"maxLifetimeSeconds\":1e12");
        acquires.put("maxLifetimeSeconds=-30:maxLifetimeSeconds:1..604800",
                "\"holder\":\"h\",\"ttlSeconds\":30,\"maxLifetimeSeconds\":-30");
        long[] before = rowCounts();
        acquires.forEach((name, members) -> {
            String[] parts = name.split(":");
            assertOnlyError(api.post("/v1/leases", writer("alice"), "{" + KEY + "," + members + "}"), parts[1],
                    "must be within " + parts[2], name);
        });
        for (String token : List.of("0", "-1", "9007199254740992", "1e30", "123456789012345678901234567890")) {
            assertOnlyError(api.post("/v1/leases/" + leaseId + "/renew", writer("alice"), "{\"fencingToken\":" + token + "}"),
                    "fencingToken", "must be within 1..9007199254740991", token);
            assertOnlyError(api.post("/v1/leases/" + leaseId + "/release", writer("alice"), "{\"fencingToken\":" + token + "}"),
                    "fencingToken", "must be within 1..9007199254740991", token);
        }
        assertOnlyError(api.post("/v1/leases/" + leaseId + "/renew", writer("alice"), "{\"fencingToken\":1,\"ttlSeconds\":1e12}"),
                "ttlSeconds", "must be within 1..3600", "renew ttlSeconds");
        assertThat(rowCounts()).isEqualTo(before);
    }

    @Test
    void aNumberLongerThanTheJsonReaderTakesIsSaidToBeSo() {
        Api.Response r = api.post("/v1/leases", writer("alice"),
                "{" + KEY + ",\"holder\":\"h\",\"ttlSeconds\":" + "9".repeat(1001) + "}");
        assertThat(r.status()).isEqualTo(400);
        assertThat(r.body().get("errors").get(0).get("message").asString())
                .isEqualTo("is beyond what the JSON reader accepts: Number value length (1001) exceeds the maximum allowed (1000)");
    }

    @Test
    void everyQueryNumberOutOfItsRangeIsToldTheRangeAndTextThatIsNoNumberTheRangeToo() {
        String leaseId = acquire(writer("alice"), "query-ranges", "a", "h", 30).body().get("leaseId").asString();
        for (String limit : List.of("0", "1001", "-1", "99999999999", "1e12", "99999999999999999999999")) {
            assertOnlyError(api.get("/v1/leases?limit=" + limit, reader("r")), "limit", "must be within 1..1000", limit);
            assertOnlyError(api.get("/v1/leases/" + leaseId + "/events?limit=" + limit, reader("r")), "limit",
                    "must be within 1..1000", limit);
        }
        for (String wait : List.of("31", "-1", "99999999999")) {
            assertOnlyError(api.get("/v1/leases/" + leaseId + "?waitSeconds=" + wait, reader("r")), "waitSeconds",
                    "must be within 0..30", wait);
        }
        assertOnlyError(api.get("/v1/leases?limit=abc", reader("r")), "limit", "must be a whole number within 1..1000", "abc");
        assertOnlyError(api.get("/v1/leases?limit=2.5", reader("r")), "limit", "must be a whole number within 1..1000", "2.5");
        assertThat(api.get("/v1/leases?limit=1000", reader("r")).status()).isEqualTo(200);
        assertThat(api.get("/v1/leases/" + leaseId + "?waitSeconds=0", reader("r")).status()).isEqualTo(200);
    }

    @Test
    void aNumberWithAFractionIsToldItMustBeWholeAndAWholeOneIsReadByValueWhateverItsNotation() {
        assertOnlyError(api.post("/v1/leases", writer("alice"), "{" + KEY + ",\"holder\":\"h\",\"ttlSeconds\":1.5}"),
                "ttlSeconds", "must be a whole number within 1..3600", "1.5");
        for (String written : List.of("30.0", "3e1", "3.0E1", "300e-1")) {
            Api.Response r = api.post("/v1/leases", writer("bob"), "{\"target\":{\"type\":\"opaque\",\"value\":\"n "
                    + written + "\"},\"actor\":\"b\",\"holder\":\"h\",\"ttlSeconds\":" + written + "}");
            assertThat(r.status()).as(written).isEqualTo(201);
            assertThat(r.body().get("ttlSeconds").asInt()).as(written).isEqualTo(30);
        }
    }

    // Syntax errors and wrong types.

    @Test
    void malformedJsonIsPlacedByLineAndColumn() {
        assertOnlyError(api.post("/v1/leases", writer("alice"), "{\"target\": "), "body",
                "is not valid JSON at line 1, column 12: the body ends before its JSON is complete", "end of input");
        assertOnlyError(api.post("/v1/leases", writer("alice"), "{\n  \"actor\": \"a\",\n  ttlSeconds: 30\n}"), "body",
                "is not valid JSON at line 3, column 3: Unexpected character ('t' (code 116)): was expecting"
                        + " double-quote to start property name", "unquoted name");
        assertOnlyError(api.post("/v1/leases", writer("alice"), "{\"holder\": 'h'}"), "body",
                "is not valid JSON at line 1, column 12: ", "single quotes");
    }

    @Test
    void aSyntaxErrorEchoesNoMoreThanAShortExcerptOfTheBody() {
        String secret = "s3cr3t".repeat(100);
        Api.Response r = api.post("/v1/leases", writer("alice"), "{\"holder\": " + secret + "}");
        assertOnlyError(r, "body", "is not valid JSON at line 1, column 12: Unrecognized token 's3cr3t", "long token");
        String message = r.body().get("errors").get(0).get("message").asString();
        assertThat(message.length()).isLessThanOrEqualTo(160);
        assertThat(r.raw()).doesNotContain(secret.substring(0, 120));
    }

    @Test
    void aValueOfTheWrongTypeIsToldTheTypeExpectedAndTheTypeFound() {
        Map<String, String> cases = new LinkedHashMap<>();
        cases.put("holder:must be a string, not a number", "{" + KEY + ",\"holder\":123,\"ttlSeconds\":30}");
        cases.put("ttlSeconds:must be a whole number, not a string", "{" + KEY + ",\"holder\":\"h\",\"ttlSeconds\":\"30\"}");
        cases.put("ttlSeconds:must be a whole number, not true or false", "{" + KEY + ",\"holder\":\"h\",\"ttlSeconds\":true}");
        cases.put("target:must be an object, not a string",
                "{\"target\":\"opaque:x\",\"actor\":\"a\",\"holder\":\"h\",\"ttlSeconds\":30}");
        cases.put("metadata:must be an object, not an array", "{" + KEY + ",\"holder\":\"h\",\"ttlSeconds\":30,\"metadata\":[1]}");
        cases.forEach((name, body) -> {
            String[] expected = name.split(":");
            assertOnlyError(api.post("/v1/leases", writer("alice"), body), expected[0], expected[1], name);
        });
    }

    private record Post(String path, String body) {
    }

    /** 400 VALIDATION_FAILED whose one error names {@code field} with a message starting {@code message}. */
    private static void assertOnlyError(Api.Response r, String field, String message, Object name) {
        assertThat(r.status()).as("%s: %s", name, r.raw()).isEqualTo(400);
        assertThat(r.code()).as("%s", name).isEqualTo("VALIDATION_FAILED");
        JsonNode errors = r.body().get("errors");
        assertThat(errors.size()).as("%s: %s", name, r.raw()).isEqualTo(1);
        assertThat(errors.get(0).get("field").asString()).as("%s: %s", name, r.raw()).isEqualTo(field);
        assertThat(errors.get(0).get("message").asString()).as("%s", name).startsWith(message);
    }

    private static String query(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8);
    }

    private static byte[] body(String before, byte[] raw, String after) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Function<String, byte[]> utf8 = s -> s.getBytes(StandardCharsets.UTF_8);
        out.writeBytes(utf8.apply(before));
        out.writeBytes(raw);
        out.writeBytes(utf8.apply(after));
        return out.toByteArray();
    }

    private long[] rowCounts() {
        return new long[] {
                jdbc.sql("SELECT count(*) FROM lease_key").query(Long.class).single(),
                jdbc.sql("SELECT count(*) FROM lease").query(Long.class).single(),
                jdbc.sql("SELECT count(*) FROM lease_event").query(Long.class).single()};
    }
}

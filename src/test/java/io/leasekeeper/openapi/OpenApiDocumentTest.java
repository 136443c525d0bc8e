package io.leasekeeper.openapi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.leasekeeper.support.Api;
import io.leasekeeper.support.IntegrationTest;
import io.leasekeeper.support.TestTokens;
import io.leasekeeper.web.ErrorCode;
import io.swagger.v3.parser.OpenAPIV3Parser;
import io.swagger.v3.parser.core.models.ParseOptions;
import io.swagger.v3.parser.core.models.SwaggerParseResult;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.core.util.DefaultIndenter;
import tools.jackson.core.util.DefaultPrettyPrinter;
import tools.jackson.core.util.Separators;
import tools.jackson.databind.json.JsonMapper;

/**
 * The OpenAPI document: served without a token, equal to the committed docs/reference/openapi.json, read by an
 * independent parser without a message, and true to the running service (operations, codes, scopes,
 * body shapes).
 */
class OpenApiDocumentTest extends IntegrationTest {

    static final Path COMMITTED = Path.of("docs/reference/openapi.json");
    private static final JsonMapper JSON = JsonMapper.builder().build();
    /** Two spaces, one entry a line, "name": value: the layout reviewers diff. */
    private static final DefaultPrettyPrinter LAYOUT = new DefaultPrettyPrinter()
            .withSeparators(Separators.createDefaultInstance().withObjectNameValueSpacing(Separators.Spacing.AFTER))
            .withArrayIndenter(new DefaultIndenter("  ", "\n"))
            .withObjectIndenter(new DefaultIndenter("  ", "\n"));
    private static final List<String> SCOPES = List.of("leases:read", "leases:write", "leases:admin");

    /** The contract's operations: method, path and the operationId a generated client names its method after. */
    private static final List<List<String>> CONTRACT_OPERATIONS = List.of(
            List.of("post", "/v1/leases", "acquire"),
            List.of("post", "/v1/leases/{leaseId}/renew", "renew"),
            List.of("post", "/v1/leases/{leaseId}/release", "release"),
            List.of("get", "/v1/leases/{leaseId}", "inspect"),
            List.of("get", "/v1/leases/current", "current"),
            List.of("get", "/v1/leases", "list"),
            List.of("get", "/v1/leases/{leaseId}/events", "history"),
            List.of("post", "/v1/admin/leases/{leaseId}/revoke", "revoke"));

    private JsonNode served() {
        Api.Response response = api.get("/v3/api-docs", null);
        assertThat(response.status()).as(response.raw()).isEqualTo(200);
        return response.body();
    }

    /**
     * To accept an intended change: {@code bash .ci/run -P '!harness' -Dtest=OpenApiDocumentTest
     * -Dopenapi.update=true}, which rewrites docs/reference/openapi.json and still fails this run; review the diff,
     * commit it, and the next run passes.
     */
    @Test
    void theServedDocumentIsTheCommittedOne() throws IOException {
        JsonNode served = served();
        JsonNode committed = Files.exists(COMMITTED) ? JSON.readTree(Files.readString(COMMITTED)) : null;
        if (served.equals(committed)) {
            return;
        }
        if (Boolean.getBoolean("openapi.update")) {
            Files.writeString(COMMITTED, JSON.writer().with(LAYOUT).writeValueAsString(served) + "\n");
            fail(COMMITTED + " was rewritten from the served document: review and commit it, then run again"
                    + " without -Dopenapi.update.");
        }
        fail("GET /v3/api-docs differs from " + COMMITTED + " first at " + firstDifference("", served, committed)
                + ". If the change is intended, rewrite the committed"
                + " document with: bash .ci/run -P '!harness' -Dtest=OpenApiDocumentTest -Dopenapi.update=true"
                + " -Dsurefire.failIfNoSpecifiedTests=false, then review and commit it.");
    }

    @Test
    void anIndependentParserReadsTheCommittedDocumentWithoutMessages() throws IOException {
        ParseOptions options = new ParseOptions();
        options.setResolve(true);
        SwaggerParseResult result = new OpenAPIV3Parser().readContents(Files.readString(COMMITTED), null, options);

        assertThat(result.getMessages()).isEmpty();
        assertThat(result.getOpenAPI()).isNotNull();
        assertThat(result.getOpenAPI().getOpenapi()).isEqualTo("3.0.1");
        assertThat(result.getOpenAPI().getPaths()).containsOnlyKeys(
                CONTRACT_OPERATIONS.stream().map(o -> o.get(1)).toArray(String[]::new));
    }

    @Test
    void theDocumentNeedsNoTokenWhileTheApiStillDoes() {
        Api.Response document = api.get("/v3/api-docs", null);
        assertThat(document.status()).isEqualTo(200);
        assertThat(document.header("Content-Type")).startsWith("application/json");
        assertThat(document.body().path("openapi").asString()).isEqualTo("3.0.1");
        assertThat(api.get("/v3/api-docs.yaml", null).raw()).startsWith("openapi: 3.0.1");

        Api.Response leases = api.get("/v1/leases", null);
        assertThat(leases.status()).isEqualTo(401);
        assertThat(leases.code()).isEqualTo("UNAUTHENTICATED");
        // Only reading the document is open.
        assertThat(api.post("/v3/api-docs", null, Map.of()).status()).isEqualTo(401);
    }

    @Test
    void everyContractOperationIsDescribedUnderItsOperationId() {
        JsonNode paths = served().path("paths");
        List<String> described = new ArrayList<>();
        paths.properties().forEach(path -> path.getValue().propertyNames()
                .forEach(method -> described.add(method + " " + path.getKey())));

        assertThat(described).containsExactlyInAnyOrderElementsOf(
                CONTRACT_OPERATIONS.stream().map(o -> o.get(0) + " " + o.get(1)).toList());
        for (List<String> operation : CONTRACT_OPERATIONS) {
            assertThat(paths.path(operation.get(1)).path(operation.get(0)).path("operationId").asString())
                    .isEqualTo(operation.get(2));
        }
    }

    @Test
    void everyErrorCodeIsDocumentedWithItsStatus() {
        JsonNode document = served();
        List<String> enumerated = new ArrayList<>();
        document.at("/components/schemas/Problem/properties/code/enum").values()
                .forEach(code -> enumerated.add(code.asString()));
        assertThat(enumerated).containsExactlyInAnyOrderElementsOf(
                Arrays.stream(ErrorCode.values()).map(Enum::name).toList());

        Set<String> answered = new TreeSet<>();
        document.path("paths").values().forEach(path -> path.values().forEach(operation ->
                operation.path("responses").properties().forEach(response -> response.getValue()
                        .at("/content/application~1problem+json/examples").properties().forEach(example -> {
                            ErrorCode code = ErrorCode.valueOf(example.getKey());
                            if (!response.getKey().equals("default")) {
                                assertThat(response.getKey()).as(example.getKey())
                                        .isEqualTo(Integer.toString(code.status().value()));
                            }
                            answered.add(code.name());
                        }))));
        assertThat(answered).containsExactlyInAnyOrderElementsOf(enumerated);
    }

    /** Each operation is admitted by exactly the scopes its x-accepted-scopes names, with a bearer token. */
    @Test
    void theDocumentedScopesAreTheOnesTheServiceEnforces() {
        JsonNode paths = served().path("paths");
        for (List<String> operation : CONTRACT_OPERATIONS) {
            JsonNode described = paths.path(operation.get(1)).path(operation.get(0));
            assertThat(described.path("security").toString()).isEqualTo("[{\"bearer\":[]}]");
            Set<String> admitting = new HashSet<>();
            described.path("x-accepted-scopes").values().forEach(scope -> admitting.add(scope.asString()));
            assertThat(admitting).as(operation.get(2)).isNotEmpty();

            for (String scope : admitting) {
                Api.Response admitted = call(operation, List.of(scope));
                assertThat(admitted.status()).as(operation.get(2) + " with " + scope).isNotIn(401, 403);
            }
            List<String> others = SCOPES.stream().filter(s -> !admitting.contains(s)).toList();
            Api.Response refused = call(operation, others);
            assertThat(refused.status()).as(operation.get(2) + " with " + others).isEqualTo(403);
            assertThat(refused.code()).isEqualTo("INSUFFICIENT_SCOPE");
        }
    }

    /** Response bodies carry exactly the documented properties: all of them, null only where the schema allows. */
    @Test
    void responseBodiesHaveExactlyTheDocumentedProperties() {
        JsonNode schemas = served().at("/components/schemas");
        String alice = writer("alice");
        Api.Response granted = acquire(alice, "documented", "job", "pod-a", 30);
        String leaseId = granted.body().path("leaseId").asString();
        renew(alice, leaseId, granted.body().path("fencingToken").asLong());

        assertMatches(schemas, "Lease", granted.body());
        assertMatches(schemas, "LeaseTarget", granted.body().path("target"));
        JsonNode page = api.get("/v1/leases", alice).body();
        assertMatches(schemas, "LeasePage", page);
        JsonNode history = api.get("/v1/leases/" + leaseId + "/events", alice).body();
        assertMatches(schemas, "EventPage", history);
        history.path("items").values().forEach(event -> assertMatches(schemas, "LeaseEvent", event));

        JsonNode held = acquire(writer("bob"), "documented", "job", "pod-b", 30).body();
        assertThat(schemas.at("/Problem/properties").propertyNames()).containsAll(held.propertyNames());
        assertMatches(schemas, "LeaseHolder", held.path("holder"));
        JsonNode invalid = api.post("/v1/leases", alice, Map.of()).body();
        assertThat(schemas.at("/Problem/properties").propertyNames()).containsAll(invalid.propertyNames());
        invalid.path("errors").values().forEach(error -> assertMatches(schemas, "FieldError", error));
    }

    /** The JSON pointer of the first place where two documents differ, for a failure a reader can act on. */
    private static String firstDifference(String pointer, JsonNode served, JsonNode committed) {
        if (committed == null || served.isObject() != committed.isObject() || served.isArray() != committed.isArray()
                || served.size() != committed.size() || !served.isContainer()) {
            return pointer.isEmpty() ? "/" : pointer;
        }
        Set<String> names = new TreeSet<>(served.propertyNames());
        names.addAll(committed.propertyNames());
        for (int i = 0; i < served.size() && served.isArray(); i++) {
            if (!served.get(i).equals(committed.get(i))) {
                return firstDifference(pointer + "/" + i, served.get(i), committed.get(i));
            }
        }
        for (String name : names) {
            if (!served.path(name).equals(committed.path(name))) {
                return firstDifference(pointer + "/" + name.replace("~", "~0").replace("/", "~1"),
                        served.path(name), committed.get(name));
            }
        }
        return pointer;
    }

    private static void assertMatches(JsonNode schemas, String name, JsonNode body) {
        JsonNode schema = schemas.path(name);
        assertThat(body.propertyNames()).as(name).containsExactlyInAnyOrderElementsOf(
                schema.path("properties").propertyNames());
        List<String> required = new ArrayList<>();
        schema.path("required").values().forEach(r -> required.add(r.asString()));
        assertThat(required).as(name + " required").containsExactlyInAnyOrderElementsOf(body.propertyNames());
        body.properties().forEach(property -> {
            if (property.getValue().isNull()) {
                assertThat(schema.at("/properties/" + property.getKey() + "/nullable").asBoolean())
                        .as(name + "." + property.getKey() + " is null, so its schema must allow null")
                        .isTrue();
            }
        });
    }

    /** Calls an operation with a token of these scopes; the arguments are just enough to pass authorization. */
    private Api.Response call(List<String> operation, List<String> scopes) {
        String token = TestTokens.token("scope-check", tenant, scopes);
        String path = operation.get(1).replace("{leaseId}", UUID.randomUUID().toString());
        if (operation.get(0).equals("get")) {
            return api.get(path, token);
        }
        return api.post(path, token, "{}");
    }
}

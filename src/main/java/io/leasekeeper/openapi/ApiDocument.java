package io.leasekeeper.openapi;

import io.leasekeeper.idempotency.IdempotencyKeys;
import io.leasekeeper.security.Caller;
import io.leasekeeper.key.TargetType;
import io.leasekeeper.web.TraceIds;
import io.swagger.v3.core.converter.AnnotatedType;
import io.swagger.v3.core.converter.ModelConverters;
import io.swagger.v3.oas.models.Components;
import io.swagger.v3.oas.models.OpenAPI;
import io.swagger.v3.oas.models.Operation;
import io.swagger.v3.oas.models.PathItem;
import io.swagger.v3.oas.models.headers.Header;
import io.swagger.v3.oas.models.info.Info;
import io.swagger.v3.oas.models.media.IntegerSchema;
import io.swagger.v3.oas.models.media.StringSchema;
import io.swagger.v3.oas.models.parameters.Parameter;
import io.swagger.v3.oas.models.security.SecurityRequirement;
import io.swagger.v3.oas.models.security.SecurityScheme;
import io.swagger.v3.oas.models.servers.Server;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import org.springdoc.core.customizers.OpenApiCustomizer;
import org.springdoc.core.customizers.OperationCustomizer;
import org.springdoc.core.utils.SpringDocUtils;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpHeaders;

/**
 * The OpenAPI document served at {@code GET /v3/api-docs} (no token) and committed as docs/reference/openapi.json:
 * springdoc reads the controllers; this class adds what it cannot see (bearer scopes, problems, headers)
 * and keeps the document the same on every run (no server URL with the port it was asked on).
 */
@Configuration(proxyBeanMethods = false)
class ApiDocument {

    static final String BEARER = "bearer";
    /** Per operation: the scopes of which any one admits the call (OpenAPI 3.0 has no place for a bearer token's scopes). */
    static final String ACCEPTED_SCOPES = "x-accepted-scopes";
    /** Response bodies the service always sends whole: every property present, null where the schema allows it. */
    static final Set<String> WHOLE_BODIES = Set.of("Lease", "LeaseTarget", "LeasePage", "EventPage", "LeaseEvent",
            "FieldError");

    static {
        // The caller is taken from the bearer token, not from the request.
        SpringDocUtils.getConfig().addRequestWrapperToIgnore(Caller.class);
    }

    @Bean
    OpenAPI leasekeeperOpenApi() {
        Components components = new Components()
                .addSecuritySchemes(BEARER, new SecurityScheme().type(SecurityScheme.Type.HTTP).scheme("bearer")
                        .bearerFormat("JWT").description("""
                                An OAuth2 JWT access token. Its `scope` claim grants `leases:read` (reads), \
                                `leases:write` (acquire, renew, release, and reads) or `leases:admin` (revoke, and \
                                reads); its tenant claim (`tenant` unless configured otherwise) confines every call \
                                to that tenant (another tenant's lease answers 404, as one that does not exist), \
                                and its `sub` is the lease owner. Each operation lists the scopes \
                                of which any one admits it in `x-accepted-scopes`, and in its description."""))
                .addParameters(IdempotencyKeys.HEADER, new Parameter().in("header").name(IdempotencyKeys.HEADER)
                        .required(false).schema(new StringSchema().pattern("^\"?[\\x21\\x23-\\x7E]{1,255}\"?$"))
                        .description("""
                                Makes the write safe to retry: 1..255 printable ASCII characters (a structured-field \
                                string; quotes optional), unique per logical request of the caller. A retry with the \
                                same key, method, path and body answers the first success again, with the lease as \
                                it is now and `Idempotent-Replayed: true`; it never acts twice. The same key with a \
                                different request answers 422 IDEMPOTENCY_KEY_REUSED. Refusals are not remembered: \
                                their retry runs again. Keys are kept for `leasekeeper.idempotency.retention` (24 h \
                                by default)."""))
                .addHeaders(TraceIds.TRACE_ID_HEADER, new Header().schema(new StringSchema().pattern("^[0-9a-f]{32}$"))
                        .description("The request's W3C trace id (the caller's traceparent continued, or a new one);"
                                + " problems, audit events and logs of the request carry the same id."))
                .addHeaders(HttpHeaders.LOCATION, new Header().schema(new StringSchema().format("uri-reference"))
                        .description("The new lease: /v1/leases/{leaseId}."))
                .addHeaders(HttpHeaders.RETRY_AFTER, new Header().schema(new IntegerSchema().minimum(java.math.BigDecimal.ONE))
                        .description("Whole seconds to wait before trying again: with LEASE_HELD until the"
                                + " holding lease expires unless renewed; with LOCK_DELAYED until availableAt; with"
                                + " DATABASE_UNAVAILABLE a short pause; with TOKEN_KEYS_UNAVAILABLE until the service"
                                + " asks the token issuer for its keys again."))
                .addHeaders(IdempotencyKeys.REPLAYED_HEADER, new Header()
                        .schema(new StringSchema()._enum(List.of("true")))
                        .description("Present, `true`, when the answer replays the first answer to the same"
                                + " Idempotency-Key; the lease is shown as it is now."));
        components.setExamples(ContractAnswers.examples());
        ModelConverters.getInstance(false).readAll(new AnnotatedType(ProblemSchemas.Problem.class))
                .forEach(components::addSchemas);
        return new OpenAPI()
                .info(new Info().title("Leasekeeper HTTP API").version("1.1").description("""
                        TTL leases with fencing tokens on PostgreSQL. This document is the machine-readable form \
                        of the HTTP API's reference (docs/reference/http-api.md in the repository: revisions 1.0 \
                        and 1.1, and of revision 1.2 the refusals of load a client caused and of keys that could \
                        deceive); a test keeps the committed copy (docs/reference/openapi.json) equal to the one \
                        served."""))
                .servers(List.of(new Server().url("/").description("The service's API port (8080 by default).")))
                .components(components);
    }

    @Bean
    OperationCustomizer contractAnswers() {
        return new ContractAnswers();
    }

    /** Scopes per operation, and the schema facts springdoc cannot infer from the records. */
    @Bean
    OpenApiCustomizer scopesAndWholeBodies() {
        return openApi -> {
            openApi.getPaths().forEach((path, item) -> item.readOperationsMap().forEach((method, operation) ->
                    requireScopes(operation, scopesAdmitting(method, path))));
            openApi.getComponents().getSchemas().forEach((name, schema) -> {
                if (WHOLE_BODIES.contains(name) && schema.getProperties() != null) {
                    schema.setRequired(List.copyOf(schema.getProperties().keySet()));
                }
            });
            List<String> targetTypes = Arrays.stream(TargetType.values()).map(TargetType::wireName).toList();
            for (String target : List.of("Target", "LeaseTarget")) {
                openApi.getComponents().getSchemas().get(target).getProperties()
                        .put("type", new StringSchema()._enum(targetTypes));
            }
        };
    }

    /**
     * SecurityConfig's rules, stated per operation: any one of the returned scopes admits the call.
     * OpenApiDocumentTest checks each documented scope against the running service.
     */
    static List<String> scopesAdmitting(PathItem.HttpMethod method, String path) {
        if (path.startsWith("/v1/admin/")) {
            return List.of("leases:admin");
        }
        if (method == PathItem.HttpMethod.GET) {
            return List.of("leases:read", "leases:write", "leases:admin");
        }
        return List.of("leases:write");
    }

    private static void requireScopes(Operation operation, List<String> scopes) {
        operation.setSecurity(List.of(new SecurityRequirement().addList(BEARER)));
        operation.addExtension(ACCEPTED_SCOPES, scopes);
        String prose = "Scope: " + String.join(" or ", scopes.stream().map(s -> "`" + s + "`").toList()) + ".";
        String description = operation.getDescription();
        if (description == null) {
            operation.setDescription(prose);
        } else if (!description.endsWith(prose)) {
            operation.setDescription(description + "\n\n" + prose);
        }
    }
}

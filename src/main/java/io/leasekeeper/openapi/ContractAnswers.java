package io.leasekeeper.openapi;

import static io.leasekeeper.web.ErrorCode.DATABASE_UNAVAILABLE;
import static io.leasekeeper.web.ErrorCode.TOKEN_KEYS_UNAVAILABLE;
import static io.leasekeeper.web.ErrorCode.IDEMPOTENCY_KEY_REUSED;
import static io.leasekeeper.web.ErrorCode.INSUFFICIENT_SCOPE;
import static io.leasekeeper.web.ErrorCode.INTERNAL_ERROR;
import static io.leasekeeper.web.ErrorCode.LEASE_HELD;
import static io.leasekeeper.web.ErrorCode.LOCK_DELAYED;
import static io.leasekeeper.web.ErrorCode.METHOD_NOT_ALLOWED;
import static io.leasekeeper.web.ErrorCode.NOT_ACCEPTABLE;
import static io.leasekeeper.web.ErrorCode.NOT_FOUND;
import static io.leasekeeper.web.ErrorCode.RATE_LIMITED;
import static io.leasekeeper.web.ErrorCode.TENANT_BUSY;
import static io.leasekeeper.web.ErrorCode.REQUEST_REJECTED;
import static io.leasekeeper.web.ErrorCode.REQUEST_TOO_LARGE;
import static io.leasekeeper.web.ErrorCode.UNAUTHENTICATED;
import static io.leasekeeper.web.ErrorCode.UNSUPPORTED_MEDIA_TYPE;
import static io.leasekeeper.web.ErrorCode.VALIDATION_FAILED;

import io.leasekeeper.idempotency.IdempotencyKeys;
import io.leasekeeper.key.LeaseKey;
import io.leasekeeper.key.Names;
import io.leasekeeper.key.TargetType;
import io.leasekeeper.web.ErrorCode;
import io.leasekeeper.web.TraceIds;
import io.swagger.v3.oas.models.Operation;
import io.swagger.v3.oas.models.examples.Example;
import io.swagger.v3.oas.models.headers.Header;
import io.swagger.v3.oas.models.media.Content;
import io.swagger.v3.oas.models.media.IntegerSchema;
import io.swagger.v3.oas.models.media.MediaType;
import io.swagger.v3.oas.models.media.Schema;
import io.swagger.v3.oas.models.media.StringSchema;
import io.swagger.v3.oas.models.parameters.Parameter;
import io.swagger.v3.oas.models.responses.ApiResponse;
import io.swagger.v3.oas.models.responses.ApiResponses;
import java.math.BigDecimal;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.springdoc.core.customizers.OperationCustomizer;
import org.springframework.http.HttpHeaders;
import org.springframework.web.method.HandlerMethod;

/**
 * Writes each operation's answers into the OpenAPI document: its success with the headers it carries,
 * and one {@code application/problem+json} response per status with the codes possible there. The codes
 * come from the handler's {@link ProblemCodes} plus the rules below, which hold for every operation;
 * statuses and titles come from {@link ErrorCode}, so the document cannot disagree with the problems sent.
 */
final class ContractAnswers implements OperationCustomizer {

    static final String PROBLEM_JSON = "application/problem+json";
    static final String PROBLEM_SCHEMA = "#/components/schemas/Problem";

    /**
     * No or a bad token, a token without the scope, the tenant's request rate exceeded, the instance busy with the
     * tenant's share, PostgreSQL away, the issuer's keys never fetched, a bug: possible on every operation.
     */
    static final Set<ErrorCode> EVERY_OPERATION = EnumSet.of(UNAUTHENTICATED, INSUFFICIENT_SCOPE, RATE_LIMITED,
            TENANT_BUSY, INTERNAL_ERROR, DATABASE_UNAVAILABLE, TOKEN_KEYS_UNAVAILABLE);
    /** Refused before the body is read. */
    static final Set<ErrorCode> WITH_BODY = EnumSet.of(REQUEST_TOO_LARGE, UNSUPPORTED_MEDIA_TYPE);
    /** A malformed key is a 400; a key reused for another request a 422. */
    static final Set<ErrorCode> WITH_IDEMPOTENCY_KEY = EnumSet.of(VALIDATION_FAILED, IDEMPOTENCY_KEY_REUSED);
    /**
     * The web layer's own refusals, for a request no operation serves as sent (path, method, Accept header)
     * or a URL the firewall refuses: the {@code default} response of every operation.
     */
    static final Set<ErrorCode> ANY_REQUEST = EnumSet.of(NOT_FOUND, METHOD_NOT_ALLOWED, NOT_ACCEPTABLE, REQUEST_REJECTED);

    @Override
    public Operation customize(Operation operation, HandlerMethod handler) {
        ProblemCodes declared = handler.getMethodAnnotation(ProblemCodes.class);
        if (declared == null) {
            return operation;
        }
        boolean idempotent = operation.getParameters() != null && useIdempotencyKeyParameter(operation);
        if (operation.getParameters() != null) {
            operation.getParameters().forEach(ContractAnswers::describe);
        }
        Set<ErrorCode> codes = EnumSet.copyOf(List.of(declared.value()));
        codes.addAll(EVERY_OPERATION);
        if (operation.getRequestBody() != null) {
            // Handlers take their body as optional only to answer its absence with VALIDATION_FAILED.
            operation.getRequestBody().setRequired(true);
            codes.addAll(WITH_BODY);
        }
        if (idempotent) {
            codes.addAll(WITH_IDEMPOTENCY_KEY);
        }

        ApiResponses responses = new ApiResponses();
        operation.getResponses().forEach((status, success) -> {
            success.addHeaderObject(TraceIds.TRACE_ID_HEADER, header(TraceIds.TRACE_ID_HEADER));
            if (status.equals("201")) {
                success.addHeaderObject(HttpHeaders.LOCATION, header(HttpHeaders.LOCATION));
            }
            if (idempotent) {
                success.addHeaderObject(IdempotencyKeys.REPLAYED_HEADER, header(IdempotencyKeys.REPLAYED_HEADER));
            }
            responses.addApiResponse(status, success);
        });
        codes.stream().collect(Collectors.groupingBy(c -> c.status().value(), TreeMap::new, Collectors.toList()))
                .forEach((status, ofStatus) -> responses.addApiResponse(Integer.toString(status), problems(ofStatus)));
        ApiResponse refused = problems(List.copyOf(ANY_REQUEST));
        responses.setDefault(refused.description("The web layer's own refusals: no operation serves the request as"
                + " sent (path, method or Accept header), or its URL is refused (REQUEST_REJECTED, 400 or the"
                + " refusal's own status such as 414). " + refused.getDescription()));
        return operation.responses(responses);
    }

    /** The operation's Idempotency-Key header (from the handler's signature) as the shared parameter. */
    private static boolean useIdempotencyKeyParameter(Operation operation) {
        List<Parameter> parameters = operation.getParameters().stream()
                .map(p -> "header".equals(p.getIn()) && IdempotencyKeys.HEADER.equals(p.getName())
                        ? new Parameter().$ref("#/components/parameters/" + IdempotencyKeys.HEADER) : p)
                .toList();
        operation.setParameters(parameters);
        return parameters.stream().anyMatch(p -> p.get$ref() != null);
    }

    /**
     * Path and query parameters: one meaning per name wherever it appears, with the contract's rules (the
     * handlers take every query parameter as text so that one 400 can name each one at fault).
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private static void describe(Parameter parameter) {
        if (parameter.get$ref() != null) {
            return;
        }
        // springdoc hands every parameter of one type the same schema instance: describe a copy of it.
        Schema schema = "integer".equals(parameter.getSchema().getType()) ? new IntegerSchema() : new StringSchema();
        parameter.setSchema(schema);
        switch (parameter.getName()) {
            case "leaseId" -> {
                schema.format("uuid");
                parameter.description("The lease's id, a UUID in canonical form (any other value names no lease: 404).");
            }
            case "program" -> {
                schema.pattern(Names.PATTERN);
                parameter.description("A program name, lowercased by the service. current: absent means `"
                        + LeaseKey.DEFAULT_PROGRAM + "`; list: absent matches every program.");
            }
            case "actor", "operation" -> {
                schema.pattern(Names.PATTERN);
                parameter.description("A name, lowercased by the service. current: an absent operation is the key"
                        + " without one; list: absent matches all.");
            }
            case "targetType" -> schema.setEnum(Arrays.stream(TargetType.values()).map(TargetType::wireName).toList());
            case "target" -> parameter.description("A target value of targetType, normalized as at acquire (list:"
                    + " needs targetType).");
            case "owner" -> {
                schema.minLength(1).maxLength(255);
                parameter.description("Leases of this owner (JWT subject) only.");
            }
            case "holder" -> {
                schema.minLength(1).maxLength(128);
                parameter.description("Leases of this holder only.");
            }
            case "state" -> {
                schema.setEnum(List.of("active", "expired", "released", "revoked", "any"));
                schema.setDefault("active");
                parameter.description("Leases in this effective state; `any` lists all.");
            }
            case "limit" -> {
                schema.minimum(BigDecimal.ONE).maximum(BigDecimal.valueOf(1000));
                schema.setDefault(100);
                parameter.description("Page size.");
            }
            case "cursor" -> parameter.description("The nextCursor of the previous page.");
            default -> { }
        }
    }

    private static ApiResponse problems(List<ErrorCode> codes) {
        Map<String, Example> examples = new LinkedHashMap<>();
        for (ErrorCode code : codes) {
            examples.put(code.name(), new Example().$ref("#/components/examples/" + code.name()));
        }
        ApiResponse response = new ApiResponse()
                .description(codes.stream().map(c -> c.name() + " (" + c.title() + ")")
                        .collect(Collectors.joining(", ", "Problem codes: ", ".")))
                .content(new Content().addMediaType(PROBLEM_JSON,
                        new MediaType().schema(new Schema<>().$ref(PROBLEM_SCHEMA)).examples(examples)));
        response.addHeaderObject(TraceIds.TRACE_ID_HEADER, header(TraceIds.TRACE_ID_HEADER));
        if (codes.contains(LEASE_HELD) || codes.contains(LOCK_DELAYED) || codes.contains(RATE_LIMITED)
                || codes.contains(TENANT_BUSY) || codes.contains(DATABASE_UNAVAILABLE)
                || codes.contains(TOKEN_KEYS_UNAVAILABLE)) {
            response.addHeaderObject(HttpHeaders.RETRY_AFTER, header(HttpHeaders.RETRY_AFTER));
        }
        return response;
    }

    /** One example problem per code, shared by the responses that list the code. */
    static Map<String, Example> examples() {
        Map<String, Example> examples = new LinkedHashMap<>();
        for (ErrorCode code : ErrorCode.values()) {
            examples.put(code.name(), new Example().summary(code.title()).value(example(code)));
        }
        return examples;
    }

    private static Map<String, Object> example(ErrorCode code) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("type", code.typeUri());
        body.put("title", code.title());
        body.put("status", code.status().value());
        body.put("code", code.name());
        body.put("traceId", "4bf92f3577b34da6a3ce929d0e0e4736");
        if (code == VALIDATION_FAILED) {
            body.put("errors", List.of(Map.of("field", "ttlSeconds", "message", "is required")));
        }
        if (code == LEASE_HELD) {
            body.put("holder", Map.of("owner", "svc-indexer", "holder", "indexer-7f9c/pod-2",
                    "expiresAt", "2026-12-02T18:00:40.456Z", "remainingMs", 29987));
        }
        if (code == LOCK_DELAYED) {
            body.put("availableAt", "2026-12-02T18:01:10.456Z");
        }
        return body;
    }

    private static Header header(String name) {
        return new Header().$ref("#/components/headers/" + name);
    }
}

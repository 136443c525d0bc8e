package io.leasekeeper.lease;

import io.leasekeeper.audit.AuditLog;
import io.leasekeeper.config.LeasekeeperProperties;
import io.leasekeeper.key.LeaseKey;
import io.leasekeeper.key.Names;
import io.leasekeeper.key.Target;
import io.leasekeeper.key.TargetType;
import io.leasekeeper.key.Text;
import io.leasekeeper.web.FieldErrors;
import io.swagger.v3.oas.annotations.media.Schema;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import java.util.UUID;
import org.springframework.stereotype.Component;
import tools.jackson.databind.json.JsonMapper;

/** Turns request bodies and query parameters into normalized commands, naming every field at fault. */
@Component
class LeaseRequests {

    // The @Schema constraints are the OpenAPI document's statement of the rules checked below. Whole numbers are
    // taken as BigDecimal so that every JSON number, of any size or notation, gets its field's range in the message
    // (FieldErrors.wholeWithin); the document still calls them integers.

    @Schema(name = "Target", requiredProperties = {"type", "value"})
    record TargetBody(String type,
                      @Schema(minLength = 1, description = "Normalized per type before anything else (opaque:"
                              + " Unicode NFC, surrounding whitespace trimmed, 1..512 characters, no control"
                              + " characters, no bidirectional formatting characters: U+061C, U+200E, U+200F,"
                              + " U+202A..U+202E, U+2066..U+2069).") String value) {
    }

    @Schema(requiredProperties = {"target", "actor", "holder", "ttlSeconds"})
    record AcquireRequest(
            @Schema(pattern = Names.PATTERN, defaultValue = LeaseKey.DEFAULT_PROGRAM, description = "Lowercased.") String program,
            TargetBody target,
            @Schema(pattern = Names.PATTERN, description = "Lowercased.") String actor,
            @Schema(pattern = Names.PATTERN, description = "Lowercased; absent: no operation class (a different key from"
                    + " every operation).") String operation,
            @Schema(minLength = 1, maxLength = 128, description = "The service instance taking the lease;"
                    + " printable, not all blank, no bidirectional formatting characters.") String holder,
            @Schema(type = "integer", format = "int32", minimum = "1",
                    description = "Within leasekeeper.lease.min-ttl..max-ttl (1..3600 by default).")
            BigDecimal ttlSeconds,
            @Schema(type = "integer", format = "int32", minimum = "1", description = "At least ttlSeconds and at most"
                    + " leasekeeper.lease.max-lifetime-cap (7 days by default); absent:"
                    + " leasekeeper.lease.default-max-lifetime (1 day by default).")
            BigDecimal maxLifetimeSeconds,
            @Schema(minLength = 1, maxLength = 128, description = "Printable, not all blank.") String jobId,
            @Schema(minLength = 1, maxLength = 128, description = "Printable, not all blank.") String traceId,
            @Schema(description = "Any JSON object of at most 8 KiB (leasekeeper.lease.metadata-max-size),"
                    + " nested at most 16 levels deep.") Metadata metadata,
            @Schema(type = "integer", format = "int32", minimum = "0", defaultValue = "0", description = "How long to"
                    + " wait for a busy key, within 0..leasekeeper.wait.max (30 by default): the answer comes as soon"
                    + " as the key is granted, or after waitSeconds as a 1.0 acquire of a busy key.")
            BigDecimal waitSeconds,
            @Schema(type = "integer", format = "int32", minimum = "0", maximum = "60", defaultValue = "0",
                    description = "After this lease ends involuntarily (expired, revoked), its key cannot be acquired"
                            + " for this long.")
            BigDecimal lockDelaySeconds) {
    }

    @Schema(requiredProperties = "fencingToken")
    record RenewRequest(@Schema(type = "integer", format = "int64", minimum = "1", maximum = MAX_TOKEN_TEXT,
                                description = "The lease's token.") BigDecimal fencingToken,
                        @Schema(type = "integer", format = "int32", minimum = "1", description = "A new TTL for this"
                                + " and later renewals; absent: the lease's TTL.") BigDecimal ttlSeconds) {
    }

    @Schema(requiredProperties = "fencingToken")
    record ReleaseRequest(@Schema(type = "integer", format = "int64", minimum = "1", maximum = MAX_TOKEN_TEXT,
                                  description = "The lease's token.") BigDecimal fencingToken) {
    }

    @Schema(requiredProperties = "reason")
    record RevokeRequest(@Schema(minLength = 1, maxLength = 512, description = "Printable, not all blank, no"
                         + " bidirectional formatting characters.") String reason) {
    }

    static final int MAX_METADATA_DEPTH = 16;
    static final int MAX_LOCK_DELAY_SECONDS = 60;
    /** Fencing tokens are positive integers below 2^53, exact in every JSON parser (contract 1.1). */
    static final long MAX_TOKEN = (1L << 53) - 1;
    static final String MAX_TOKEN_TEXT = "" + MAX_TOKEN;
    private static final String UNSTORABLE = "must not contain the NUL character or unpaired surrogates";

    private final LeasekeeperProperties.Lease limits;
    private final LeasekeeperProperties.ListPage page;
    private final int maxWaitSeconds;
    private final JsonMapper json;

    LeaseRequests(LeasekeeperProperties properties, JsonMapper json) {
        this.limits = properties.lease();
        this.page = properties.list();
        this.maxWaitSeconds = (int) properties.waiting().max().toSeconds();
        this.json = json;
    }

    AcquireCommand acquire(AcquireRequest r, String tenant) {
        FieldErrors errors = new FieldErrors();
        if (r == null) {
            throw FieldErrors.single("body", "is required");
        }
        LeaseKey key = key(errors, tenant, r.program(), r.target() == null ? null : r.target().type(),
                r.target() == null ? null : r.target().value(), r.actor(), r.operation(), "target.type", "target.value");
        String holder = shownText(errors, "holder", r.holder(), 128, true);
        Integer ttl = ttl(errors, "ttlSeconds", r.ttlSeconds(), true);
        int maxLifetime = (int) limits.defaultMaxLifetime().toSeconds();
        if (r.maxLifetimeSeconds() != null) {
            Long requested = errors.wholeWithin("maxLifetimeSeconds", r.maxLifetimeSeconds(),
                    limits.minTtl().toSeconds(), limits.maxLifetimeCap().toSeconds());
            if (requested != null && ttl != null && requested < ttl) {
                errors.reject("maxLifetimeSeconds", "must not be less than ttlSeconds");
            } else if (requested != null) {
                maxLifetime = requested.intValue();
            }
        }
        String jobId = printable(errors, "jobId", r.jobId(), 128, false);
        String traceId = printable(errors, "traceId", r.traceId(), 128, false);
        Metadata metadata = r.metadata() == null ? Metadata.EMPTY : r.metadata();
        String metadataProblem = metadataProblem(metadata.values(), 1);
        if (metadataProblem != null) {
            errors.reject("metadata", metadataProblem);
        } else if (json.writeValueAsString(metadata.values()).getBytes(StandardCharsets.UTF_8).length
                > limits.metadataMaxSize().toBytes()) {
            errors.reject("metadata", "must be at most " + limits.metadataMaxSize().toBytes() + " bytes of JSON");
        }
        int lockDelay = within(errors, "lockDelaySeconds", r.lockDelaySeconds(), MAX_LOCK_DELAY_SECONDS);
        int wait = within(errors, "waitSeconds", r.waitSeconds(), maxWaitSeconds);
        errors.throwIfAny();
        return new AcquireCommand(key, holder, ttl, maxLifetime, lockDelay, wait, jobId, traceId, metadata);
    }

    /** A watch's {@code waitSeconds} query parameter (0..leasekeeper.wait.max; absent: 0, an inspect). */
    int watchSeconds(String waitSeconds) {
        FieldErrors errors = new FieldErrors();
        Long wait = waitSeconds == null ? null : errors.wholeWithin("waitSeconds", waitSeconds, 0, maxWaitSeconds);
        errors.throwIfAny();
        return wait == null ? 0 : wait.intValue();
    }

    /** An optional count of seconds within 0..max; absent is 0. */
    private static int within(FieldErrors errors, String field, BigDecimal value, int max) {
        Long seconds = value == null ? null : errors.wholeWithin(field, value, 0, max);
        return seconds == null ? 0 : seconds.intValue();
    }

    long fencingToken(BigDecimal token) {
        if (token == null) {
            throw FieldErrors.single("fencingToken", "is required");
        }
        FieldErrors errors = new FieldErrors();
        Long checked = errors.wholeWithin("fencingToken", token, 1, MAX_TOKEN);
        errors.throwIfAny();
        return checked;
    }

    Integer renewTtl(BigDecimal ttlSeconds) {
        FieldErrors errors = new FieldErrors();
        Integer ttl = ttl(errors, "ttlSeconds", ttlSeconds, false);
        errors.throwIfAny();
        return ttl;
    }

    String revokeReason(RevokeRequest r) {
        FieldErrors errors = new FieldErrors();
        String reason = shownText(errors, "reason", r == null ? null : r.reason(), 512, true);
        errors.throwIfAny();
        return reason;
    }

    LeaseKey currentKey(String tenant, String program, String targetType, String target, String actor,
                        String operation) {
        FieldErrors errors = new FieldErrors();
        LeaseKey key = key(errors, tenant, program, targetType, target, actor, operation, "targetType", "target");
        errors.throwIfAny();
        return key;
    }

    LeaseReads.ListFilter list(String tenant, String program, String actor, String targetType, String target,
                               String operation, String owner, String holder, String state, String limit,
                               String cursor) {
        FieldErrors errors = new FieldErrors();
        String normalizedProgram = program == null ? null : errors.check("program", () -> Names.normalize(program));
        String normalizedActor = actor == null ? null : errors.check("actor", () -> Names.normalize(actor));
        String normalizedOperation = operation == null ? null
                : errors.check("operation", () -> Names.normalize(operation));
        TargetType requestedType = targetType == null ? null
                : errors.check("targetType", () -> TargetType.parse(targetType));
        TargetType type = requestedType;
        String targetValue = null;
        if (target != null) {
            if (targetType == null) {
                errors.reject("targetType", "is required with target");
            } else if (requestedType != null) {
                Target normalized = errors.check("target", () -> Target.of(requestedType, target));
                if (normalized != null) {
                    type = normalized.type();
                    targetValue = normalized.value();
                }
            }
        }
        String effectiveState = state == null ? LeaseState.ACTIVE.wireName()
                : "any".equals(state) ? null
                : errors.check("state", () -> LeaseState.fromWireName(state).wireName());
        int pageSize = pageSize(errors, limit);
        if (owner != null) {
            printable(errors, "owner", owner, 255, true);
        }
        if (holder != null) {
            shownText(errors, "holder", holder, 128, true);
        }
        LeaseReads.ListPosition before = cursor == null ? null : errors.check("cursor", () -> listPosition(cursor));
        errors.throwIfAny();
        return new LeaseReads.ListFilter(tenant, normalizedProgram, normalizedActor,
                type == null ? null : type.wireName(), targetValue, normalizedOperation, owner, holder, effectiveState,
                before, pageSize);
    }

    /** A page of a lease's history: {@code limit} and {@code cursor} by the list's rules, its own kind of cursor. */
    AuditLog.PageRequest historyPage(String limit, String cursor) {
        FieldErrors errors = new FieldErrors();
        int pageSize = pageSize(errors, limit);
        Long after = cursor == null ? null : errors.check("cursor", () -> {
            try {
                return Long.parseLong(decodeCursor(HISTORY_CURSOR, cursor));
            } catch (NumberFormatException e) {
                throw notACursor();
            }
        });
        errors.throwIfAny();
        // Event ids are identity values from 1: after 0 is the first page.
        return new AuditLog.PageRequest(after == null ? 0 : after, pageSize);
    }

    /** A page's {@code limit}: leasekeeper.list.default-limit when absent, else within 1..max-limit (never clamped). */
    private int pageSize(FieldErrors errors, String limit) {
        Long size = limit == null ? null : errors.wholeWithin("limit", limit, 1, page.maxLimit());
        return size == null ? page.defaultLimit() : size.intValue();
    }

    /** Why metadata cannot be stored as given (too deep, or text or a number jsonb cannot hold), or null. */
    private static String metadataProblem(Object node, int depth) {
        if (depth > MAX_METADATA_DEPTH) {
            return "must nest at most " + MAX_METADATA_DEPTH + " levels deep";
        }
        if (node instanceof Map<?, ?> map) {
            for (Map.Entry<?, ?> entry : map.entrySet()) {
                String problem = Text.unstorable((String) entry.getKey()) ? UNSTORABLE
                        : metadataProblem(entry.getValue(), depth + 1);
                if (problem != null) {
                    return problem;
                }
            }
        } else if (node instanceof java.util.List<?> list) {
            for (Object item : list) {
                String problem = metadataProblem(item, depth + 1);
                if (problem != null) {
                    return problem;
                }
            }
        } else if (node instanceof String text && Text.unstorable(text)) {
            return UNSTORABLE;
        } else if (node instanceof Double number && !Double.isFinite(number)) {
            // A JSON number beyond a double's range (1e400) reads as infinite, which jsonb cannot store as a number.
            return "must not hold a number beyond the range of a double, such as 1e400";
        }
        return null;
    }

    /*
     * A cursor is the position a page ended at, prefixed with what it positions (the list: a fencing token and
     * a lease id, "t:<token>:<id>"; a history: an event id, "e:<id>"), base64url without padding. The prefix
     * makes a list's cursor no cursor of a history and the other way round: each is 400 where it does not
     * belong, not a page of something else.
     */
    private static final String LIST_CURSOR = "t:";
    private static final String HISTORY_CURSOR = "e:";

    /** The list's next cursor: the page ended at this lease, of this fencing token. */
    static String listCursor(long fencingToken, UUID leaseId) {
        return encodeCursor(LIST_CURSOR, fencingToken + ":" + leaseId);
    }

    /** A list's cursor read back; one of a version before per-key tokens ("t:<token>") has no lease id. */
    private static LeaseReads.ListPosition listPosition(String cursor) {
        String position = decodeCursor(LIST_CURSOR, cursor);
        int colon = position.indexOf(':');
        try {
            return colon < 0 ? new LeaseReads.ListPosition(Long.parseLong(position), null)
                    : new LeaseReads.ListPosition(Long.parseLong(position.substring(0, colon)),
                            UUID.fromString(position.substring(colon + 1)));
        } catch (IllegalArgumentException e) { // a number or an id that does not parse
            throw notACursor();
        }
    }

    /** A history's next cursor: the page ended at this event. */
    static String historyCursor(long eventId) {
        return encodeCursor(HISTORY_CURSOR, String.valueOf(eventId));
    }

    private static String encodeCursor(String kind, String position) {
        return Base64.getUrlEncoder().withoutPadding()
                .encodeToString((kind + position).getBytes(StandardCharsets.US_ASCII));
    }

    /** The position of a cursor of this kind; a position that does not parse is refused by its caller. */
    private static String decodeCursor(String kind, String cursor) {
        try {
            String decoded = new String(Base64.getUrlDecoder().decode(cursor), StandardCharsets.US_ASCII);
            if (decoded.startsWith(kind)) {
                return decoded.substring(kind.length());
            }
        } catch (IllegalArgumentException e) {
            // falls through to the one message below
        }
        throw notACursor();
    }

    private static IllegalArgumentException notACursor() {
        return new IllegalArgumentException("is not a cursor this service returned");
    }

    private static LeaseKey key(FieldErrors errors, String tenant, String program, String targetType,
                                String targetValue, String actor, String operation, String typeField,
                                String valueField) {
        String normalizedProgram = program == null ? LeaseKey.DEFAULT_PROGRAM
                : errors.check("program", () -> Names.normalize(program));
        Target target = null;
        if (targetType == null) {
            errors.reject(typeField, "is required");
        } else {
            TargetType type = errors.check(typeField, () -> TargetType.parse(targetType));
            if (type != null) {
                target = errors.check(valueField, () -> Target.of(type, targetValue));
            }
        }
        String normalizedActor = errors.check("actor", () -> Names.normalize(actor));
        String normalizedOperation = operation == null ? null
                : errors.check("operation", () -> Names.normalize(operation));
        if (!errors.isEmpty()) {
            return null;
        }
        return new LeaseKey(tenant, normalizedProgram, target, normalizedActor, normalizedOperation);
    }

    private Integer ttl(FieldErrors errors, String field, BigDecimal ttl, boolean required) {
        if (ttl == null) {
            if (required) {
                errors.reject(field, "is required");
            }
            return null;
        }
        Long seconds = errors.wholeWithin(field, ttl, limits.minTtl().toSeconds(), limits.maxTtl().toSeconds());
        return seconds == null ? null : seconds.intValue();
    }

    /**
     * Text an operator reads as part of a lease (its holder, a revoke's reason): {@link #printable}, and no
     * bidirectional formatting character, which would show it in another order than it is stored.
     */
    private static String shownText(FieldErrors errors, String field, String value, int max, boolean required) {
        String text = printable(errors, field, value, max, required);
        if (text != null && Text.hasBidiControl(text)) {
            errors.reject(field, Text.NO_BIDI_CONTROLS);
            return null;
        }
        return text;
    }

    /** 1..max characters with no control characters. */
    private static String printable(FieldErrors errors, String field, String value, int max, boolean required) {
        if (value == null) {
            if (required) {
                errors.reject(field, "is required");
            }
            return null;
        }
        int length = value.codePointCount(0, value.length());
        if (length < 1 || length > max || value.isBlank()) {
            errors.reject(field, "must be 1.." + max + " characters, not all blank");
            return null;
        }
        if (Text.hasControlOrUnpaired(value)) {
            errors.reject(field, "must not contain control characters or unpaired surrogates");
            return null;
        }
        return value;
    }
}

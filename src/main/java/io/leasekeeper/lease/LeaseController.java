package io.leasekeeper.lease;

import static io.leasekeeper.web.ErrorCode.FENCING_TOKEN_MISMATCH;
import static io.leasekeeper.web.ErrorCode.LEASE_EXPIRED;
import static io.leasekeeper.web.ErrorCode.LEASE_HELD;
import static io.leasekeeper.web.ErrorCode.LEASE_NOT_FOUND;
import static io.leasekeeper.web.ErrorCode.LEASE_RELEASED;
import static io.leasekeeper.web.ErrorCode.LEASE_REVOKED;
import static io.leasekeeper.web.ErrorCode.LOCK_DELAYED;
import static io.leasekeeper.web.ErrorCode.NOT_LEASE_OWNER;
import static io.leasekeeper.web.ErrorCode.NO_ACTIVE_LEASE;
import static io.leasekeeper.web.ErrorCode.QUOTA_EXCEEDED;
import static io.leasekeeper.web.ErrorCode.VALIDATION_FAILED;

import io.leasekeeper.audit.AuditLog;
import io.leasekeeper.audit.LeaseEvent;
import io.leasekeeper.idempotency.IdempotencyStore;
import io.leasekeeper.openapi.ProblemCodes;
import io.leasekeeper.security.Caller;
import io.leasekeeper.web.ApiException;
import io.leasekeeper.web.ClientConnections;
import io.leasekeeper.web.ErrorCode;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.Parameter;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import io.swagger.v3.oas.annotations.tags.Tag;
import jakarta.servlet.http.HttpServletRequest;
import java.util.List;
import java.util.UUID;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * The contract's {@code /v1/leases} endpoints. Mapping only: decisions live in {@link LeaseOperations}.
 * The annotations describe each operation in the OpenAPI document (docs/reference/openapi.json).
 */
@RestController
@RequestMapping("/v1/leases")
@Tag(name = "leases")
class LeaseController {

    @Schema(name = "LeasePage")
    record Page(List<LeaseView> items,
                @Schema(nullable = true, description = "Pass as cursor for the next page; null on the last.")
                String nextCursor) {
    }

    @Schema(name = "EventPage")
    record EventPage(@Schema(description = "Events of the lease, oldest first.") List<LeaseEvent> items,
                     @Schema(nullable = true, description = "Pass as cursor for the next page; null on the last.")
                     String nextCursor) {
    }

    private final LeaseOperations operations;
    private final LeaseReads reads;
    private final LeaseRequests requests;
    private final AuditLog audit;
    private final IdempotentCalls idempotent;
    private final Waiting waiting;

    LeaseController(LeaseOperations operations, LeaseReads reads, LeaseRequests requests, AuditLog audit,
                    IdempotentCalls idempotent, Waiting waiting) {
        this.operations = operations;
        this.reads = reads;
        this.requests = requests;
        this.audit = audit;
        this.idempotent = idempotent;
        this.waiting = waiting;
    }

    @PostMapping
    @Operation(operationId = "acquire", summary = "Acquire a lease on a key if the key is free",
            description = "Grants a new lease with a new, larger fencing token, or answers 409 LEASE_HELD with who"
                    + " holds the key and when to retry.")
    @ApiResponse(responseCode = "201", description = "Granted.",
            content = @Content(schema = @Schema(implementation = LeaseView.class)))
    @ProblemCodes({VALIDATION_FAILED, LEASE_HELD, LOCK_DELAYED, QUOTA_EXCEEDED})
    ResponseEntity<?> acquire(@RequestBody(required = false) LeaseRequests.AcquireRequest body, Caller caller,
                              @RequestHeader(name = IdempotentCalls.HEADER, required = false) String idempotencyKey,
                              HttpServletRequest request) {
        long arrived = System.nanoTime();
        AcquireCommand command = requests.acquire(body, caller.tenant());
        IdempotencyStore.Request idempotency = idempotent.request(idempotencyKey, caller, "POST",
                request.getRequestURI(), body);
        LeaseOutcome outcome = waiting.acquire(command, caller, idempotency, arrived,
                () -> ClientConnections.closedByClient(request));
        return LeaseAnswers.of(outcome, command.key(), request);
    }

    @PostMapping("/{leaseId}/renew")
    @Operation(operationId = "renew", summary = "Extend the caller's active lease",
            description = "expiresAt becomes min(now + ttl, maxExpiresAt); the fencing token never changes. A lease"
                    + " whose expiry has passed answers 410 LEASE_EXPIRED and is never revived.")
    @ApiResponse(responseCode = "200", description = "Renewed.",
            content = @Content(schema = @Schema(implementation = LeaseView.class)))
    @ProblemCodes({VALIDATION_FAILED, NOT_LEASE_OWNER, LEASE_NOT_FOUND, FENCING_TOKEN_MISMATCH, LEASE_EXPIRED,
            LEASE_RELEASED, LEASE_REVOKED})
    ResponseEntity<?> renew(@PathVariable String leaseId,
                            @RequestBody(required = false) LeaseRequests.RenewRequest body, Caller caller,
                            @RequestHeader(name = IdempotentCalls.HEADER, required = false) String idempotencyKey,
                            HttpServletRequest request) {
        UUID id = leaseId(leaseId);
        long token = requests.fencingToken(body == null ? null : body.fencingToken());
        Integer ttl = requests.renewTtl(body.ttlSeconds());
        return idempotent.answer(idempotencyKey, caller, request, body, () -> operations.renew(id, token, ttl, caller));
    }

    @PostMapping("/{leaseId}/release")
    @Operation(operationId = "release", summary = "Release the caller's lease (compare-and-delete)",
            description = "Ends the lease and frees its key at once. A repeat by the owner answers 200 again.")
    @ApiResponse(responseCode = "200", description = "Released (state released).",
            content = @Content(schema = @Schema(implementation = LeaseView.class)))
    @ProblemCodes({VALIDATION_FAILED, NOT_LEASE_OWNER, LEASE_NOT_FOUND, FENCING_TOKEN_MISMATCH, LEASE_EXPIRED,
            LEASE_REVOKED})
    ResponseEntity<?> release(@PathVariable String leaseId,
                              @RequestBody(required = false) LeaseRequests.ReleaseRequest body, Caller caller,
                              @RequestHeader(name = IdempotentCalls.HEADER, required = false) String idempotencyKey,
                              HttpServletRequest request) {
        UUID id = leaseId(leaseId);
        long token = requests.fencingToken(body == null ? null : body.fencingToken());
        return idempotent.answer(idempotencyKey, caller, request, body,
                () -> operations.releaseIfHeld(id, token, caller));
    }

    @GetMapping("/{leaseId}")
    @Operation(operationId = "inspect", summary = "A lease of the caller's tenant, as it is at serverTime",
            description = "With waitSeconds (a watch), an active lease is answered once it is no longer active"
                    + " (released, revoked, expired by time) or when waitSeconds pass; a renew does not end the wait.")
    @ProblemCodes({VALIDATION_FAILED, LEASE_NOT_FOUND})
    LeaseView inspect(@PathVariable String leaseId,
                      @Parameter(description = "0..leasekeeper.wait.max (30 by default); absent or 0: answer at once.",
                              schema = @Schema(type = "integer", format = "int32"))
                      @RequestParam(required = false) String waitSeconds, Caller caller,
                      HttpServletRequest request) {
        long arrived = System.nanoTime();
        UUID id = leaseId(leaseId);
        int wait = requests.watchSeconds(waitSeconds);
        LeaseRead read = reads.byId(id, caller.tenant()).orElseThrow(() -> notFound(leaseId));
        if (wait == 0 || !read.lease().activeAt(read.now())) {
            return LeaseView.of(read.lease(), read.now());
        }
        return waiting.watch(id, caller, wait, arrived, read, () -> ClientConnections.closedByClient(request));
    }

    /** targetType, target and actor are required, though taken as optional: one 400 names every one missing. */
    @GetMapping("/current")
    @Operation(operationId = "current", summary = "The active lease on a key")
    @ProblemCodes({VALIDATION_FAILED, NO_ACTIVE_LEASE})
    LeaseView current(@RequestParam(required = false) String program,
                      @Parameter(required = true) @RequestParam(required = false) String targetType,
                      @Parameter(required = true) @RequestParam(required = false) String target,
                      @Parameter(required = true) @RequestParam(required = false) String actor,
                      @RequestParam(required = false) String operation, Caller caller) {
        var key = requests.currentKey(caller.tenant(), program, targetType, target, actor, operation);
        LeaseRead read = reads.currentOfKey(key).orElseThrow(() -> new ApiException(
                ErrorCode.NO_ACTIVE_LEASE, "No active lease on " + key.canonical() + "."));
        return LeaseView.of(read.lease(), read.now());
    }

    @GetMapping
    @Operation(operationId = "list",
            summary = "Leases of the caller's tenant, largest fencing token first (a key's later leases first), a page at a time")
    @ProblemCodes(VALIDATION_FAILED)
    Page list(@RequestParam(required = false) String program, @RequestParam(required = false) String actor,
              @RequestParam(required = false) String targetType, @RequestParam(required = false) String target,
              @RequestParam(required = false) String operation,
              @RequestParam(required = false) String owner, @RequestParam(required = false) String holder,
              @RequestParam(required = false) String state,
              @Parameter(schema = @Schema(type = "integer")) @RequestParam(required = false) String limit,
              @RequestParam(required = false) String cursor, Caller caller) {
        LeaseReads.ListFilter filter = requests.list(caller.tenant(), program, actor, targetType, target, operation,
                owner, holder, state, limit, cursor);
        List<LeaseRead> rows = reads.listPageAndOneMore(filter);
        boolean more = rows.size() > filter.limit();
        List<LeaseView> items = rows.stream().limit(filter.limit())
                .map(r -> LeaseView.of(r.lease(), r.now())).toList();
        String next = more ? LeaseRequests.listCursor(items.getLast().fencingToken(), items.getLast().leaseId()) : null;
        return new Page(items, next);
    }

    @GetMapping("/{leaseId}/events")
    @Operation(operationId = "history", summary = "A lease's audit events, oldest first, a page at a time")
    @ProblemCodes({VALIDATION_FAILED, LEASE_NOT_FOUND})
    EventPage history(@PathVariable String leaseId,
                      @Parameter(schema = @Schema(type = "integer")) @RequestParam(required = false) String limit,
                      @RequestParam(required = false) String cursor, Caller caller) {
        UUID id = leaseId(leaseId);
        AuditLog.PageRequest page = requests.historyPage(limit, cursor);
        List<LeaseEvent> events = audit.pageAndOneMore(id, caller.tenant(), page)
                .orElseThrow(() -> notFound(leaseId));
        boolean more = events.size() > page.limit();
        List<LeaseEvent> items = more ? events.subList(0, page.limit()) : events;
        String next = more ? LeaseRequests.historyCursor(items.getLast().eventId()) : null;
        return new EventPage(items, next);
    }

    private static final java.util.regex.Pattern CANONICAL_UUID =
            java.util.regex.Pattern.compile("[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}");

    /**
     * A path id that is not a UUID in its canonical 36-character form names no lease: 404, as for any
     * other unknown id (UUID.fromString alone would also take short forms such as 1-2-3-4-5).
     */
    static UUID leaseId(String raw) {
        if (!CANONICAL_UUID.matcher(raw).matches()) {
            throw notFound("(not a lease id)");
        }
        return UUID.fromString(raw);
    }

    private static ApiException notFound(String leaseId) {
        return new ApiException(ErrorCode.LEASE_NOT_FOUND, "No lease " + leaseId + ".");
    }
}

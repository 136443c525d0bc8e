package io.leasekeeper.lease;

import static io.leasekeeper.web.ErrorCode.LEASE_NOT_ACTIVE;
import static io.leasekeeper.web.ErrorCode.LEASE_NOT_FOUND;
import static io.leasekeeper.web.ErrorCode.VALIDATION_FAILED;

import io.leasekeeper.openapi.ProblemCodes;
import io.leasekeeper.security.Caller;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import io.swagger.v3.oas.annotations.tags.Tag;
import jakarta.servlet.http.HttpServletRequest;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/** Privileged operations; the security configuration admits only the {@code leases:admin} scope here. */
@RestController
@Tag(name = "admin")
class AdminLeaseController {

    private final LeaseOperations operations;
    private final LeaseRequests requests;
    private final IdempotentCalls idempotent;

    AdminLeaseController(LeaseOperations operations, LeaseRequests requests, IdempotentCalls idempotent) {
        this.operations = operations;
        this.requests = requests;
        this.idempotent = idempotent;
    }

    @PostMapping("/v1/admin/leases/{leaseId}/revoke")
    @Operation(operationId = "revoke", summary = "End an active lease of the tenant and free its key at once")
    @ApiResponse(responseCode = "200", description = "Revoked (state revoked).",
            content = @Content(schema = @Schema(implementation = LeaseView.class)))
    @ProblemCodes({VALIDATION_FAILED, LEASE_NOT_FOUND, LEASE_NOT_ACTIVE})
    ResponseEntity<?> revoke(@PathVariable String leaseId,
                             @RequestBody(required = false) LeaseRequests.RevokeRequest body, Caller admin,
                             @RequestHeader(name = IdempotentCalls.HEADER, required = false) String idempotencyKey,
                             HttpServletRequest request) {
        var id = LeaseController.leaseId(leaseId);
        String reason = requests.revokeReason(body);
        return idempotent.answer(idempotencyKey, admin, request, body, () -> operations.revoke(id, reason, admin));
    }
}

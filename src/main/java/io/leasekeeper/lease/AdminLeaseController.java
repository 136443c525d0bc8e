package io.leasekeeper.lease;

import io.leasekeeper.security.Caller;
import jakarta.servlet.http.HttpServletRequest;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/** Privileged operations; the security configuration admits only the {@code leases:admin} scope here. */
@RestController
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
    ResponseEntity<?> revoke(@PathVariable String leaseId,
                             @RequestBody(required = false) LeaseRequests.RevokeRequest body, Caller admin,
                             @RequestHeader(name = IdempotentCalls.HEADER, required = false) String idempotencyKey,
                             HttpServletRequest request) {
        var id = LeaseController.leaseId(leaseId);
        String reason = requests.revokeReason(body);
        return idempotent.run(idempotencyKey, admin, "POST", request.getRequestURI(), body,
                () -> ResponseEntity.ok(operations.revoke(id, reason, admin)));
    }
}

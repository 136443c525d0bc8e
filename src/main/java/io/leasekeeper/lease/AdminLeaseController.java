package io.leasekeeper.lease;

import io.leasekeeper.security.Caller;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/** Privileged operations; the security configuration admits only the {@code leases:admin} scope here. */
@RestController
class AdminLeaseController {

    private final LeaseOperations operations;
    private final LeaseRequests requests;

    AdminLeaseController(LeaseOperations operations, LeaseRequests requests) {
        this.operations = operations;
        this.requests = requests;
    }

    @PostMapping("/v1/admin/leases/{leaseId}/revoke")
    LeaseView revoke(@PathVariable String leaseId, @RequestBody(required = false) LeaseRequests.RevokeRequest body,
                     Caller admin) {
        var id = LeaseController.leaseId(leaseId);
        return operations.revoke(id, requests.revokeReason(body), admin);
    }
}

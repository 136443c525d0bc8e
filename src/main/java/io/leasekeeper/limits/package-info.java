/**
 * What one tenant may take (contract 1.1, "Tenant limits"; 1.2, "Load a client caused is never a 5xx"): a quota of
 * active leases, checked where a lease is granted; an optional request rate per instance; and a fair share of the
 * instance's request slots ({@link io.leasekeeper.limits.TenantSlots}), checked before a request reaches its
 * handler. Each refuses with a 429 problem and changes nothing; their state is per instance, bounded, and forgets
 * idle tenants.
 */
package io.leasekeeper.limits;

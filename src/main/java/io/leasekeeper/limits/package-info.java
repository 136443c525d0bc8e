/**
 * What one tenant may take (contract 1.1, "Tenant limits"): a quota of active leases, checked where a lease is
 * granted, and a request rate per instance, checked before a request reaches its handler. Both refuse with a
 * 429 problem and change nothing; their state is per instance, bounded, and forgets idle tenants.
 */
package io.leasekeeper.limits;

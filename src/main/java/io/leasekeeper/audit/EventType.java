package io.leasekeeper.audit;

/** The transitions the audit log records, one event each. */
public enum EventType {
    ACQUIRED, RENEWED, RELEASED, EXPIRED, REVOKED
}

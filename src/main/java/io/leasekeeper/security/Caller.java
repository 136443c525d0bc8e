package io.leasekeeper.security;

/**
 * Who is calling, taken from the validated JWT (tenant claim and subject), and the ids of the request
 * they are calling with. Controllers receive it as a method argument; nothing else reads the token.
 */
public record Caller(String tenant, String subject, String requestId, String traceId) {
}

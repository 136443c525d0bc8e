package io.leasekeeper.client;

/**
 * The service could not be reached (connection refused, reset or timed out) after the client's retries, or no
 * bearer token could be had for the request (the token supplier threw: its exception is the cause).
 */
public final class ServiceUnavailableException extends RuntimeException {

    ServiceUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}

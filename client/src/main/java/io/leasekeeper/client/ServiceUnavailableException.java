package io.leasekeeper.client;

/** The service could not be reached (connection refused, reset or timed out) after the client's retries. */
public final class ServiceUnavailableException extends RuntimeException {

    ServiceUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}

package io.leasekeeper.client.autoconfigure;

import java.util.function.Supplier;

/**
 * The bearer token of each request the auto-configured client sends, asked for every time so that it may be
 * refreshed; null sends none. The starter provides one (OAuth2 client credentials, else
 * {@code leasekeeper.client.token}, else none); an application's own bean of this type replaces it.
 */
@FunctionalInterface
public interface LeasekeeperTokenSupplier extends Supplier<String> {

    LeasekeeperTokenSupplier NONE = () -> null;

    static LeasekeeperTokenSupplier of(String token) {
        return token == null ? NONE : () -> token;
    }
}

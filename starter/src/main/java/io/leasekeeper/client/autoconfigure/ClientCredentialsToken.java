package io.leasekeeper.client.autoconfigure;

import org.springframework.security.oauth2.client.OAuth2AuthorizeRequest;
import org.springframework.security.oauth2.client.OAuth2AuthorizedClient;
import org.springframework.security.oauth2.client.OAuth2AuthorizedClientManager;

/**
 * An access token from an OAuth2 client registration's client credentials, asked of the authorized client
 * manager on every request: it answers the cached token, or a new one once the cached one is about to expire.
 * The principal is the registration id itself: the token is this application's, not a user's.
 */
record ClientCredentialsToken(OAuth2AuthorizedClientManager manager, String registrationId)
        implements LeasekeeperTokenSupplier {

    /** Throws what the token endpoint's failure was; the client reports it as the service not reached. */
    @Override
    public String get() {
        OAuth2AuthorizedClient client = manager.authorize(
                OAuth2AuthorizeRequest.withClientRegistrationId(registrationId).principal(registrationId).build());
        if (client == null) {
            throw new IllegalStateException("OAuth2 registration '" + registrationId + "' gave no access token"
                    + " (is its authorization-grant-type client_credentials?)");
        }
        return client.getAccessToken().getTokenValue();
    }
}

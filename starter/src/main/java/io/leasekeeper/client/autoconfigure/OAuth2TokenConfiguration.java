package io.leasekeeper.client.autoconfigure;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.security.oauth2.client.AuthorizedClientServiceOAuth2AuthorizedClientManager;
import org.springframework.security.oauth2.client.InMemoryOAuth2AuthorizedClientService;
import org.springframework.security.oauth2.client.OAuth2AuthorizedClientProviderBuilder;
import org.springframework.security.oauth2.client.OAuth2AuthorizedClientService;
import org.springframework.security.oauth2.client.registration.ClientRegistration;
import org.springframework.security.oauth2.client.registration.ClientRegistrationRepository;
import org.springframework.security.oauth2.core.AuthorizationGrantType;

/**
 * The token from {@code leasekeeper.client.oauth2.registration-id}'s client credentials. The manager is the
 * starter's own {@link AuthorizedClientServiceOAuth2AuthorizedClientManager}, not an application's
 * OAuth2AuthorizedClientManager bean: renewals run on the client's threads, outside any HTTP request, where a
 * request-bound manager cannot work. It caches the token in the application's OAuth2AuthorizedClientService
 * when there is one.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(name = "org.springframework.security.oauth2.client.AuthorizedClientServiceOAuth2AuthorizedClientManager")
@ConditionalOnProperty(prefix = "leasekeeper.client.oauth2", name = "registration-id")
class OAuth2TokenConfiguration {

    @Bean
    @ConditionalOnMissingBean
    LeasekeeperTokenSupplier leasekeeperTokenSupplier(LeasekeeperClientProperties properties,
                                                      ObjectProvider<ClientRegistrationRepository> registrations,
                                                      ObjectProvider<OAuth2AuthorizedClientService> authorizedClients) {
        String id = properties.oauth2().registrationId();
        ClientRegistrationRepository repository = registrations.getIfAvailable();
        ClientRegistration registration = repository == null ? null : repository.findByRegistrationId(id);
        if (registration == null) {
            throw new IllegalStateException("leasekeeper.client.oauth2.registration-id is '" + id + "' but there is"
                    + " no such OAuth2 client registration: set spring.security.oauth2.client.registration." + id
                    + ".client-id, .client-secret, .authorization-grant-type=client_credentials and its provider's"
                    + " token-uri");
        }
        if (!AuthorizationGrantType.CLIENT_CREDENTIALS.equals(registration.getAuthorizationGrantType())) {
            throw new IllegalStateException("OAuth2 client registration '" + id + "' has authorization-grant-type "
                    + registration.getAuthorizationGrantType().getValue() + ": leasekeeper.client.oauth2 needs"
                    + " client_credentials (the application's own identity, not a user's)");
        }
        AuthorizedClientServiceOAuth2AuthorizedClientManager manager =
                new AuthorizedClientServiceOAuth2AuthorizedClientManager(repository,
                        authorizedClients.getIfAvailable(() -> new InMemoryOAuth2AuthorizedClientService(repository)));
        manager.setAuthorizedClientProvider(OAuth2AuthorizedClientProviderBuilder.builder().clientCredentials().build());
        return new ClientCredentialsToken(manager, id);
    }
}

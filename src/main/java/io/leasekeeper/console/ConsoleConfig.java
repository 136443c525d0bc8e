package io.leasekeeper.console;

import io.swagger.v3.oas.annotations.Hidden;
import java.net.URI;
import java.util.Map;
import java.util.function.BiConsumer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;
import org.springframework.core.env.Environment;
import org.springframework.core.env.Profiles;
import org.springframework.core.io.ClassPathResource;
import org.springframework.core.io.Resource;
import org.springframework.http.CacheControl;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.http.SessionCreationPolicy;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.security.web.header.writers.ReferrerPolicyHeaderWriter.ReferrerPolicy;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.servlet.function.RequestPredicates;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.RouterFunctions;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * The operator console (docs/guides/console.md): static pages in the jar under {@code /console/}, served on the API's port
 * without a token (they hold no data; every datum comes from the API, called with the operator's bearer token).
 * Its own security chain, ahead of the API's, adds a Content-Security-Policy that lets the page load and call this
 * origin only, and be framed by no one; it also permits {@code /favicon.ico}, which browsers ask of every origin
 * unasked (the API's chain would answer it 401).
 *
 * <p>The pages are a router function, not a {@code WebMvcConfigurer}: Spring Boot's management context (the
 * management port) applies every configurer of the application to its own dispatcher, but serves only its own
 * router functions. So the console is on the API's port alone, beside the API it calls.
 */
@Configuration(proxyBeanMethods = false)
class ConsoleConfig {

    /** Scripts, styles and calls from this origin alone; no inline code, no frames, no forms posted elsewhere. */
    static final String CONTENT_SECURITY_POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; "
            + "connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

    /** Where browsers look for a site's icon unasked: it leads to the console's. */
    static final String FAVICON = "/favicon.ico";

    private static final Resource FILES = new ClassPathResource("static/console/");
    private static final Resource PAGE = new ClassPathResource("static/console/index.html");

    @Bean
    @Order(1)
    SecurityFilterChain console(HttpSecurity http) throws Exception {
        return http.securityMatcher("/console", "/console/**", FAVICON)
                .authorizeHttpRequests(requests -> requests.anyRequest().permitAll())
                .headers(headers -> headers
                        .contentSecurityPolicy(csp -> csp.policyDirectives(CONTENT_SECURITY_POLICY))
                        .referrerPolicy(referrer -> referrer.policy(ReferrerPolicy.NO_REFERRER)))
                .sessionManagement(s -> s.sessionCreationPolicy(SessionCreationPolicy.STATELESS))
                .csrf(csrf -> csrf.disable())
                .requestCache(cache -> cache.disable())
                .build();
    }

    /**
     * {@code /console} leads to {@code /console/}, the page, and {@code /favicon.ico} to the console's icon, without a
     * token. Every file is revalidated on each load: a new version of the service serves its own console at once.
     */
    @Bean
    RouterFunction<ServerResponse> consolePages() {
        BiConsumer<Resource, HttpHeaders> revalidate = (file, headers) ->
                headers.setCacheControl(CacheControl.noCache());
        return RouterFunctions.route()
                .GET("/console", request -> ServerResponse.status(HttpStatus.FOUND)
                        .location(URI.create("/console/")).build())
                .GET(FAVICON, request -> ServerResponse.status(HttpStatus.FOUND)
                        .location(URI.create("/console/favicon.svg")).build())
                // Files are read, nothing else: another method finds no route and gets the API's 404 problem (the
                // resource handler itself would answer 405 with no body).
                .nest(RequestPredicates.method(HttpMethod.GET).or(RequestPredicates.method(HttpMethod.HEAD)),
                        files -> files.resource(RequestPredicates.path("/console/"), PAGE, revalidate)
                                .resources("/console/**", FILES, revalidate))
                .build();
    }

    /**
     * What the page needs to know of the service: whether it mints development tokens (the local profile). Not
     * part of the API, so not in its OpenAPI document.
     */
    @Hidden
    @RestController
    static class ConsoleSettings {

        private final boolean localTokens;

        ConsoleSettings(Environment environment) {
            this.localTokens = environment.acceptsProfiles(Profiles.of("local"));
        }

        @GetMapping("/console/settings.json")
        Map<String, Object> settings() {
            return Map.of("localTokens", localTokens);
        }
    }
}

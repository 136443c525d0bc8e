package io.leasekeeper.console;

import io.swagger.v3.oas.annotations.Hidden;
import java.util.Map;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;
import org.springframework.core.env.Environment;
import org.springframework.core.env.Profiles;
import org.springframework.http.CacheControl;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.http.SessionCreationPolicy;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.security.web.header.writers.ReferrerPolicyHeaderWriter.ReferrerPolicy;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.servlet.config.annotation.ResourceHandlerRegistry;
import org.springframework.web.servlet.config.annotation.ViewControllerRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * The operator console (docs/console.md): static pages in the jar under {@code /console/}, served on the API's port
 * without a token (they hold no data; every datum comes from the API, called with the operator's bearer token).
 * Its own security chain, ahead of the API's, adds a Content-Security-Policy that lets the page load and call this
 * origin only, and be framed by no one.
 */
@Configuration(proxyBeanMethods = false)
class ConsoleConfig implements WebMvcConfigurer {

    /** Scripts, styles and calls from this origin alone; no inline code, no frames, no forms posted elsewhere. */
    static final String CONTENT_SECURITY_POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; "
            + "connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

    @Bean
    @Order(1)
    SecurityFilterChain console(HttpSecurity http) throws Exception {
        return http.securityMatcher("/console", "/console/**")
                .authorizeHttpRequests(requests -> requests.anyRequest().permitAll())
                .headers(headers -> headers
                        .contentSecurityPolicy(csp -> csp.policyDirectives(CONTENT_SECURITY_POLICY))
                        .referrerPolicy(referrer -> referrer.policy(ReferrerPolicy.NO_REFERRER)))
                .sessionManagement(s -> s.sessionCreationPolicy(SessionCreationPolicy.STATELESS))
                .csrf(csrf -> csrf.disable())
                .requestCache(cache -> cache.disable())
                .build();
    }

    @Override
    public void addViewControllers(ViewControllerRegistry registry) {
        registry.addRedirectViewController("/console", "/console/");
        registry.addViewController("/console/").setViewName("forward:/console/index.html");
    }

    /** Revalidated on every load: a new version of the service serves its own console at once. */
    @Override
    public void addResourceHandlers(ResourceHandlerRegistry registry) {
        registry.addResourceHandler("/console/**").addResourceLocations("classpath:/static/console/")
                .setCacheControl(CacheControl.noCache());
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

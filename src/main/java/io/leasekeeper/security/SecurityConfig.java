package io.leasekeeper.security;

import io.leasekeeper.web.FilterOrder;
import io.leasekeeper.config.LeasekeeperProperties;
import io.leasekeeper.idempotency.IdempotencyKeys;
import io.leasekeeper.web.ErrorCode;
import io.leasekeeper.web.Problems;
import io.leasekeeper.web.TraceIds;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.List;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.MethodParameter;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;
import org.springframework.security.authentication.AuthenticationServiceException;
import org.springframework.security.config.ObjectPostProcessor;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.http.SessionCreationPolicy;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.security.oauth2.jwt.Jwt;
import org.springframework.security.oauth2.jwt.JwtDecoder;
import org.springframework.security.oauth2.server.resource.authentication.JwtAuthenticationToken;
import org.springframework.security.oauth2.server.resource.web.BearerTokenAuthenticationEntryPoint;
import org.springframework.security.oauth2.server.resource.web.authentication.BearerTokenAuthenticationFilter;
import org.springframework.security.oauth2.server.resource.web.access.BearerTokenAccessDeniedHandler;
import org.springframework.security.web.AuthenticationEntryPoint;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.security.web.access.AccessDeniedHandler;
import org.springframework.security.web.authentication.AuthenticationFailureHandler;
import org.springframework.security.web.firewall.RequestRejectedHandler;
import org.springframework.security.web.firewall.StrictHttpFirewall;
import org.springframework.web.bind.support.WebDataBinderFactory;
import org.springframework.web.context.request.NativeWebRequest;
import org.springframework.web.method.support.HandlerMethodArgumentResolver;
import org.springframework.web.method.support.ModelAndViewContainer;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;
import tools.jackson.databind.json.JsonMapper;

/**
 * JWT bearer tokens on every {@code /v1} call, decoded from Spring Boot's standard resource-server properties
 * ({@link ResourceServerDecoder}, rules in {@link TokenRules}) and remembered once valid
 * ({@link CachingJwtDecoder}). Scopes: {@code leases:read} reads, {@code leases:write} also acquires,
 * renews and releases, {@code leases:admin} also revokes. A token without a subject, tenant or expiry,
 * or meant for another audience or issuer, is invalid (401). Health probes and the OpenAPI document are
 * open; no other actuator endpoint is reachable.
 */
@Configuration(proxyBeanMethods = false)
class SecurityConfig implements WebMvcConfigurer {

    static final String READ = "SCOPE_leases:read";
    static final String WRITE = "SCOPE_leases:write";
    static final String ADMIN = "SCOPE_leases:admin";
    /** Tokens remembered after their signature check: a few per client, for many clients. */
    private static final int DECODED_TOKENS = 4_096;

    private final LeasekeeperProperties properties;

    SecurityConfig(LeasekeeperProperties properties) {
        this.properties = properties;
    }

    /** {@code decoder}: {@link ResourceServerDecoder}'s, or with the {@code local} profile {@link LocalTokens}'. */
    @Bean
    SecurityFilterChain api(HttpSecurity http, JsonMapper json, JwtDecoder decoder) throws Exception {
        AuthenticationEntryPoint unauthenticated = problemEntryPoint(json);
        AccessDeniedHandler denied = problemAccessDenied(json);
        http.authorizeHttpRequests(requests -> requests
                        // Actuator lives on the management port (management.server.port), not the API's.
                        .requestMatchers("/actuator/health", "/actuator/health/**", "/actuator/prometheus").permitAll()
                        .requestMatchers("/actuator/**").denyAll()
                        .requestMatchers("/error").permitAll()
                        // The API's OpenAPI document (docs/reference/openapi.json) is public, as the contract is.
                        .requestMatchers(HttpMethod.GET, "/v3/api-docs", "/v3/api-docs.yaml").permitAll()
                        .requestMatchers("/v1/admin/**").hasAuthority(ADMIN)
                        .requestMatchers(HttpMethod.GET, "/v1/**").hasAnyAuthority(READ, WRITE, ADMIN)
                        .requestMatchers("/v1/**").hasAuthority(WRITE)
                        .anyRequest().authenticated())
                .oauth2ResourceServer(rs -> rs.jwt(jwt -> jwt.decoder(new CachingJwtDecoder(decoder, DECODED_TOKENS)))
                        .authenticationEntryPoint(unauthenticated)
                        .accessDeniedHandler(denied)
                        .withObjectPostProcessor(new ObjectPostProcessor<BearerTokenAuthenticationFilter>() {
                            @Override
                            public <F extends BearerTokenAuthenticationFilter> F postProcess(F filter) {
                                filter.setAuthenticationFailureHandler(problemFailure(json, unauthenticated));
                                return filter;
                            }
                        }))
                .exceptionHandling(e -> e.authenticationEntryPoint(unauthenticated).accessDeniedHandler(denied))
                .addFilterAfter(new TenantAttribute(properties.security().tenantClaim()),
                        BearerTokenAuthenticationFilter.class)
                .sessionManagement(s -> s.sessionCreationPolicy(SessionCreationPolicy.STATELESS))
                .csrf(csrf -> csrf.disable())
                .requestCache(cache -> cache.disable());
        return http.build();
    }

    /**
     * Spring Security's strict firewall, its character rules checked without regular expressions (Spring
     * Security's configuration takes the HttpFirewall bean for its filter chain).
     */
    @Bean
    StrictHttpFirewall httpFirewall() {
        return FirewallRules.strictFirewall();
    }

    /** URLs the firewall refuses (a "//", an encoded slash, ...) are problems like every other refusal. */
    @Bean
    RequestRejectedHandler problemRequestRejected(JsonMapper json) {
        return (request, response, e) -> write(json, request, response, ErrorCode.REQUEST_REJECTED,
                "The request URL is not acceptable.");
    }

    /** The filters' order: {@link FilterOrder}. */
    @Bean
    FilterRegistrationBean<TraceIds> traceIds() {
        FilterRegistrationBean<TraceIds> registration = new FilterRegistrationBean<>(new TraceIds());
        registration.setOrder(FilterOrder.TRACE_IDS);
        return registration;
    }

    @Override
    public void addArgumentResolvers(List<HandlerMethodArgumentResolver> resolvers) {
        resolvers.add(new CallerResolver(properties.security().tenantClaim()));
    }

    /** 401 UNAUTHENTICATED whose detail says why ({@link TokenRefusals}), with Spring's WWW-Authenticate header. */
    private static AuthenticationEntryPoint problemEntryPoint(JsonMapper json) {
        BearerTokenAuthenticationEntryPoint bearer = new BearerTokenAuthenticationEntryPoint();
        return (request, response, e) -> {
            bearer.commence(request, response, e);
            write(json, request, response, ErrorCode.UNAUTHENTICATED, TokenRefusals.detail(e));
        };
    }

    /**
     * A token that could not be checked because the issuer's keys cannot be had is 503 TOKEN_KEYS_UNAVAILABLE
     * with Retry-After ({@link IssuerKeys}); any other failure to check a token is a fault, rethrown (500), as
     * Spring Security does; every refusal of the token itself is 401.
     */
    private static AuthenticationFailureHandler problemFailure(JsonMapper json, AuthenticationEntryPoint unauthenticated) {
        return (request, response, e) -> {
            IssuerKeys.KeysUnavailable unavailable = IssuerKeys.KeysUnavailable.in(e);
            if (unavailable != null) {
                response.setHeader(HttpHeaders.RETRY_AFTER, Long.toString(unavailable.retryAfter().toSeconds()));
                write(json, request, response, ErrorCode.TOKEN_KEYS_UNAVAILABLE,
                        "The issuer's token keys cannot be fetched, so no token can be checked now.");
            } else if (e instanceof AuthenticationServiceException) {
                throw e;
            } else {
                unauthenticated.commence(request, response, e);
            }
        };
    }

    private static AccessDeniedHandler problemAccessDenied(JsonMapper json) {
        BearerTokenAccessDeniedHandler bearer = new BearerTokenAccessDeniedHandler();
        return (request, response, e) -> {
            bearer.handle(request, response, e);
            write(json, request, response, ErrorCode.INSUFFICIENT_SCOPE,
                    "The token lacks the scope this operation needs.");
        };
    }

    private static void write(JsonMapper json, HttpServletRequest request, HttpServletResponse response,
                              ErrorCode code, String detail) throws IOException {
        response.setStatus(code.status().value());
        response.setContentType(MediaType.APPLICATION_PROBLEM_JSON_VALUE);
        json.writeValue(response.getOutputStream(), Problems.of(code, detail, request));
    }

    /** Resolves {@link Caller} controller arguments from the authenticated JWT. */
    private record CallerResolver(String tenantClaim) implements HandlerMethodArgumentResolver {

        @Override
        public boolean supportsParameter(MethodParameter parameter) {
            return parameter.getParameterType() == Caller.class;
        }

        @Override
        public Caller resolveArgument(MethodParameter parameter, ModelAndViewContainer mav, NativeWebRequest web,
                                      WebDataBinderFactory binders) {
            if (!(SecurityContextHolder.getContext().getAuthentication() instanceof JwtAuthenticationToken token)) {
                throw new IllegalStateException("no JWT authentication for a controller that needs a caller");
            }
            HttpServletRequest request = web.getNativeRequest(HttpServletRequest.class);
            Jwt jwt = token.getToken();
            // The request id on audit events: the Idempotency-Key when sent (it names the logical request
            // across retries), else X-Request-Id.
            String requestId = IdempotencyKeys.parse(request.getHeader(IdempotencyKeys.HEADER))
                    .orElseGet(() -> TraceIds.requestId(request));
            return new Caller(jwt.getClaimAsString(tenantClaim), jwt.getSubject(), requestId,
                    TraceIds.traceId(request));
        }
    }
}

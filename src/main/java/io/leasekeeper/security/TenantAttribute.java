package io.leasekeeper.security;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.security.oauth2.server.resource.authentication.JwtAuthenticationToken;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Leaves the authenticated caller's tenant on the request, for filters outside security that outlive
 * its context (the operation timers' optional tenant tag). Runs right after the bearer token is
 * authenticated, so an answer that authorization refuses (403) still knows its tenant.
 */
public final class TenantAttribute extends OncePerRequestFilter {

    public static final String NAME = TenantAttribute.class.getName();

    private final String tenantClaim;

    TenantAttribute(String tenantClaim) {
        this.tenantClaim = tenantClaim;
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        if (SecurityContextHolder.getContext().getAuthentication() instanceof JwtAuthenticationToken token) {
            request.setAttribute(NAME, token.getToken().getClaimAsString(tenantClaim));
        }
        chain.doFilter(request, response);
    }
}

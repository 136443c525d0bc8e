package io.leasekeeper.security;

import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The audiences a token must name, decided once at start-up from Spring Boot's
 * {@code spring.security.oauth2.resourceserver.jwt.audiences} and the service's
 * {@code leasekeeper.security.audience-check}. Without an audience check, a token the identity provider
 * issued for any other API of the organisation is accepted here (issue 17), so the service says so at start
 * whenever that is the case, and refuses a configuration that asks for both.
 */
final class Audiences {

    private static final Logger log = LoggerFactory.getLogger(Audiences.class);

    private Audiences() {
    }

    /** The accepted audiences; empty means any audience is accepted (and a warning was logged). */
    static List<String> accepted(List<String> configured, boolean check) {
        List<String> audiences = configured.stream().filter(a -> a != null && !a.isBlank()).toList();
        if (!check && !audiences.isEmpty()) {
            throw new IllegalStateException("leasekeeper.security.audience-check is off, yet"
                    + " spring.security.oauth2.resourceserver.jwt.audiences is set (" + audiences + "): remove"
                    + " the audiences to accept tokens of any audience, or switch the check on to require them");
        }
        if (!check) {
            log.warn("The audience check is off (leasekeeper.security.audience-check=false): tokens of any audience"
                    + " are accepted, tokens issued for other APIs included");
        } else if (audiences.isEmpty()) {
            log.warn("No audience is configured: tokens of any audience are accepted, tokens issued for other APIs"
                    + " included. Set spring.security.oauth2.resourceserver.jwt.audiences to this service's"
                    + " audience, or leasekeeper.security.audience-check=false to accept any audience on purpose");
        } else {
            log.info("Tokens must name one of the audiences {} in aud", audiences);
        }
        return audiences;
    }
}

package io.leasekeeper.security;

import org.springframework.security.web.firewall.StrictHttpFirewall;

/**
 * Spring Security's {@link StrictHttpFirewall} with its default rules for header names, header values and
 * parameter names, checked by a loop over the code points instead of the regular expressions it ships
 * ({@code [\p{IsAssigned}&&[^\p{IsControl}]]*}, and for values the same with a tab allowed). The
 * firewall runs them on every read of a header, and on an 800-character bearer token they were a visible
 * share of a request's CPU (performance.md). {@code FirewallRulesTest} holds them equal to the expressions
 * for every code point.
 */
final class FirewallRules {

    private FirewallRules() {
    }

    static StrictHttpFirewall strictFirewall() {
        StrictHttpFirewall firewall = new StrictHttpFirewall();
        firewall.setAllowedHeaderNames(FirewallRules::assignedAndNotControl);
        firewall.setAllowedHeaderValues(FirewallRules::headerValue);
        firewall.setAllowedParameterNames(FirewallRules::assignedAndNotControl);
        return firewall;
    }

    /** Every code point is assigned in Unicode and none is a control character. */
    static boolean assignedAndNotControl(String text) {
        return assignedAndNotControl(text, false);
    }

    /** As {@link #assignedAndNotControl(String)}, and a tab is allowed. */
    static boolean headerValue(String text) {
        return assignedAndNotControl(text, true);
    }

    private static boolean assignedAndNotControl(String text, boolean tabAllowed) {
        for (int i = 0; i < text.length(); ) {
            int c = text.codePointAt(i);
            if (!Character.isDefined(c) || (Character.getType(c) == Character.CONTROL && !(tabAllowed && c == '\t'))) {
                return false;
            }
            i += Character.charCount(c);
        }
        return true;
    }
}

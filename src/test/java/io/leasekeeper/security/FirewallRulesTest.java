package io.leasekeeper.security;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The firewall's character rules say what Spring Security's regular expressions say, for every code point. */
class FirewallRulesTest {

    // StrictHttpFirewall's own expressions (spring-security-web 7.0).
    private static final Pattern ASSIGNED_AND_NOT_CONTROL = Pattern.compile("[\\p{IsAssigned}&&[^\\p{IsControl}]]*");
    private static final Pattern HEADER_VALUE = Pattern.compile("[\\p{IsAssigned}&&[[^\\p{IsControl}]||\\t]]*");

    @Test
    void everyCodePointIsJudgedAsTheExpressionsJudgeIt() {
        int refused = 0;
        for (int c = 0; c <= Character.MAX_CODE_POINT; c++) {
            String text = "a" + new String(Character.toChars(c)) + "b";
            boolean name = ASSIGNED_AND_NOT_CONTROL.matcher(text).matches();
            assertThat(FirewallRules.assignedAndNotControl(text)).as("U+%04X in a name", c).isEqualTo(name);
            assertThat(FirewallRules.headerValue(text)).as("U+%04X in a value", c)
                    .isEqualTo(HEADER_VALUE.matcher(text).matches());
            refused += name ? 0 : 1;
        }
        assertThat(refused).as("code points refused in names").isGreaterThan(800_000);
    }

    @Test
    void unpairedSurrogatesTabsAndLongTokensAreJudgedAlike() {
        String token = "Bearer " + "eyJhbGciOiJSUzI1NiJ9.".repeat(40);
        for (String text : new String[] {"", token, "x\uD800", "\uDC00y", "a\tb", "a\u0000b", "\u007F", "caf\u00E9"}) {
            assertThat(FirewallRules.assignedAndNotControl(text)).as(text)
                    .isEqualTo(ASSIGNED_AND_NOT_CONTROL.matcher(text).matches());
            assertThat(FirewallRules.headerValue(text)).as(text).isEqualTo(HEADER_VALUE.matcher(text).matches());
        }
        assertThat(FirewallRules.headerValue("a\tb")).isTrue();
        assertThat(FirewallRules.assignedAndNotControl("a\tb")).isFalse();
    }
}

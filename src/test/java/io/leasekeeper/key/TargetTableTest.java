package io.leasekeeper.key;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The published normalization table of docs/reference/targets.md, row by row. */
class TargetTableTest {

    @ParameterizedTest(name = "{0} \"{1}\" -> {2}:{3}")
    @CsvSource(delimiter = '|', quoteCharacter = '"', textBlock = """
            host | EXAMPLE.com.                  | host | example.com
            host | example.com                   | host | example.com
            host | "  Example.COM  "             | host | example.com
            host | bücher.de                     | host | xn--bcher-kva.de
            host | xn--bcher-kva.de              | host | xn--bcher-kva.de
            host | BÜCHER.DE.                    | host | xn--bcher-kva.de
            host | faß.de                        | host | xn--fa-hia.de
            host | ＥＸＡＭＰＬＥ.com               | host | example.com
            host | a-b.c-d.example               | host | a-b.c-d.example
            host | localhost                     | host | localhost
            host | 10.0.0.1                      | ip   | 10.0.0.1
            host | [::1]                         | ip   | ::1
            host | "[2001:DB8::1]"               | ip   | 2001:db8::1
            host | 2001:db8::1                   | ip   | 2001:db8::1
            ip   | 10.0.0.1                      | ip   | 10.0.0.1
            ip   | " 192.168.1.254 "             | ip   | 192.168.1.254
            ip   | 0.0.0.0                       | ip   | 0.0.0.0
            ip   | 255.255.255.255               | ip   | 255.255.255.255
            ip   | [::ffff:10.0.0.1]             | ip   | 10.0.0.1
            ip   | ::ffff:10.0.0.1               | ip   | 10.0.0.1
            ip   | ::FFFF:0a00:0001              | ip   | 10.0.0.1
            ip   | 2001:DB8::0:1                 | ip   | 2001:db8::1
            ip   | 2001:0db8:0000:0000:0000:0000:0000:0001 | ip | 2001:db8::1
            ip   | 2001:db8:0:0:1:0:0:1          | ip   | 2001:db8::1:0:0:1
            ip   | 2001:db8::0:0:1               | ip   | 2001:db8::1
            ip   | 0:0:0:0:0:0:0:1               | ip   | ::1
            ip   | ::                            | ip   | ::
            ip   | [fe80::1]                     | ip   | fe80::1
            ip   | 2001:DB8:0:0:0:0:2:1          | ip   | 2001:db8::2:1
            url  | http://Example.COM:80/a/./b/../c%7e?x=1#frag | url | http://example.com/a/c~?x=1
            url  | HTTPS://example.com:443       | url  | https://example.com/
            url  | https://example.com:8443/x    | url  | https://example.com:8443/x
            url  | http://example.com/%7Euser/%2f | url | http://example.com/~user/%2F
            url  | http://example.com/a%2fb      | url  | http://example.com/a%2Fb
            url  | http://example.com/../../a    | url  | http://example.com/a
            url  | http://example.com/a/b/..     | url  | http://example.com/a/
            url  | http://example.com/a/.        | url  | http://example.com/a/
            url  | http://bücher.de/straße       | url  | http://xn--bcher-kva.de/stra%C3%9Fe
            url  | http://[2001:DB8::1]:8080/    | url  | http://[2001:db8::1]:8080/
            url  | http://[::ffff:10.0.0.1]/     | url  | http://10.0.0.1/
            url  | http://10.0.0.1:80            | url  | http://10.0.0.1/
            url  | http://example.com?b=2&a=1    | url  | http://example.com/?b=2&a=1
            url  | http://example.com/a?x=%7e    | url  | http://example.com/a?x=%7e
            url  | ws://example.com:80/socket    | url  | ws://example.com/socket
            url  | http://EXAMPLE.com./          | url  | http://example.com/
            url  | http://example.com/%20a       | url  | http://example.com/%20a
            opaque | "  repo/main  "             | opaque | repo/main
            """)
    void normalizesToTheTablesForm(String type, String input, String expectedType, String expectedValue) {
        Target target = Target.of(TargetType.parse(type), input);
        assertThat(target.type().wireName()).isEqualTo(expectedType);
        assertThat(target.value()).isEqualTo(expectedValue);
    }

    @ParameterizedTest(name = "{0} \"{1}\" is refused")
    @CsvSource(delimiter = '|', quoteCharacter = '"', textBlock = """
            ip   | 010.0.0.1
            ip   | 10.0.0
            ip   | 10.0.0.1.5
            ip   | 0x0a.0.0.1
            ip   | 256.0.0.1
            ip   | 167772161
            ip   | fe80::1%eth0
            ip   | "[fe80::1%25eth0]"
            ip   | 2001:db8:::1
            ip   | example.com
            host | -bad.example
            host | bad-.example
            host | a..b
            host | under_score.example
            host | 010.0.0.1
            host | 0x7f.1
            host | 1.2.3.4.5
            host | "."
            url  | http://user:pass@example.com/
            url  | http://user@example.com/
            url  | example.com/path
            url  | mailto:someone@example.com
            url  | http:///path
            url  | http://example.com:99999/
            url  | http://example.com/%zz
            url  | "http://exa mple.com/"
            url  | http://example.com/a b
            """)
    void refusesWhatHasNoSingleMeaning(String type, String input) {
        assertThatIllegalArgumentException().isThrownBy(() -> Target.of(TargetType.parse(type), input));
    }
}

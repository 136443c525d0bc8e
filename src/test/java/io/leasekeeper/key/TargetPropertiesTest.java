package io.leasekeeper.key;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Locale;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/** Normalizing is idempotent, and equivalent spellings of one target collide on one key. */
class TargetPropertiesTest {

    @Property
    void normalizingANormalizedValueChangesNothing(@ForAll("anyTarget") Target target) {
        assertThat(Target.of(target.type(), target.value())).isEqualTo(target);
    }

    @Property
    void hostSpellingsCollide(@ForAll("hostNames") String host, @ForAll boolean upper, @ForAll boolean trailingDot,
                              @ForAll boolean padded) {
        String spelled = (upper ? host.toUpperCase(Locale.ROOT) : host) + (trailingDot ? "." : "");
        spelled = padded ? "  " + spelled + " " : spelled;
        assertThat(Target.of(TargetType.HOST, spelled)).isEqualTo(Target.of(TargetType.HOST, host));
    }

    @Property
    void ipv4SpellingsCollideAcrossHostIpAndMappedForms(@ForAll("ipv4") String ip) {
        Target canonical = Target.of(TargetType.IP, ip);
        assertThat(Target.of(TargetType.HOST, ip)).isEqualTo(canonical);
        assertThat(Target.of(TargetType.IP, "::ffff:" + ip)).isEqualTo(canonical);
        assertThat(Target.of(TargetType.IP, "[::FFFF:" + ip + "]")).isEqualTo(canonical);
    }

    @Property
    void ipv6SpellingsCollide(@ForAll("ipv6Groups") List<Integer> groups) {
        StringBuilder full = new StringBuilder();
        StringBuilder padded = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            full.append(i == 0 ? "" : ":").append(Integer.toHexString(groups.get(i)));
            padded.append(i == 0 ? "" : ":").append(String.format("%04X", groups.get(i)));
        }
        Target canonical = Target.of(TargetType.IP, full.toString());
        assertThat(Target.of(TargetType.IP, padded.toString())).isEqualTo(canonical);
        assertThat(Target.of(TargetType.IP, "[" + padded + "]")).isEqualTo(canonical);
    }

    @Property
    void urlSpellingsCollide(@ForAll("hostNames") String host, @ForAll("pathSegments") List<String> segments) {
        String path = "/" + String.join("/", segments);
        Target canonical = Target.of(TargetType.URL, "http://" + host + path);
        String dotted = "/./" + String.join("/x/../", segments);
        String variant = "HTTP://" + host.toUpperCase(Locale.ROOT) + ":80" + dotted + "#frag";
        assertThat(Target.of(TargetType.URL, variant)).isEqualTo(canonical);
    }

    @Provide
    Arbitrary<String> hostNames() {
        Arbitrary<String> label = Arbitraries.strings().withCharRange('a', 'z').withChars('0', '9').ofMinLength(1)
                .ofMaxLength(12).filter(l -> Character.isLetter(l.charAt(0)));
        return label.list().ofMinSize(1).ofMaxSize(4).map(labels -> String.join(".", labels) + ".example");
    }

    @Provide
    Arbitrary<String> ipv4() {
        Arbitrary<Integer> octet = Arbitraries.integers().between(0, 255);
        return Combinators.combine(octet, octet, octet, octet).as((a, b, c, d) -> a + "." + b + "." + c + "." + d);
    }

    @Provide
    Arbitrary<List<Integer>> ipv6Groups() {
        return Arbitraries.integers().between(0, 0xFFFF).list().ofSize(8)
                .filter(g -> !(g.get(0) == 0 && g.get(1) == 0 && g.get(2) == 0 && g.get(3) == 0 && g.get(4) == 0
                        && g.get(5) == 0xFFFF)); // IPv4-mapped forms are covered above
    }

    @Provide
    Arbitrary<List<String>> pathSegments() {
        return Arbitraries.strings().withCharRange('a', 'z').withChars('-', '_', '~').ofMinLength(1).ofMaxLength(8)
                .filter(s -> !s.equals(".") && !s.equals(".."))
                .list().ofMinSize(1).ofMaxSize(4);
    }

    @Provide
    Arbitrary<Target> anyTarget() {
        Arbitrary<Target> hosts = hostNames().map(h -> Target.of(TargetType.HOST, h));
        Arbitrary<Target> ips = ipv4().map(ip -> Target.of(TargetType.IP, ip));
        Arbitrary<Target> ip6 = ipv6Groups().map(g -> Target.of(TargetType.IP,
                String.join(":", g.stream().map(Integer::toHexString).toList())));
        Arbitrary<Target> urls = Combinators.combine(hostNames(), pathSegments())
                .as((h, p) -> Target.of(TargetType.URL, "https://" + h + ":8443/" + String.join("/", p) + "?q=1"));
        Arbitrary<Target> opaque = Arbitraries.strings().ofMinLength(1).ofMaxLength(40)
                .filter(s -> !s.isBlank() && s.codePoints().noneMatch(cp -> Character.getType(cp) == Character.CONTROL)
                        && s.chars().noneMatch(c -> Character.isSurrogate((char) c)) && !Text.hasBidiControl(s))
                .map(s -> Target.of(TargetType.OPAQUE, s));
        return Arbitraries.oneOf(hosts, ips, ip6, urls, opaque);
    }
}

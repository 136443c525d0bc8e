package io.leasekeeper.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every link a reader can follow lands: each relative link of the README, UPGRADING.md and docs/ names a file of
 * the repository, and its {@code #fragment} a heading of that file (as GitHub makes anchors); nothing links outside
 * the repository (a clone has nothing beside it); and every docs/ path the code, the chart and the scripts mention
 * exists. Links to the web are not fetched (no network here).
 */
class DocumentLinksTest {

    private static final Path ROOT = Path.of("").toAbsolutePath();

    /** {@code [text](target)} and {@code ![alt](target)}, the target up to a space (a title may follow) or ')'. */
    private static final Pattern INLINE_LINK = Pattern.compile("\\[[^\\]]*]\\(<?([^)\\s>]+)>?(?:\\s+\"[^\"]*\")?\\)");

    /** A reference definition: {@code [label]: target}. */
    private static final Pattern REFERENCE = Pattern.compile("^\\s{0,3}\\[[^\\]]+]:\\s+<?(\\S+?)>?(?:\\s.*)?$");

    /** A path under docs/ as code and configuration mention it, with an optional fragment. */
    private static final Pattern DOCS_MENTION = Pattern.compile("(?<![\\w/.-])docs/[\\w./-]*\\w(#[\\w-]+)?");

    @Test
    void everyRelativeLinkOfTheDocumentsLands() {
        List<String> broken = new ArrayList<>();
        int links = 0;
        for (Path doc : documents()) {
            for (Link link : links(doc)) {
                links++;
                String problem = check(doc.getParent(), link.target());
                if (problem != null) {
                    broken.add(ROOT.relativize(doc) + ":" + link.line() + ": " + link.target() + " (" + problem + ")");
                }
            }
        }
        assertThat(links).as("links read").isGreaterThan(50);
        assertThat(broken).as("links that lead nowhere").isEmpty();
    }

    @Test
    void everyDocsPathTheSourcesMentionExists() throws IOException {
        List<String> missing = new ArrayList<>();
        int mentions = 0;
        for (Path file : sources()) {
            List<String> lines = Files.readAllLines(file);
            for (int i = 0; i < lines.size(); i++) {
                Matcher m = DOCS_MENTION.matcher(lines.get(i));
                while (m.find()) {
                    mentions++;
                    String problem = check(ROOT, m.group());
                    if (problem != null) {
                        missing.add(ROOT.relativize(file) + ":" + (i + 1) + ": " + m.group() + " (" + problem + ")");
                    }
                }
            }
        }
        assertThat(mentions).as("mentions read").isGreaterThan(20);
        assertThat(missing).as("docs/ paths that do not exist").isEmpty();
    }

    @Test
    void everyDecisionIsInTheIndex() throws IOException {
        Path decisions = ROOT.resolve("docs/decisions");
        String index = Files.readString(decisions.resolve("README.md"));
        try (Stream<Path> files = Files.list(decisions)) {
            List<String> records = files.map(p -> p.getFileName().toString())
                    .filter(name -> name.endsWith(".md") && !name.equals("README.md")).sorted().toList();
            assertThat(records).hasSizeGreaterThan(100);
            assertThat(records).as("decisions without a line in docs/decisions/README.md")
                    .allSatisfy(name -> assertThat(index).contains("](" + name + ")"));
        }
    }

    @Test
    void theAnchorsAreGitHubs() {
        assertThat(Anchors.slug("Waiting, watching and lock-delay (contract 1.1)"))
                .isEqualTo("waiting-watching-and-lock-delay-contract-11");
        assertThat(Anchors.slug("`LEASE_HELD` and `Retry-After`")).isEqualTo("lease_held-and-retry-after");
        assertThat(Anchors.slug("The [console](x.md) — a guide")).isEqualTo("the-console--a-guide");
    }

    /** Why a link does not land, or null when it does. */
    private static String check(Path base, String target) {
        if (target.matches("(?i)[a-z][a-z0-9+.-]*:.*")) {
            return null; // http:, https:, mailto:: not fetched
        }
        int hash = target.indexOf('#');
        String path = hash < 0 ? target : target.substring(0, hash);
        String fragment = hash < 0 ? null : target.substring(hash + 1);
        Path file = base.resolve(path).normalize();
        if (!file.startsWith(ROOT)) {
            return "outside the repository";
        }
        if (!Files.exists(file)) {
            return "no such file";
        }
        if (fragment == null || fragment.isEmpty() || !file.toString().endsWith(".md")) {
            return null;
        }
        return Anchors.of(file).contains(fragment) ? null : "no heading makes #" + fragment;
    }

    private record Link(int line, String target) {}

    /** The document's links outside code blocks and code spans; a bare {@code #fragment} is made relative to it. */
    private static List<Link> links(Path doc) {
        List<Link> links = new ArrayList<>();
        boolean fenced = false;
        List<String> lines = read(doc);
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            if (line.stripLeading().startsWith("```")) {
                fenced = !fenced;
                continue;
            }
            if (fenced) {
                continue;
            }
            String text = line.replaceAll("`[^`]*`", "``");
            Matcher inline = INLINE_LINK.matcher(text);
            while (inline.find()) {
                links.add(new Link(i + 1, own(doc, inline.group(1))));
            }
            Matcher reference = REFERENCE.matcher(text);
            if (reference.matches()) {
                links.add(new Link(i + 1, own(doc, reference.group(1))));
            }
        }
        return links;
    }

    private static String own(Path doc, String target) {
        return target.startsWith("#") ? doc.getFileName() + target : target;
    }

    static List<Path> documents() {
        List<Path> docs = new ArrayList<>(List.of(ROOT.resolve("README.md")));
        if (Files.exists(ROOT.resolve("UPGRADING.md"))) {
            docs.add(ROOT.resolve("UPGRADING.md"));
        }
        try (Stream<Path> tree = Files.walk(ROOT.resolve("docs"))) {
            tree.filter(p -> p.toString().endsWith(".md")).sorted().forEach(docs::add);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return docs;
    }

    /**
     * What the code, its configuration, the chart and the scripts are made of (not the documents themselves). A
     * versioned migration is left out: once applied anywhere it is never edited (Flyway's checksum covers its
     * comments), so a path it names stays as it was written.
     */
    private static List<Path> sources() throws IOException {
        List<Path> files = new ArrayList<>();
        for (String dir : List.of("src", "db", "helm", "cli/src", "client/src", "starter/src", ".ci")) {
            try (Stream<Path> tree = Files.walk(ROOT.resolve(dir))) {
                tree.filter(Files::isRegularFile)
                        .filter(p -> !p.toString().matches(".*\\.(png|ico|jar|class)$"))
                        .filter(p -> !p.getFileName().toString().matches("V\\d+__.*\\.sql"))
                        .forEach(files::add);
            }
        }
        for (String file : List.of("Dockerfile", "pom.xml", "service-pom.xml", "cli/pom.xml", "client/pom.xml",
                "starter/pom.xml")) {
            files.add(ROOT.resolve(file));
        }
        return files;
    }

    private static List<String> read(Path file) {
        try {
            return Files.readAllLines(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

package io.leasekeeper.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/guides/client.md is read by someone who pastes its Java into another project: every {@code ```java} block there
 * is a whole compilation unit, imports included, and compiles against the library and the starter as published,
 * each block alone.
 */
class ClientDocSnippetsTest {

    private static final Path DOC = Path.of("docs/guides/client.md");
    private static final Pattern JAVA = Pattern.compile("```java\n(.*?)```", Pattern.DOTALL);

    @Test
    void everyJavaSnippetOfTheClientsDocCompilesWithItsOwnImports(@TempDir Path out) throws IOException {
        List<String> snippets = JAVA.matcher(Files.readString(DOC, StandardCharsets.UTF_8)).results()
                .map(m -> m.group(1)).toList();
        assertThat(snippets).as("the library's, the fence's and the starter's examples").hasSizeGreaterThanOrEqualTo(4);

        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        for (int i = 0; i < snippets.size(); i++) {
            String snippet = snippets.get(i);
            assertThat(snippet).as("snippet %d imports what it uses", i + 1).contains("import io.leasekeeper.client.");
            DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
            Path classes = Files.createDirectories(out.resolve("snippet" + (i + 1)));
            boolean compiled = javac.getTask(null, null, diagnostics, List.of("-proc:none", "--release", "17",
                    "-classpath", System.getProperty("java.class.path"), "-d", classes.toString()), null,
                    List.of(source(i + 1, snippet))).call();

            assertThat(compiled).as("snippet %d of %s:%n%s%n%s", i + 1, DOC, snippet, errors(diagnostics)).isTrue();
        }
    }

    private static JavaFileObject source(int n, String text) {
        Matcher type = Pattern.compile("(?m)^(?:public )?(?:final )?(?:class|interface|record) (\\w+)").matcher(text);
        String name = type.find() ? type.group(1) : "Snippet" + n;
        return new SimpleJavaFileObject(URI.create("string:///" + name + ".java"), JavaFileObject.Kind.SOURCE) {
            @Override
            public CharSequence getCharContent(boolean ignoreEncodingErrors) {
                return text;
            }
        };
    }

    private static String errors(DiagnosticCollector<JavaFileObject> diagnostics) {
        return diagnostics.getDiagnostics().stream().filter(d -> d.getKind() == Diagnostic.Kind.ERROR)
                .map(d -> "line " + d.getLineNumber() + ": " + d.getMessage(null)).collect(Collectors.joining("\n"));
    }
}

package io.leasekeeper.packaging;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The repository's Dockerfile read as its stages and instructions, so that tests run its own commands
 * instead of copies of them. Understands what the file uses: FROM … AS, WORKDIR, COPY [--from=…], RUN,
 * USER, EXPOSE and an exec-form ENTRYPOINT; comments and line continuations.
 */
record Dockerfile(List<Stage> stages) {

    record Instruction(String keyword, String arguments) {
    }

    record Stage(String image, String name, List<Instruction> instructions) {

        List<String> all(String keyword) {
            return instructions.stream().filter(i -> i.keyword().equals(keyword)).map(Instruction::arguments).toList();
        }

        Optional<String> last(String keyword) {
            List<String> found = all(keyword);
            return found.isEmpty() ? Optional.empty() : Optional.of(found.getLast());
        }
    }

    /** A {@code COPY --from=stage source target}. */
    record CopyFrom(String stage, String source, String target) {
    }

    private static final Pattern FROM = Pattern.compile("(\\S+)(?:\\s+AS\\s+(\\S+))?", Pattern.CASE_INSENSITIVE);
    private static final Pattern COPY_FROM = Pattern.compile("--from=(\\S+)\\s+(\\S+)\\s+(\\S+)");

    static Dockerfile read(Path file) throws IOException {
        List<Stage> stages = new ArrayList<>();
        StringBuilder pending = new StringBuilder();
        for (String raw : Files.readAllLines(file)) {
            String line = raw.strip();
            if (line.startsWith("#") || (line.isEmpty() && pending.isEmpty())) {
                continue;
            }
            if (line.endsWith("\\")) {
                pending.append(line, 0, line.length() - 1).append(' ');
                continue;
            }
            String whole = (pending + line).strip();
            pending.setLength(0);
            String[] parts = whole.split("\\s+", 2);
            String keyword = parts[0].toUpperCase();
            String arguments = parts.length > 1 ? parts[1].strip() : "";
            if (keyword.equals("FROM")) {
                Matcher m = FROM.matcher(arguments);
                if (!m.matches()) {
                    throw new IllegalArgumentException("cannot read " + whole);
                }
                stages.add(new Stage(m.group(1), m.group(2), new ArrayList<>()));
            } else {
                stages.getLast().instructions().add(new Instruction(keyword, arguments));
            }
        }
        return new Dockerfile(stages);
    }

    Stage stage(String name) {
        return stages.stream().filter(s -> name.equals(s.name())).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no stage " + name));
    }

    Stage last() {
        return stages.getLast();
    }

    static List<CopyFrom> copiesFrom(Stage stage) {
        List<CopyFrom> copies = new ArrayList<>();
        for (String copy : stage.all("COPY")) {
            Matcher m = COPY_FROM.matcher(copy);
            if (m.matches()) {
                copies.add(new CopyFrom(m.group(1), m.group(2), m.group(3)));
            }
        }
        return copies;
    }
}

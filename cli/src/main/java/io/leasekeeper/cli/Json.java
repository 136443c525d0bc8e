package io.leasekeeper.cli;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonSerializer;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.module.SimpleModule;
import java.io.IOException;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Map;
import picocli.CommandLine;

/** The one-call commands' answers as JSON on standard output, the field names and instants as the API writes them. */
final class Json {

    /** RFC 3339 in UTC with milliseconds, as the contract writes every instant. */
    private static final DateTimeFormatter INSTANT =
            DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);

    private static final ObjectMapper JSON = new ObjectMapper().registerModule(new SimpleModule()
            .addSerializer(Instant.class, new JsonSerializer<>() {
                @Override
                public void serialize(Instant value, JsonGenerator out, SerializerProvider serializers)
                        throws IOException {
                    out.writeString(INSTANT.format(value));
                }
            }));

    private Json() {
    }

    /**
     * One line of JSON in UTF-8 (RFC 8259), whatever the locale: standard output's own encoding would turn every
     * character it lacks into {@code ?} (all but ASCII under {@code LANG=C}, as in cron), and the answer would no
     * longer be the service's.
     */
    static void print(Object answer) {
        try {
            byte[] line = JSON.writeValueAsBytes(answer);
            System.out.write(line, 0, line.length);
            System.out.write('\n');
            System.out.flush();
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write the answer as JSON", e);
        }
    }

    /** {@code --metadata}: a JSON object, or a usage error. */
    static Map<String, Object> object(CommandLine.Model.CommandSpec spec, String text) {
        if (text == null) {
            return Map.of();
        }
        try {
            return JSON.readValue(text, new TypeReference<Map<String, Object>>() { });
        } catch (JsonProcessingException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--metadata must be a JSON object: "
                    + e.getOriginalMessage());
        }
    }
}

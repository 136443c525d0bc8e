package io.leasekeeper.config;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import org.springframework.boot.jackson.autoconfigure.JsonMapperBuilderCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import tools.jackson.core.JsonGenerator;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.MapperFeature;
import tools.jackson.databind.SerializationContext;
import tools.jackson.databind.cfg.CoercionAction;
import tools.jackson.databind.cfg.CoercionInputShape;
import tools.jackson.databind.type.LogicalType;
import tools.jackson.databind.module.SimpleModule;
import tools.jackson.databind.ser.std.StdSerializer;

/**
 * JSON as the contract wants it: instants as RFC 3339 UTC with exactly three fraction digits, no
 * silent coercion of wrong types (a string "30" or a 1.5 for an integer field, or a number for a string field, is a 400),
 * and one reading of a body for every reader: a member given twice in one object is refused (a 400 naming it), not
 * read as its last value while a proxy or a log reads the first. Jackson refuses {@code NaN} and {@code Infinity},
 * which are not JSON, by default.
 */
@Configuration(proxyBeanMethods = false)
class JsonConfig {

    static final DateTimeFormatter RFC3339_MILLIS =
            DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);

    @Bean
    JsonMapperBuilderCustomizer leasekeeperJson() {
        SimpleModule instants = new SimpleModule("leasekeeper-instants");
        instants.addSerializer(Instant.class, new StdSerializer<>(Instant.class) {
            @Override
            public void serialize(Instant value, JsonGenerator gen, SerializationContext context) {
                gen.writeString(RFC3339_MILLIS.format(value));
            }
        });
        return builder -> builder
                .addModule(instants)
                // Checked as the parser reads each name: no second pass over the body.
                .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
                .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
                .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
                .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
                .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
                // A misspelled field ("ttlSecond") must not be silently dropped.
                .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
                // ALLOW_COERCION_OF_SCALARS guards numbers and booleans only; strings need their own rule,
                // or {"holder": 123} would quietly become "123".
                .withCoercionConfig(LogicalType.Textual, textual -> textual
                        .setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
                        .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
                        .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail));
    }
}

package io.leasekeeper.web;

import io.leasekeeper.web.FieldErrors.FieldError;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonToken;
import tools.jackson.core.TokenStreamContext;
import tools.jackson.core.TokenStreamLocation;
import tools.jackson.core.exc.InputCoercionException;
import tools.jackson.core.exc.StreamConstraintsException;
import tools.jackson.core.exc.StreamReadException;
import tools.jackson.core.exc.UnexpectedEndOfInputException;
import tools.jackson.databind.exc.MismatchedInputException;
import tools.jackson.databind.exc.UnrecognizedPropertyException;

/**
 * Says what is wrong with a request body the JSON mapper could not read, as one field error: the member at fault
 * (a JSON path, {@code target.value}, {@code a[0].b}, or {@code body}) and a message for the person who wrote the
 * request. A syntax error gives its line and column and the parser's short description; a member the request does
 * not have is called unknown, with the member meant when one is close; bytes that are not UTF-8 are said to be so;
 * a value of the wrong type says which type was expected and which was found. No message quotes more than
 * {@link #MAX_EXCERPT} characters of the parser's words (which may quote the body).
 */
final class JsonBodies {

    /** The most of the parser's own description a message repeats. */
    static final int MAX_EXCERPT = 100;
    /**
     * How Jackson's strict duplicate detection (config.JsonConfig) words its refusal: it is a plain
     * StreamReadException, told apart from malformed JSON only by its message.
     */
    private static final String DUPLICATE_MEMBER = "Duplicate Object property";
    /** Jackson's words for bytes that are not UTF-8 ("Invalid UTF-8 start byte 0xff", "... middle byte ..."). */
    private static final String INVALID_UTF8 = "Invalid UTF-8";

    private JsonBodies() {
    }

    /** The field error for the first failure among {@code e}'s causes that the JSON mapper raised. */
    static FieldError error(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof UnrecognizedPropertyException u) {
                return unknown(u);
            }
            if (t instanceof MismatchedInputException m) {
                return new FieldError(field(path(m)), wrongType(m));
            }
            if (t instanceof InputCoercionException c) {
                String path = path(c);
                return new FieldError(field(path.isEmpty() ? parserPath(c) : path), "is out of range");
            }
            if (t instanceof StreamConstraintsException c) {
                return new FieldError(field(parserPath(c)), "is beyond what the JSON reader accepts: "
                        + excerpt(c.getOriginalMessage().replaceAll(", from `[^`]*`\\)", ")")));
            }
            if (t instanceof StreamReadException s) {
                return unreadable(s);
            }
            if (t instanceof JacksonException j) {
                return new FieldError(field(path(j)), "has a value that cannot be read here");
            }
        }
        return new FieldError("body", "is missing or not valid JSON");
    }

    private static FieldError unknown(UnrecognizedPropertyException u) {
        List<String> known = u.getKnownPropertyIds() == null ? List.of()
                : u.getKnownPropertyIds().stream().map(Objects::toString).sorted().toList();
        String meant = CloseNames.closest(u.getPropertyName(), known);
        String message = meant != null ? "is unknown; did you mean " + meant + "?"
                : known.isEmpty() ? "is unknown" : "is unknown; the known fields here are " + String.join(", ", known);
        return new FieldError(field(path(u)), message);
    }

    /** Malformed JSON, bytes that are not UTF-8, or a member given twice. */
    private static FieldError unreadable(StreamReadException s) {
        String message = s.getOriginalMessage() == null ? "" : s.getOriginalMessage();
        if (message.startsWith(DUPLICATE_MEMBER)) {
            // The parser stopped at the second occurrence: its context names the member.
            return new FieldError(field(parserPath(s)), "appears more than once");
        }
        if (message.startsWith(INVALID_UTF8)) {
            return new FieldError(field(parserPath(s)), "holds bytes that are not UTF-8" + at(s.getLocation())
                    + "; a JSON body is encoded in UTF-8");
        }
        String what = s instanceof UnexpectedEndOfInputException ? "the body ends before its JSON is complete"
                : excerpt(message);
        return new FieldError("body", "is not valid JSON" + at(s.getLocation()) + ": " + what);
    }

    private static String wrongType(MismatchedInputException m) {
        String expected = describeType(m.getTargetType());
        String found = describeToken(m.getCurrentToken());
        if (expected == null) {
            return found == null ? "has a value of the wrong type" : "must not be " + found;
        }
        return "must be " + expected + (found == null ? "" : ", not " + found);
    }

    private static String describeType(Class<?> type) {
        if (type == null) {
            return null;
        }
        if (CharSequence.class.isAssignableFrom(type)) {
            return "a string";
        }
        if (type == BigDecimal.class || type == BigInteger.class || type == Integer.class || type == Long.class
                || type == int.class || type == long.class) {
            return "a whole number";
        }
        if (Number.class.isAssignableFrom(type) || type == double.class) {
            return "a number";
        }
        if (type == Boolean.class || type == boolean.class) {
            return "true or false";
        }
        if (Collection.class.isAssignableFrom(type) || type.isArray()) {
            return "an array";
        }
        if (Map.class.isAssignableFrom(type) || type.isRecord()) {
            return "an object";
        }
        return null;
    }

    private static String describeToken(JsonToken token) {
        if (token == null) {
            return null;
        }
        return switch (token) {
            case VALUE_STRING -> "a string";
            case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> "a number";
            case VALUE_TRUE, VALUE_FALSE -> "true or false";
            case START_ARRAY -> "an array";
            case START_OBJECT -> "an object";
            case VALUE_NULL -> "null";
            default -> null;
        };
    }

    /** " at line L, column C", or nothing when the parser gave no position. */
    private static String at(TokenStreamLocation location) {
        if (location == null || location.getLineNr() < 1) {
            return "";
        }
        return " at line " + location.getLineNr() + ", column " + location.getColumnNr();
    }

    /** The parser's description, one line of at most {@link #MAX_EXCERPT} characters. */
    private static String excerpt(String message) {
        String line = message.strip().replaceAll("\\s+", " ");
        return line.length() <= MAX_EXCERPT ? line : line.substring(0, MAX_EXCERPT - 1) + "…";
    }

    /** The member's path, {@code body} for the whole body; a path longer than {@link #MAX_EXCERPT} is cut. */
    private static String field(String path) {
        return path.isEmpty() ? "body" : excerpt(path);
    }

    /** The path of the member the parser was in when it stopped, for failures that carry no path of their own. */
    private static String parserPath(JacksonException e) {
        return e.processor() instanceof tools.jackson.core.JsonParser parser ? path(parser.streamReadContext()) : "";
    }

    /** A path in the same form as a failure's path: {@code target.value}, {@code a[0].b}. */
    private static String path(TokenStreamContext context) {
        String path = "";
        for (TokenStreamContext c = context; c != null && !c.inRoot(); c = c.getParent()) {
            String step = c.inArray() ? "[" + c.getCurrentIndex() + "]" : c.currentName();
            if (step != null) {
                path = step + (path.isEmpty() || path.startsWith("[") ? "" : ".") + path;
            }
        }
        return path;
    }

    private static String path(JacksonException e) {
        StringBuilder path = new StringBuilder();
        for (JacksonException.Reference ref : e.getPath()) {
            if (ref.getPropertyName() != null) {
                path.append(path.isEmpty() ? "" : ".").append(ref.getPropertyName());
            } else if (ref.getIndex() >= 0) {
                path.append('[').append(ref.getIndex()).append(']');
            }
        }
        return path.toString();
    }
}

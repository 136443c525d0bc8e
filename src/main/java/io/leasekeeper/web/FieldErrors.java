package io.leasekeeper.web;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/** Collects every invalid field of a request so that one 400 names them all. */
public final class FieldErrors {

    public record FieldError(String field, String message) {
    }

    /** 400 VALIDATION_FAILED with the list of fields at fault. */
    public static final class ValidationFailed extends ApiException {
        private final List<FieldError> errors;

        public ValidationFailed(List<FieldError> errors) {
            super(ErrorCode.VALIDATION_FAILED, describe(errors));
            this.errors = List.copyOf(errors);
        }

        public List<FieldError> errors() {
            return errors;
        }

        private static String describe(List<FieldError> errors) {
            return errors.stream().map(e -> e.field() + " " + e.message())
                    .reduce((a, b) -> a + "; " + b).orElse("invalid request");
        }
    }

    private final List<FieldError> errors = new ArrayList<>();

    /** Runs a parse or normalization; an IllegalArgumentException it throws becomes an error on the field. */
    public <T> T check(String field, Supplier<T> parse) {
        try {
            return parse.get();
        } catch (IllegalArgumentException e) {
            reject(field, e.getMessage());
            return null;
        }
    }

    /**
     * A whole number within {@code min..max}, or null after rejecting the field. A body takes its whole numbers as
     * {@link BigDecimal} so that every JSON number reaches this check, whatever its size or notation: a value out of
     * the bounds (3601, 1e12, a number beyond any integer type, a negative one) is told the bounds, and one within
     * them with a fraction (1.5) is told it must be whole. Numbers are read by value, as JSON Schema's integer is:
     * 30, 30.0 and 3e1 are all 30.
     */
    public Long wholeWithin(String field, BigDecimal value, long min, long max) {
        // compareTo and stripTrailingZeros are cheap for any exponent (1e999999999); nothing expands the number.
        if (value.compareTo(BigDecimal.valueOf(min)) < 0 || value.compareTo(BigDecimal.valueOf(max)) > 0) {
            reject(field, "must be within " + min + ".." + max);
            return null;
        }
        if (value.signum() != 0 && value.stripTrailingZeros().scale() > 0) {
            reject(field, "must be a whole number within " + min + ".." + max);
            return null;
        }
        return value.longValueExact();
    }

    /** A query parameter's whole number within {@code min..max} (as {@link #wholeWithin(String, BigDecimal, long, long)}). */
    public Long wholeWithin(String field, String text, long min, long max) {
        BigDecimal value;
        try {
            value = new BigDecimal(text);
        } catch (NumberFormatException e) {
            reject(field, "must be a whole number within " + min + ".." + max);
            return null;
        }
        return wholeWithin(field, value, min, max);
    }

    public void reject(String field, String message) {
        errors.add(new FieldError(field, message));
    }

    public boolean isEmpty() {
        return errors.isEmpty();
    }

    public void throwIfAny() {
        if (!errors.isEmpty()) {
            throw new ValidationFailed(errors);
        }
    }

    public static ValidationFailed single(String field, String message) {
        return new ValidationFailed(List.of(new FieldError(field, message)));
    }
}

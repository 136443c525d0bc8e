package io.leasekeeper.web;

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

package io.leasekeeper.openapi;

import io.leasekeeper.web.ErrorCode;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The problems a handler answers besides those every operation can answer (see {@link ContractAnswers}),
 * written beside the handler so that its code and its documented failures are read together. The
 * OpenAPI document groups them by status, with titles and statuses from {@link ErrorCode}.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
public @interface ProblemCodes {

    ErrorCode[] value();
}

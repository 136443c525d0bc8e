package io.leasekeeper.support;

import java.util.ArrayList;
import java.util.List;

/**
 * PostgreSQL's auto_explain, for tests that read the plans of the statements inside the service's functions
 * (EXPLAIN of a call shows only the call): a session with {@link #SESSION} sends the plan of every statement it
 * runs, nested ones too, to the client as a message (a JDBC warning) with the statement's answer.
 */
public final class AutoExplain {

    /** The session's settings, one string of statements (Hikari's connection-init-sql takes it as it is). */
    public static final String SESSION = "LOAD 'auto_explain'; SET auto_explain.log_min_duration = 0;"
            + " SET auto_explain.log_nested_statements = on; SET auto_explain.log_format = json;"
            + " SET client_min_messages = log";

    private AutoExplain() {
    }

    /** The plans (JSON) among these messages, but the one of the statement that called {@code function} itself. */
    public static List<String> nestedPlans(List<String> messages, String function) {
        List<String> plans = new ArrayList<>();
        for (String message : messages) {
            if (message.contains("\"Plan\"") && !message.contains(function + "(")) {
                plans.add(message.substring(message.indexOf('{')));
            }
        }
        return plans;
    }
}

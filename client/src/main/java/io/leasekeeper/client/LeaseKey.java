package io.leasekeeper.client;

import java.util.Objects;

/**
 * A lease's key as a client names it: program (null: {@code default}), target, actor and operation (null:
 * none). The tenant is never sent; it is the token's.
 */
public record LeaseKey(String program, Target target, String actor, String operation) {

    public LeaseKey {
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(actor, "actor");
    }

    public static LeaseKey of(Target target, String actor) {
        return new LeaseKey(null, target, actor, null);
    }

    public LeaseKey withProgram(String program) {
        return new LeaseKey(program, target, actor, operation);
    }

    public LeaseKey withOperation(String operation) {
        return new LeaseKey(program, target, actor, operation);
    }
}

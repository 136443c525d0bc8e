package io.leasekeeper.client;

/**
 * The filters of a list; every field null means "not filtered" ({@code state} null lists active leases, as the
 * service's default; {@code "any"} lists all). {@code operation} filters by the key's operation class; null lists
 * leases with any operation or none.
 */
public record ListQuery(String program, String actor, String targetType, String target, String owner,
                        String holder, String state, Integer limit, String cursor, String operation) {

    /** Every filter but the operation's. */
    public ListQuery(String program, String actor, String targetType, String target, String owner, String holder,
                     String state, Integer limit, String cursor) {
        this(program, actor, targetType, target, owner, holder, state, limit, cursor, null);
    }

    public static ListQuery active() {
        return new ListQuery(null, null, null, null, null, null, null, null, null, null);
    }

    public ListQuery withActor(String actor) {
        return new ListQuery(program, actor, targetType, target, owner, holder, state, limit, cursor, operation);
    }

    public ListQuery withOperation(String operation) {
        return new ListQuery(program, actor, targetType, target, owner, holder, state, limit, cursor, operation);
    }

    public ListQuery withHolder(String holder) {
        return new ListQuery(program, actor, targetType, target, owner, holder, state, limit, cursor, operation);
    }

    public ListQuery withState(String state) {
        return new ListQuery(program, actor, targetType, target, owner, holder, state, limit, cursor, operation);
    }

    public ListQuery withLimit(int limit) {
        return new ListQuery(program, actor, targetType, target, owner, holder, state, limit, cursor, operation);
    }

    public ListQuery withCursor(String cursor) {
        return new ListQuery(program, actor, targetType, target, owner, holder, state, limit, cursor, operation);
    }
}

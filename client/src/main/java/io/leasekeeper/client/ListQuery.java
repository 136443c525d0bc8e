package io.leasekeeper.client;

/**
 * The filters of a list; every field null means "not filtered" ({@code state} null lists active leases, as the
 * service's default; {@code "any"} lists all).
 */
public record ListQuery(String program, String actor, String targetType, String target, String owner,
                        String holder, String state, Integer limit, String cursor) {

    public static ListQuery active() {
        return new ListQuery(null, null, null, null, null, null, null, null, null);
    }

    public ListQuery withActor(String actor) {
        return new ListQuery(program, actor, targetType, target, owner, holder, state, limit, cursor);
    }

    public ListQuery withHolder(String holder) {
        return new ListQuery(program, actor, targetType, target, owner, holder, state, limit, cursor);
    }

    public ListQuery withState(String state) {
        return new ListQuery(program, actor, targetType, target, owner, holder, state, limit, cursor);
    }

    public ListQuery withLimit(int limit) {
        return new ListQuery(program, actor, targetType, target, owner, holder, state, limit, cursor);
    }

    public ListQuery withCursor(String cursor) {
        return new ListQuery(program, actor, targetType, target, owner, holder, state, limit, cursor);
    }
}

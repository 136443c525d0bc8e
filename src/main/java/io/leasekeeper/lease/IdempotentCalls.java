package io.leasekeeper.lease;

import io.leasekeeper.idempotency.IdempotencyKeys;
import io.leasekeeper.idempotency.IdempotencyStore;
import io.leasekeeper.security.Caller;
import io.leasekeeper.web.FieldErrors;
import jakarta.servlet.http.HttpServletRequest;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Optional;
import java.util.function.Supplier;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Component;
import org.springframework.transaction.support.TransactionTemplate;
import tools.jackson.databind.json.JsonMapper;

/**
 * Runs a lease write under an Idempotency-Key. The claim, the operation (which joins this transaction) and the
 * recorded outcome commit together: a retry after a lost response replays the first answer with the lease as it
 * is now and {@code Idempotent-Replayed: true}; it never acquires again or draws a second token. Only successes
 * are recorded: a refusal gives the claim up and its retry simply runs again. (A busy answer or a refusal commits
 * what the operation did on its way, such as recording an old lease's expiry or marking the key watched; an
 * exception rolls everything back.) It returns what the operation decided, or the first answer to replay, as a
 * {@link LeaseOutcome}, answered after the commit.
 */
@Component
class IdempotentCalls {

    static final String HEADER = IdempotencyKeys.HEADER;

    private final IdempotencyStore store;
    private final LeaseReads leases;
    private final TransactionTemplate transaction;
    private final JsonMapper json;

    IdempotentCalls(IdempotencyStore store, LeaseReads leases, TransactionTemplate transaction, JsonMapper json) {
        this.store = store;
        this.leases = leases;
        this.transaction = transaction;
        this.json = json;
    }

    /** The request an Idempotency-Key names (null: none was sent). */
    IdempotencyStore.Request request(String idempotencyKey, Caller caller, String method, String path, Object body) {
        return idempotencyKey == null ? null : new IdempotencyStore.Request(caller.tenant(), caller.subject(),
                parseKey(idempotencyKey), fingerprint(method, path, body));
    }

    /**
     * A change to a lease (renew, release, revoke) under the request's Idempotency-Key ({@code idempotencyKey} null:
     * none), answered as {@link LeaseAnswers#of} answers its outcome.
     */
    ResponseEntity<?> answer(String idempotencyKey, Caller caller, HttpServletRequest http, Object body,
                             Supplier<LeaseOutcome> operation) {
        IdempotencyStore.Request request = request(idempotencyKey, caller, "POST", http.getRequestURI(), body);
        return LeaseAnswers.of(run(request, caller, operation), null, http);
    }

    /**
     * Runs the operation under the request's Idempotency-Key ({@code request} null: as it is). A grant (201) and a
     * change (200) are remembered with their lease; any other outcome gives the claim up, so that its retry runs
     * again. A request already answered is not run: its first answer is replayed.
     */
    LeaseOutcome run(IdempotencyStore.Request request, Caller caller, Supplier<LeaseOutcome> operation) {
        if (request == null) {
            return operation.get();
        }
        return transaction.execute(tx -> {
            Optional<IdempotencyStore.Completed> done = store.claim(request);
            if (done.isPresent()) {
                return replay(done.get(), caller);
            }
            LeaseOutcome outcome = operation.get();
            switch (outcome) {
                case LeaseOutcome.Granted granted -> store.complete(request, 201, granted.lease().id());
                case LeaseOutcome.Changed changed -> store.complete(request, 200, changed.lease().id());
                default -> store.abandon(request); // a busy key or a refusal is not remembered: its retry runs again
            }
            return outcome;
        });
    }

    /** The key a client sent; a malformed key is a 400. */
    static String parseKey(String header) {
        return IdempotencyKeys.parse(header).orElseThrow(() ->
                FieldErrors.single(HEADER, "must be 1..255 printable ASCII characters"));
    }

    private LeaseOutcome.Replayed replay(IdempotencyStore.Completed done, Caller caller) {
        LeaseRead now = leases.byId(done.leaseId(), caller.tenant())
                .orElseThrow(() -> new IllegalStateException("idempotency record names a missing lease"));
        return new LeaseOutcome.Replayed(done.status(), now.lease(), now.now());
    }

    private String fingerprint(String method, String path, Object body) {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            sha.update((method + " " + path + "\n").getBytes(StandardCharsets.UTF_8));
            sha.update(json.writeValueAsString(body).getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(sha.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}

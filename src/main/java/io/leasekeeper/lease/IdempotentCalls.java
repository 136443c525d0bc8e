package io.leasekeeper.lease;

import io.leasekeeper.idempotency.IdempotencyKeys;
import io.leasekeeper.idempotency.IdempotencyStore;
import io.leasekeeper.security.Caller;
import io.leasekeeper.web.FieldErrors;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Function;
import java.util.function.Supplier;
import org.springframework.stereotype.Component;
import org.springframework.transaction.support.TransactionTemplate;
import tools.jackson.databind.json.JsonMapper;

/**
 * Runs a lease write under an Idempotency-Key. The claim, the operation (which joins this transaction) and the
 * recorded outcome commit together: a retry after a lost response replays the first answer with the lease as it
 * is now and {@code Idempotent-Replayed: true}; it never acquires again or draws a second token. Only successes
 * are recorded: a refusal gives the claim up and its retry simply runs again. (A refusal by exception rolls the
 * transaction back; an acquire's busy answer commits what the acquire did on its way, such as recording an old
 * lease's expiry or marking the key watched.) It returns what the operation decided, or the first answer to
 * replay: the controller makes the HTTP answer of either, after the commit.
 */
@Component
class IdempotentCalls {

    static final String HEADER = IdempotencyKeys.HEADER;

    /** A write's outcome as it ran now ({@code fresh}), or the first request's answer to replay ({@code replay}). */
    record Outcome<T>(T fresh, Replay replay) {
    }

    /** The first request's answer: its status, and its lease as it is now. */
    record Replay(int status, LeaseView lease) {
    }

    /** A success to remember: the status it is answered with, and its lease. */
    record Success(int status, UUID leaseId) {
    }

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
     * Runs the operation under the request's Idempotency-Key ({@code request} null: as it is). {@code success}
     * tells the outcomes to remember (null: a refusal, not remembered).
     */
    <T> Outcome<T> run(IdempotencyStore.Request request, Caller caller, Supplier<T> operation,
                       Function<T, Success> success) {
        if (request == null) {
            return new Outcome<>(operation.get(), null);
        }
        return transaction.execute(tx -> {
            Optional<IdempotencyStore.Completed> done = store.claim(request);
            if (done.isPresent()) {
                return new Outcome<T>(null, replay(done.get(), caller));
            }
            T outcome = operation.get();
            Success succeeded = success.apply(outcome);
            if (succeeded != null) {
                store.complete(request, succeeded.status(), succeeded.leaseId());
            } else {
                store.abandon(request); // a refusal (a busy key) is not remembered: its retry runs again
            }
            return new Outcome<>(outcome, null);
        });
    }

    /** A renew, release or revoke under the request's Idempotency-Key (null: none was sent): 200 with the lease. */
    Outcome<LeaseView> write(String idempotencyKey, Caller caller, String method, String path, Object body,
                             Supplier<LeaseView> operation) {
        return run(request(idempotencyKey, caller, method, path, body), caller, operation,
                lease -> new Success(200, lease.leaseId()));
    }

    /** The key a client sent; a malformed key is a 400. */
    static String parseKey(String header) {
        return IdempotencyKeys.parse(header).orElseThrow(() ->
                FieldErrors.single(HEADER, "must be 1..255 printable ASCII characters"));
    }

    private Replay replay(IdempotencyStore.Completed done, Caller caller) {
        LeaseRead now = leases.byId(done.leaseId(), caller.tenant())
                .orElseThrow(() -> new IllegalStateException("idempotency record names a missing lease"));
        return new Replay(done.status(), LeaseView.of(now.lease(), now.now()));
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

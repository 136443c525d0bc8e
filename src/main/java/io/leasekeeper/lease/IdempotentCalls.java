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
import java.util.function.Supplier;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Component;
import org.springframework.transaction.support.TransactionTemplate;
import tools.jackson.databind.json.JsonMapper;

/**
 * Runs a lease write under an Idempotency-Key. The claim, the operation (whose @Transactional joins this
 * transaction) and the recorded outcome commit together: a retry after a lost response replays the first
 * answer with the lease as it is now and {@code Idempotent-Replayed: true}; it never acquires again or
 * draws a second token. Only successes are recorded: a refusal gives the claim up and its retry simply
 * runs again. (A refusal by exception rolls the transaction back; an acquire's busy answer commits what
 * the acquire did on its way, such as recording an old lease's expiry or marking the key watched.)
 */
@Component
class IdempotentCalls {

    static final String HEADER = IdempotencyKeys.HEADER;

    private final IdempotencyStore store;
    private final LeaseStore leases;
    private final TransactionTemplate transaction;
    private final JsonMapper json;

    IdempotentCalls(IdempotencyStore store, LeaseStore leases, TransactionTemplate transaction, JsonMapper json) {
        this.store = store;
        this.leases = leases;
        this.transaction = transaction;
        this.json = json;
    }

    ResponseEntity<?> run(String idempotencyKey, Caller caller, String method, String path, Object body,
                          Supplier<ResponseEntity<?>> call) {
        return run(request(idempotencyKey, caller, method, path, body), caller, call);
    }

    /** The request an Idempotency-Key names (null: none was sent). */
    IdempotencyStore.Request request(String idempotencyKey, Caller caller, String method, String path, Object body) {
        return idempotencyKey == null ? null : new IdempotencyStore.Request(caller.tenant(), caller.subject(),
                parseKey(idempotencyKey), fingerprint(method, path, body));
    }

    /** Runs the call under the request's Idempotency-Key ({@code request} null: as it is). */
    ResponseEntity<?> run(IdempotencyStore.Request request, Caller caller, Supplier<ResponseEntity<?>> call) {
        if (request == null) {
            return call.get();
        }
        return transaction.execute(tx -> {
            Optional<IdempotencyStore.Completed> done = store.claim(request);
            if (done.isPresent()) {
                return replay(done.get(), caller);
            }
            ResponseEntity<?> response = call.get();
            if (response.getStatusCode().is2xxSuccessful() && response.getBody() instanceof LeaseView lease) {
                store.complete(request, response.getStatusCode().value(), lease.leaseId());
            } else {
                store.abandon(request); // a refusal (a busy key) is not remembered: its retry runs again
            }
            return response;
        });
    }

    /** The key a client sent; a malformed key is a 400. */
    static String parseKey(String header) {
        return IdempotencyKeys.parse(header).orElseThrow(() ->
                FieldErrors.single(HEADER, "must be 1..255 printable ASCII characters"));
    }

    private ResponseEntity<?> replay(IdempotencyStore.Completed done, Caller caller) {
        UUID leaseId = done.leaseId();
        LeaseStore.AtTime now = leases.byId(leaseId, caller.tenant())
                .orElseThrow(() -> new IllegalStateException("idempotency record names a missing lease"));
        var builder = ResponseEntity.status(done.status()).header(IdempotencyKeys.REPLAYED_HEADER, "true");
        if (done.status() == 201) {
            builder.header("Location", "/v1/leases/" + leaseId);
        }
        return builder.body(LeaseView.of(now.lease(), now.now()));
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

package io.leasekeeper.client;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Every operation of Leasekeeper's HTTP API (contract revision 1.1) as a typed call. A call answers the lease
 * (or page, or history) or throws: a {@link ProblemException} subclass for each problem code the service
 * answered, {@link ServiceUnavailableException} when it could not be reached.
 *
 * <p>Every write carries an {@code Idempotency-Key} of its own (or the caller's, given to the overloads of
 * acquire, renew and release that take one), kept across its retries: a 503, a 429 {@code TENANT_BUSY}
 * (revision 1.2) or a failed connection is retried with exponential backoff and full jitter (at least
 * {@code Retry-After} when the service sends one, never past a waiting acquire's wait), and a retry of a write
 * whose answer was lost replays that answer instead of acting twice. Reads are retried the same way.
 * Thread-safe; one client serves a whole application.
 *
 * <p>Every request goes under the base URL's path ({@link BaseUrl}): {@code https://host/leasekeeper} sends
 * {@code /leasekeeper/v1/leases}. The base URL is https unless its host is loopback or the builder allowed plain
 * http ({@link Builder#allowPlainHttp}); the client never shows the bearer token, in its {@link #toString()}
 * or in its messages.
 */
public final class LeasekeeperClient {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final URI baseUrl;
    private final Supplier<String> token;
    private final HttpClient http;
    private final Duration requestTimeout;
    private final int maxAttempts;
    private final Duration firstBackoff;
    private final Duration maxBackoff;
    private final LeaseListener listener;

    private LeasekeeperClient(Builder b) {
        try {
            this.baseUrl = BaseUrl.checked(b.baseUrl, b.allowPlainHttp, "the builder's allowPlainHttp(true)");
        } catch (IllegalArgumentException broken) {
            throw new IllegalArgumentException("Leasekeeper's base URL " + b.baseUrl + " " + broken.getMessage());
        }
        this.token = b.token;
        this.http = b.http != null ? b.http : HttpClient.newBuilder().connectTimeout(b.connectTimeout).build();
        this.requestTimeout = b.requestTimeout;
        this.maxAttempts = b.maxAttempts;
        this.firstBackoff = b.firstBackoff;
        this.maxBackoff = b.maxBackoff;
        this.listener = b.listener;
    }

    /**
     * A client of the service at {@code baseUrl} (for example {@code https://leasekeeper.internal}, or
     * {@code https://gateway.internal/leasekeeper} behind a gateway that routes by path); {@link Builder#build()}
     * checks it ({@link BaseUrl}).
     */
    public static Builder builder(URI baseUrl) {
        return new Builder(baseUrl);
    }

    /** The URL every request is resolved under: the builder's, its path ending with {@code /}. */
    public URI baseUrl() {
        return baseUrl;
    }

    /** Names the service, never the token. */
    @Override
    public String toString() {
        return "LeasekeeperClient[" + baseUrl + "]";
    }

    /** The longest {@code waitSeconds} one request asks for: the contract's default {@code leasekeeper.wait.max}. */
    static final int MAX_WAIT_SECONDS = 30;

    /**
     * Acquires the key if it is free (201), or waits for it up to {@code waitSeconds}; throws
     * {@link ProblemException.LeaseHeld} or {@link ProblemException.LockDelayed} when it stays busy. The request
     * carries an {@code Idempotency-Key} of its own, the same on each of this call's retries.
     */
    public Lease acquire(AcquireRequest request) {
        return acquire(request, UUID.randomUUID().toString());
    }

    /**
     * {@link #acquire(AcquireRequest)} under the caller's {@code Idempotency-Key}, for a caller that retries a
     * logical request itself: after a lost answer, or on another instance of the service. The same key with the
     * same request replays the first answer (the same lease) instead of acquiring again; the same key with
     * another request is {@link ProblemException.IdempotencyKeyReused}. A key is the caller's promise that it
     * names one logical request: never use it for two.
     */
    public Lease acquire(AcquireRequest request, String idempotencyKey) {
        return acquireTold(request, Objects.requireNonNull(idempotencyKey, "idempotencyKey")).lease();
    }

    /** One acquire under one key, its transient answers retried inside its own wait; the wait told the listener. */
    private Granted acquireTold(AcquireRequest request, String idempotencyKey) {
        if (request.waitSeconds() == 0) {
            return acquireOnce(request, idempotencyKey, maxAttempts, null);
        }
        long start = System.nanoTime();
        Long deadline = request.waitSeconds() > 0 ? start + TimeUnit.SECONDS.toNanos(request.waitSeconds()) : null;
        boolean acquired = false;
        try {
            Granted granted = acquireOnce(request, idempotencyKey, maxAttempts, deadline);
            acquired = true;
            return granted;
        } finally {
            told(request.key(), start, acquired);
        }
    }

    /**
     * Acquires the key, waiting for it up to {@code wait} however long that is: waiting acquires of at most the
     * service's cap each (30 s, or less when the service's is lower), each under an Idempotency-Key of its own
     * that is kept while the service is unreachable or answers 503 or 429 TENANT_BUSY, retried under backoff until
     * the wait ends.
     * Throws {@link ProblemException.Busy} when the key is still busy then, and what the last try threw when the
     * service stayed unavailable. The request's own {@code waitSeconds} is ignored.
     */
    public Lease acquire(AcquireRequest request, Duration wait) {
        return acquireWithin(request, wait).lease();
    }

    /** {@link #hold(AcquireRequest, HoldOptions)}, waiting for the key up to {@code wait} as {@link #acquire(AcquireRequest, Duration)} does. */
    public HeldLease hold(AcquireRequest request, Duration wait, HoldOptions options) {
        Granted granted = acquireWithin(request, wait);
        return new HeldLease(this, granted.lease(), granted.countsFromNanos(), options);
    }

    /**
     * A grant and when, on {@link System#nanoTime()}, its {@code remainingMs} counts from for a held lease's first
     * deadline: the send time of the try that was answered, or, for an acquire that waited, its answer's arrival
     * (why that is safe: {@link HeldLease}).
     */
    private record Granted(Lease lease, long countsFromNanos) {
    }

    private Granted acquireWithin(AcquireRequest request, Duration wait) {
        long start = System.nanoTime();
        long deadline = start + wait.toNanos();
        boolean waits = !wait.isZero() && !wait.isNegative();
        boolean acquired = false;
        int cap = MAX_WAIT_SECONDS;
        try {
            while (true) {
                String idempotencyKey = UUID.randomUUID().toString();
                long left = deadline - System.nanoTime();
                int seconds = left <= 0 ? 0 : (int) Math.min(cap, (left + 999_999_999L) / 1_000_000_000L);
                long sentAt = System.nanoTime();
                try {
                    // Its transient answers are retried under this Idempotency-Key until the wait ends (without a
                    // wait, as any call's are).
                    Granted granted = acquireOnce(request.withWaitSeconds(seconds), idempotencyKey,
                            waits ? Integer.MAX_VALUE : maxAttempts, waits ? deadline : null);
                    acquired = true;
                    return granted;
                } catch (ProblemException.ValidationFailed invalid) {
                    boolean waitTooLong = invalid.problem().errors().stream()
                            .anyMatch(e -> "waitSeconds".equals(e.field()));
                    if (!waitTooLong || seconds <= 1) {
                        throw invalid;
                    }
                    cap = seconds / 2; // the service's leasekeeper.wait.max is lower than asked
                } catch (ProblemException.Busy busy) {
                    long now = System.nanoTime();
                    if (deadline - now <= 0) {
                        throw busy;
                    }
                    if (now - sentAt < TimeUnit.SECONDS.toNanos(seconds) / 2) {
                        // Answered long before its wait: do not ask again at once.
                        Duration retryAfter = busy.problem().retryAfter();
                        sleep(Math.min(retryAfter == null ? 1_000 : retryAfter.toMillis(), 1_000), deadline);
                    }
                }
            }
        } finally {
            if (waits) {
                told(request.key(), start, acquired);
            }
        }
    }

    /** One acquire under one key: {@code attempts} tries at most, none begun after {@code deadline} (null: none). */
    private Granted acquireOnce(AcquireRequest request, String idempotencyKey, int attempts, Long deadline) {
        Map<String, Object> body = new LinkedHashMap<>();
        put(body, "program", request.key().program());
        body.put("target", Map.of("type", request.key().target().type(), "value", request.key().target().value()));
        body.put("actor", request.key().actor());
        put(body, "operation", request.key().operation());
        body.put("holder", request.holder());
        body.put("ttlSeconds", request.ttlSeconds());
        put(body, "maxLifetimeSeconds", request.maxLifetimeSeconds());
        // 0 is the contract's default, not sent; anything else is, a negative value for the service to refuse.
        if (request.lockDelaySeconds() != 0) {
            body.put("lockDelaySeconds", request.lockDelaySeconds());
        }
        if (request.waitSeconds() != 0) {
            body.put("waitSeconds", request.waitSeconds());
        }
        put(body, "jobId", request.jobId());
        put(body, "traceId", request.traceId());
        if (!request.metadata().isEmpty()) {
            body.put("metadata", request.metadata());
        }
        Answer answer = post("v1/leases", body, Duration.ofSeconds(Math.max(0, request.waitSeconds())),
                idempotencyKey, attempts, deadline);
        return new Granted(lease(answer.body()),
                request.waitSeconds() > 0 ? answer.receivedAtNanos() : answer.sentAtNanos());
    }

    private void told(LeaseKey key, long start, boolean acquired) {
        Duration waited = Duration.ofNanos(System.nanoTime() - start);
        tell(l -> l.waited(key, waited, acquired));
    }

    /** Tells the listener, which must not break the client. */
    void tell(Consumer<LeaseListener> call) {
        try {
            call.accept(listener);
        } catch (RuntimeException ignored) {
            // a listener's failure is its own
        }
    }

    /** Extends the caller's active lease; {@code ttlSeconds} null keeps its TTL. */
    public Lease renew(UUID leaseId, long fencingToken, Integer ttlSeconds) {
        return renew(leaseId, fencingToken, ttlSeconds, UUID.randomUUID().toString());
    }

    /**
     * {@link #renew(UUID, long, Integer)} under the caller's {@code Idempotency-Key}: a retry of the same renew
     * (after a lost answer, or on another instance) replays its answer instead of renewing again.
     */
    public Lease renew(UUID leaseId, long fencingToken, Integer ttlSeconds, String idempotencyKey) {
        return renew(leaseId, fencingToken, ttlSeconds, Objects.requireNonNull(idempotencyKey, "idempotencyKey"),
                maxAttempts);
    }

    /** One renew under a given Idempotency-Key, with at most {@code attempts} tries (a held lease's renewal). */
    Lease renew(UUID leaseId, long fencingToken, Integer ttlSeconds, String idempotencyKey, int attempts) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("fencingToken", fencingToken);
        put(body, "ttlSeconds", ttlSeconds);
        return lease(write("v1/leases/" + leaseId + "/renew", body, Duration.ZERO, idempotencyKey, attempts));
    }

    /**
     * Acquires the key and holds the lease: renewed while held, watched so that a loss is known at once, and
     * released by {@link HeldLease#close()}. Throws as {@link #acquire} does when the key stays busy.
     */
    public HeldLease hold(AcquireRequest request, HoldOptions options) {
        Granted granted = acquireTold(request, UUID.randomUUID().toString());
        return new HeldLease(this, granted.lease(), granted.countsFromNanos(), options);
    }

    /** Work run under a held lease; it should fence its protected steps with {@link HeldLease#checkValid()}. */
    @FunctionalInterface
    public interface LeaseWork<T> {
        T call(HeldLease lease) throws Exception;
    }

    /**
     * Acquires the key (waiting as the request asks), runs the work on this thread while the lease is held, and
     * releases it. When the lease is lost meanwhile, the work's thread is interrupted if {@code interruptOnLoss}
     * (the opt-in way to stop work that does not call {@code checkValid()} often), and the call throws
     * {@link LeaseLostException} even if the work finished: what it did after the loss was not protected.
     */
    public <T> T callWithLease(AcquireRequest request, HoldOptions options, boolean interruptOnLoss, LeaseWork<T> work)
            throws Exception {
        Thread worker = Thread.currentThread();
        Object state = new Object();
        boolean[] done = new boolean[1];
        boolean[] interrupted = new boolean[1];
        try (HeldLease lease = hold(request, options)) {
            if (interruptOnLoss) {
                lease.lost().thenRun(() -> {
                    synchronized (state) {
                        if (!done[0]) {
                            interrupted[0] = true;
                            worker.interrupt();
                        }
                    }
                });
            }
            T result = null;
            Exception failure = null;
            try {
                result = work.call(lease);
            } catch (Exception e) {
                failure = e;
            }
            synchronized (state) {
                done[0] = true;
                if (interrupted[0]) {
                    Thread.interrupted(); // the loss's interrupt, not the caller's: cleared
                }
            }
            try {
                lease.checkValid();
            } catch (LeaseLostException lost) {
                if (failure != null) {
                    lost.addSuppressed(failure); // most likely the interrupt's consequence
                }
                throw lost;
            }
            if (failure != null) {
                throw failure;
            }
            return result;
        }
    }

    /** Releases the caller's lease if the token is still its own (compare-and-delete). */
    public Lease release(UUID leaseId, long fencingToken) {
        return release(leaseId, fencingToken, UUID.randomUUID().toString());
    }

    /**
     * {@link #release(UUID, long)} under the caller's {@code Idempotency-Key}: a retry of the same release (after a
     * lost answer, or on another instance) replays its answer.
     */
    public Lease release(UUID leaseId, long fencingToken, String idempotencyKey) {
        return lease(write("v1/leases/" + leaseId + "/release", Map.of("fencingToken", fencingToken), Duration.ZERO,
                Objects.requireNonNull(idempotencyKey, "idempotencyKey"), maxAttempts));
    }

    /** An admin ends a lease of its tenant, whoever holds it (needs the {@code leases:admin} scope). */
    public Lease revoke(UUID leaseId, String reason) {
        return lease(write("v1/admin/leases/" + leaseId + "/revoke", Map.of("reason", reason), Duration.ZERO));
    }

    public Lease inspect(UUID leaseId) {
        return lease(read("v1/leases/" + leaseId, Duration.ZERO));
    }

    /**
     * Answers the lease once it is no longer active (released, revoked, expired) or when {@code waitSeconds}
     * pass, whichever is first; a renew does not end the wait (revision 1.1).
     */
    public Lease watch(UUID leaseId, int waitSeconds) {
        return lease(read("v1/leases/" + leaseId + "?waitSeconds=" + waitSeconds, Duration.ofSeconds(waitSeconds)));
    }

    /** The active lease of a key; {@link ProblemException.NoActiveLease} when none holds it. */
    public Lease current(LeaseKey key) {
        Map<String, String> query = new LinkedHashMap<>();
        putQuery(query, "program", key.program());
        query.put("targetType", key.target().type());
        query.put("target", key.target().value());
        query.put("actor", key.actor());
        putQuery(query, "operation", key.operation());
        return lease(read("v1/leases/current" + queryString(query), Duration.ZERO));
    }

    public LeasePage list(ListQuery q) {
        Map<String, String> query = new LinkedHashMap<>();
        putQuery(query, "program", q.program());
        putQuery(query, "actor", q.actor());
        putQuery(query, "targetType", q.targetType());
        putQuery(query, "target", q.target());
        putQuery(query, "operation", q.operation());
        putQuery(query, "owner", q.owner());
        putQuery(query, "holder", q.holder());
        putQuery(query, "state", q.state());
        putQuery(query, "limit", q.limit() == null ? null : q.limit().toString());
        putQuery(query, "cursor", q.cursor());
        JsonNode page = read("v1/leases" + queryString(query), Duration.ZERO);
        List<Lease> items = new ArrayList<>();
        page.path("items").forEach(item -> items.add(lease(item)));
        return new LeasePage(List.copyOf(items), text(page, "nextCursor"));
    }

    /**
     * One page of the lease's history, oldest first: at most {@code limit} events (null: the service's default,
     * 100) after {@code cursor} (null: from the first; else the {@code nextCursor} of the page before).
     */
    public EventPage historyPage(UUID leaseId, Integer limit, String cursor) {
        Map<String, String> query = new LinkedHashMap<>();
        putQuery(query, "limit", limit == null ? null : limit.toString());
        putQuery(query, "cursor", cursor);
        JsonNode page = read("v1/leases/" + leaseId + "/events" + queryString(query), Duration.ZERO);
        List<LeaseEvent> items = new ArrayList<>();
        page.path("items").forEach(item -> items.add(event(item)));
        return new EventPage(List.copyOf(items), text(page, "nextCursor"));
    }

    /**
     * Every event of the lease, oldest first, following the pages of {@link #historyPage} to the last. The whole
     * history is held in memory here: a caller of a long history reads it page by page instead.
     */
    public List<LeaseEvent> history(UUID leaseId) {
        List<LeaseEvent> events = new ArrayList<>();
        String cursor = null;
        do {
            EventPage page = historyPage(leaseId, null, cursor);
            events.addAll(page.items());
            cursor = page.nextCursor();
        } while (cursor != null);
        return List.copyOf(events);
    }

    private JsonNode write(String path, Map<String, Object> body, Duration longer) {
        return write(path, body, longer, UUID.randomUUID().toString(), maxAttempts);
    }

    private JsonNode write(String path, Map<String, Object> body, Duration longer, String idempotencyKey,
                           int attempts) {
        return post(path, body, longer, idempotencyKey, attempts, null).body();
    }

    private Answer post(String path, Map<String, Object> body, Duration longer, String idempotencyKey, int attempts,
                        Long deadline) {
        String json;
        try {
            json = JSON.writeValueAsString(body);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("a request body that cannot be written as JSON", e);
        }
        return send(() -> request(path, longer).header("Idempotency-Key", idempotencyKey)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json)).build(), attempts, deadline);
    }

    private JsonNode read(String path, Duration longer) {
        return send(() -> request(path, longer).GET().build(), maxAttempts, null).body();
    }

    /** A request to {@code path}, relative (no leading {@code /}), so that it is resolved under the base's path. */
    private HttpRequest.Builder request(String path, Duration longer) {
        HttpRequest.Builder builder = HttpRequest.newBuilder(baseUrl.resolve(path))
                .timeout(requestTimeout.plus(longer))
                .header("Accept", "application/json, application/problem+json");
        String bearer;
        try {
            bearer = token.get();
        } catch (RuntimeException noToken) {
            // An identity provider out of reach is the service out of reach: a held lease retries its renewal.
            throw new ServiceUnavailableException("no bearer token for Leasekeeper at " + baseUrl + ": " + noToken,
                    noToken);
        }
        if (bearer != null) {
            builder.header("Authorization", "Bearer " + bearer);
        }
        return builder;
    }

    /** A 2xx answer's body, and when its try was sent and the answer arrived ({@link System#nanoTime()}). */
    private record Answer(JsonNode body, long sentAtNanos, long receivedAtNanos) {
    }

    /**
     * Sends, retrying transient failures (a failed connection, {@link #isTransient}) under backoff: at most
     * {@code attempts} tries, none begun after {@code deadline} (null: none). Answers the 2xx or throws.
     */
    private Answer send(Supplier<HttpRequest> request, int attempts, Long deadline) {
        for (int attempt = 1; ; attempt++) {
            HttpResponse<String> response;
            long sentAt = System.nanoTime();
            try {
                response = http.send(request.get(), HttpResponse.BodyHandlers.ofString());
            } catch (IOException e) {
                if (!pausedForRetry(attempt, attempts, null, deadline)) {
                    throw new ServiceUnavailableException("Leasekeeper at " + baseUrl + " unreachable after "
                            + attempt + " attempts: " + e, e);
                }
                continue;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new ServiceUnavailableException("interrupted while calling Leasekeeper", e);
            }
            long receivedAt = System.nanoTime(); // before parsing: the earliest this JVM knows of the answer
            if (response.statusCode() / 100 == 2) {
                return new Answer(parse(response.body()), sentAt, receivedAt);
            }
            Problem problem = problem(response);
            if (isTransient(problem) && pausedForRetry(attempt, attempts, problem.retryAfter(), deadline)) {
                continue;
            }
            throw ProblemException.of(problem);
        }
    }

    /**
     * An answer that decided nothing, which the same request sent again later may not get: 503 (the database),
     * or 429 TENANT_BUSY (revision 1.2: the instance busy with the tenant's other requests). RATE_LIMITED and
     * QUOTA_EXCEEDED are the caller's to handle: its own rate or its own leases caused them.
     */
    private static boolean isTransient(Problem problem) {
        return problem.status() == 503 || problem.status() == 429 && "TENANT_BUSY".equals(problem.code());
    }

    /**
     * Pauses before the try after {@code attempt}, or answers false at once when there is none: the attempts are
     * used up, or the deadline ({@link System#nanoTime()}, null: none) comes first. Retry-After is the least
     * pause: up to {@code maxBackoff} for a call without a deadline (its only bound), in full for one with; when
     * Retry-After reaches past the deadline there is no try, as one before it would be refused again. A backoff
     * without Retry-After is cut at the deadline, for a last try then.
     */
    private boolean pausedForRetry(int attempt, int attempts, Duration retryAfter, Long deadline) {
        if (attempt >= attempts) {
            return false;
        }
        if (deadline == null) {
            sleep(backoffMillis(attempt, retryAfter));
            return true;
        }
        long leftMillis = (deadline - System.nanoTime()) / 1_000_000;
        long leastMillis = retryAfter == null ? 0 : retryAfter.toMillis();
        if (leastMillis >= leftMillis) {
            return false;
        }
        sleep(Math.min(leftMillis, Math.max(leastMillis, backoffMillis(attempt, null))));
        return true;
    }

    /** Full jitter: a random pause up to min(maxBackoff, firstBackoff * 2^(attempt-1)), at least Retry-After. */
    private long backoffMillis(int attempt, Duration retryAfter) {
        long capMillis = Math.min(maxBackoff.toMillis(), firstBackoff.toMillis() << Math.min(attempt - 1, 20));
        long millis = ThreadLocalRandom.current().nextLong(capMillis + 1);
        if (retryAfter != null) {
            millis = Math.max(millis, Math.min(retryAfter.toMillis(), maxBackoff.toMillis()));
        }
        return millis;
    }

    /** Sleeps {@code millis}, ending no later than {@code deadline} ({@link System#nanoTime()}). */
    private static void sleep(long millis, long deadline) {
        sleep(Math.min(millis, Math.max(0, (deadline - System.nanoTime()) / 1_000_000)));
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ServiceUnavailableException("interrupted while waiting to retry", e);
        }
    }

    private static Problem problem(HttpResponse<String> response) {
        Duration retryAfter = response.headers().firstValue("Retry-After").flatMap(LeasekeeperClient::seconds)
                .orElse(null);
        JsonNode body;
        try {
            body = JSON.readTree(response.body());
        } catch (IOException e) {
            body = null;
        }
        if (body == null || !body.isObject()) {
            return new Problem(response.statusCode(), null, "HTTP " + response.statusCode(), response.body(), null,
                    retryAfter, null, null, List.of(), response.body());
        }
        JsonNode held = body.get("holder");
        Holder holder = held == null || !held.isObject() ? null : new Holder(text(held, "owner"), text(held, "holder"),
                instant(held, "expiresAt"), held.path("remainingMs").asLong());
        List<Problem.FieldError> errors = new ArrayList<>();
        body.path("errors").forEach(e -> errors.add(new Problem.FieldError(text(e, "field"), text(e, "message"))));
        return new Problem(response.statusCode(), text(body, "code"), text(body, "title"), text(body, "detail"),
                text(body, "traceId"), retryAfter, holder, instant(body, "availableAt"), List.copyOf(errors),
                response.body());
    }

    private static java.util.Optional<Duration> seconds(String header) {
        try {
            return java.util.Optional.of(Duration.ofSeconds(Long.parseLong(header.trim())));
        } catch (NumberFormatException e) {
            return java.util.Optional.empty();
        }
    }

    private static JsonNode parse(String body) {
        try {
            return JSON.readTree(body);
        } catch (IOException e) {
            throw new IllegalStateException("Leasekeeper answered a body that is not JSON: " + body, e);
        }
    }

    @SuppressWarnings("unchecked")
    static Lease lease(JsonNode n) {
        JsonNode target = n.path("target");
        return new Lease(UUID.fromString(n.path("leaseId").asText()), text(n, "key"), text(n, "tenant"),
                text(n, "program"), new Target(target.path("type").asText(), target.path("value").asText()),
                text(n, "actor"), text(n, "operation"), text(n, "owner"), text(n, "holder"),
                n.path("fencingToken").asLong(), text(n, "state"), instant(n, "acquiredAt"), instant(n, "renewedAt"),
                instant(n, "expiresAt"), instant(n, "maxExpiresAt"), instant(n, "endedAt"), text(n, "endReason"),
                n.path("ttlSeconds").asInt(), n.path("maxLifetimeSeconds").asInt(), n.path("lockDelaySeconds").asInt(),
                n.path("remainingMs").asLong(), instant(n, "serverTime"), text(n, "jobId"), text(n, "traceId"),
                n.hasNonNull("metadata") ? JSON.convertValue(n.get("metadata"), Map.class) : Map.of());
    }

    @SuppressWarnings("unchecked")
    private static LeaseEvent event(JsonNode n) {
        return new LeaseEvent(n.path("eventId").asLong(), UUID.fromString(n.path("leaseId").asText()),
                text(n, "type"), text(n, "fromState"), text(n, "toState"), n.path("fencingToken").asLong(),
                instant(n, "at"), text(n, "principal"), text(n, "requestId"), text(n, "traceId"),
                n.hasNonNull("details") ? JSON.convertValue(n.get("details"), Map.class) : Map.of());
    }

    private static String text(JsonNode node, String field) {
        JsonNode value = node.get(field);
        return value == null || value.isNull() ? null : value.asText();
    }

    private static Instant instant(JsonNode node, String field) {
        String value = text(node, field);
        return value == null ? null : Instant.parse(value);
    }

    private static void put(Map<String, Object> body, String field, Object value) {
        if (value != null) {
            body.put(field, value);
        }
    }

    private static void putQuery(Map<String, String> query, String name, String value) {
        if (value != null) {
            query.put(name, value);
        }
    }

    private static String queryString(Map<String, String> query) {
        StringBuilder s = new StringBuilder();
        query.forEach((name, value) -> s.append(s.length() == 0 ? '?' : '&').append(name).append('=').append(encode(value)));
        return s.toString();
    }

    private static String encode(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /** How to reach the service and how hard to try. */
    public static final class Builder {
        private final URI baseUrl;
        private Supplier<String> token = () -> null;
        private HttpClient http;
        private Duration connectTimeout = Duration.ofSeconds(5);
        private Duration requestTimeout = Duration.ofSeconds(10);
        private int maxAttempts = 4;
        private Duration firstBackoff = Duration.ofMillis(100);
        private Duration maxBackoff = Duration.ofSeconds(2);
        private LeaseListener listener = LeaseListener.NONE;
        private boolean allowPlainHttp;

        private Builder(URI baseUrl) {
            this.baseUrl = Objects.requireNonNull(baseUrl, "baseUrl");
        }

        /**
         * The bearer token of each request, asked for every time (so that it may be refreshed). When it throws,
         * the call throws {@link ServiceUnavailableException} with its exception as the cause.
         */
        public Builder token(Supplier<String> token) {
            this.token = Objects.requireNonNull(token, "token");
            return this;
        }

        public Builder token(String token) {
            return token(() -> token);
        }

        /**
         * Allows an {@code http} base URL whose host is not loopback (default false: {@link #build()} refuses it,
         * since the token would cross the network in clear). Only for a network the caller trusts.
         */
        public Builder allowPlainHttp(boolean allow) {
            this.allowPlainHttp = allow;
            return this;
        }

        /** The JDK client to send with (default: a new one with {@code connectTimeout}). */
        public Builder httpClient(HttpClient http) {
            this.http = http;
            return this;
        }

        public Builder connectTimeout(Duration timeout) {
            this.connectTimeout = timeout;
            return this;
        }

        /** How long one attempt may take, beyond a waiting acquire's or a watch's own wait (default 10 s). */
        public Builder requestTimeout(Duration timeout) {
            this.requestTimeout = timeout;
            return this;
        }

        /** Attempts per call, the first included (default 4), and the backoff's first and largest pause. */
        public Builder retries(int maxAttempts, Duration firstBackoff, Duration maxBackoff) {
            if (maxAttempts < 1) {
                throw new IllegalArgumentException("maxAttempts must be at least 1");
            }
            this.maxAttempts = maxAttempts;
            this.firstBackoff = firstBackoff;
            this.maxBackoff = maxBackoff;
            return this;
        }

        /** Told of renewals, losses and waits (the starter's metrics); default none. */
        public Builder listener(LeaseListener listener) {
            this.listener = Objects.requireNonNull(listener, "listener");
            return this;
        }

        /** The client; {@link IllegalArgumentException} naming the rule when the base URL breaks one ({@link BaseUrl}). */
        public LeasekeeperClient build() {
            return new LeasekeeperClient(this);
        }
    }
}

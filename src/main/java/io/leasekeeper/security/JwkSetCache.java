package io.leasekeeper.security;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.LongSupplier;
import org.springframework.cache.Cache;
import org.springframework.cache.support.SimpleValueWrapper;

/**
 * Where Spring Security's JWK source keeps a fetched JWK set ({@code JwkSetUriJwtDecoderBuilder.cache}). A set
 * is fetched when first needed, again once it is {@link #MAX_AGE} old (so that a key the issuer withdrew stops
 * being trusted), and again when a token names a key id the set lacks, since the issuer may have rotated its
 * keys: the JWK source then calls {@link #invalidate()}. That last refetch happens at most once per
 * {@link #REFETCH_INTERVAL}, because anyone can send a token with a made-up key id: without the bound every
 * such request cost a request to the issuer (issue 17). A real rotation is still picked up by the first token
 * signed with the new key, unless another unknown key id came within the interval before it.
 * <p>
 * All access comes from one JWK source, which holds its own lock around it; the methods are synchronized
 * only so that this class does not rely on that.
 */
final class JwkSetCache implements Cache {

    static final Duration MAX_AGE = Duration.ofMinutes(5);
    static final Duration REFETCH_INTERVAL = Duration.ofSeconds(30);

    private record Entry(Object value, long fetchedAt) {
    }

    private final LongSupplier nanoTime;
    private final Map<Object, Entry> entries = new HashMap<>();
    private long lastRefetch;
    private boolean refetchedYet;

    JwkSetCache() {
        this(System::nanoTime);
    }

    /** @param nanoTime a monotonic clock in nanoseconds, as {@link System#nanoTime()} */
    JwkSetCache(LongSupplier nanoTime) {
        this.nanoTime = nanoTime;
    }

    @Override
    public synchronized <T> T get(Object key, Callable<T> loader) {
        Entry entry = entries.get(key);
        long now = nanoTime.getAsLong();
        if (entry != null && now - entry.fetchedAt() < MAX_AGE.toNanos()) {
            @SuppressWarnings("unchecked")
            T value = (T) entry.value();
            return value;
        }
        T value;
        try {
            value = loader.call();
        } catch (Exception e) {
            throw new ValueRetrievalException(key, loader, e);
        }
        entries.put(key, new Entry(value, now));
        return value;
    }

    /** A token named a key id the set lacks: forget the set, unless that was done less than the interval ago. */
    @Override
    public synchronized boolean invalidate() {
        long now = nanoTime.getAsLong();
        if (refetchedYet && now - lastRefetch < REFETCH_INTERVAL.toNanos()) {
            return false;
        }
        refetchedYet = true;
        lastRefetch = now;
        boolean hadEntries = !entries.isEmpty();
        entries.clear();
        return hadEntries;
    }

    @Override
    public synchronized ValueWrapper get(Object key) {
        Entry entry = entries.get(key);
        return entry == null ? null : new SimpleValueWrapper(entry.value());
    }

    @Override
    public synchronized <T> T get(Object key, Class<T> type) {
        Entry entry = entries.get(key);
        return entry == null ? null : type.cast(entry.value());
    }

    @Override
    public synchronized void put(Object key, Object value) {
        entries.put(key, new Entry(value, nanoTime.getAsLong()));
    }

    @Override
    public synchronized void evict(Object key) {
        entries.remove(key);
    }

    @Override
    public synchronized void clear() {
        entries.clear();
    }

    @Override
    public String getName() {
        return "jwk-set";
    }

    @Override
    public Object getNativeCache() {
        return entries;
    }
}

-- Revision 1.1 of the contract: lock-delay, and waiting (waiting acquire, watching a lease).
--
-- lease.lock_delay_seconds: when the lease ends involuntarily (expired or revoked), its key cannot be
-- acquired for that long after the end; a release frees the key at once.
ALTER TABLE lease
    ADD COLUMN lock_delay_seconds integer NOT NULL DEFAULT 0
        CONSTRAINT lease_lock_delay_range CHECK (lock_delay_seconds BETWEEN 0 AND 60);

-- lease_key.delayed_until: the end of the key's lock-delay, written (under the key's row lock) by the
-- transition that ends a lease with a lock-delay involuntarily; an acquire before it answers LOCK_DELAYED.
-- lease_key.watched_until: until when some request waits for the key (a waiting acquire that found it
-- busy, a watch of one of its leases). A transition that frees a watched key sends a notification on
-- the channel leasekeeper_key_freed (payload: key ids, comma-separated); an unwatched key sends none, so
-- leases nobody waits for never pay for notifications.
ALTER TABLE lease_key
    ADD COLUMN delayed_until timestamptz(3),
    ADD COLUMN watched_until timestamptz(3);

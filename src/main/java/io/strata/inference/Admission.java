package io.strata.inference;

/**
 * The admission limit of one node's inference work: at most {@link #limit()} tasks running or queued at once. A task
 * is admitted before it is handed to the pool and released when its model work is done (before its listener runs, so
 * a follow-up task of the same document is not refused by its own predecessor). Lowering the limit below what is
 * pending rejects new tasks until enough of the pending ones finish; nothing running is interrupted.
 */
final class Admission {
    private final java.util.concurrent.atomic.AtomicInteger pending = new java.util.concurrent.atomic.AtomicInteger();
    private volatile int limit;

    Admission(int limit) {
        setLimit(limit);
    }

    void setLimit(int limit) {
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be at least 1, got " + limit);
        }
        this.limit = limit;
    }

    int limit() {
        return limit;
    }

    int pending() {
        return pending.get();
    }

    /** Admits one task if fewer than the limit are pending; the caller must {@link #release} an admitted one exactly once. */
    boolean tryAcquire() {
        while (true) {
            int now = pending.get();
            if (now >= limit) {
                return false;
            }
            if (pending.compareAndSet(now, now + 1)) {
                return true;
            }
        }
    }

    void release() {
        int left = pending.decrementAndGet();
        assert left >= 0 : "released more tasks than were admitted";
    }
}

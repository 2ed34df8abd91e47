package io.strata.chunkindex;

import org.opensearch.core.action.ActionListener;

import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;

/** A listener that keeps what it was told, and checks that it was told exactly once. */
public final class Captured<T> implements ActionListener<T> {
    private final AtomicInteger calls = new AtomicInteger();
    private volatile T value;
    private volatile Exception failure;

    @Override
    public void onResponse(T response) {
        value = response;
        calls.incrementAndGet();
    }

    @Override
    public void onFailure(Exception e) {
        failure = e;
        calls.incrementAndGet();
    }

    public int calls() {
        return calls.get();
    }

    /** The answer, which must have come once and not be a failure. */
    public T value() {
        assertEquals("answered once", 1, calls.get());
        if (failure != null) {
            throw new AssertionError("failed", failure);
        }
        return value;
    }

    /** The failure, which must have come once. */
    public Exception failure() {
        assertEquals("answered once", 1, calls.get());
        assertNotNull("a failure, not " + value, failure);
        return failure;
    }

    public void assertSucceeded() {
        value();
        assertNull(failure);
    }
}

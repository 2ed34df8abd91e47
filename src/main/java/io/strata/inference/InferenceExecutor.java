package io.strata.inference;

import io.strata.stats.StrataStats;
import org.opensearch.OpenSearchStatusException;
import org.opensearch.common.CheckedSupplier;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.rest.RestStatus;

import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.function.Supplier;

/**
 * Runs blocking model work on this node's {@code strata_inference} pool, never on transport, search or write threads.
 *
 * <p><b>Back-pressure.</b> Work passes an admission limit first ({@link InferenceSettings#MAX_PENDING}, dynamic): beyond
 * it, or when the pool's queue is full, the caller gets 429 at once and retries later. An embedded model call in flight
 * cannot be interrupted (ONNX Runtime and PyTorch run it to its end on the inference thread), so embedded work has no
 * timeout: its bound is the input limits ({@code max_tokens}, batch size) and the admission limit.
 */
public final class InferenceExecutor {
    private final Supplier<ExecutorService> pool;
    private final Admission admission;
    private final StrataStats stats;

    /** @param pool the node's inference pool, looked up on use (it exists only once the node's thread pool does) */
    public InferenceExecutor(Supplier<ExecutorService> pool, int maxPending, StrataStats stats) {
        this.pool = pool;
        this.admission = new Admission(maxPending);
        this.stats = stats;
    }

    /**
     * Hands {@code work} to the pool if the admission limit lets it in, else fails the listener at once with 429. The task
     * is released when the work is done, before the listener runs.
     */
    public <T> void run(CheckedSupplier<T, Exception> work, ActionListener<T> listener) {
        if (!admission.tryAcquire()) {
            stats.inferenceRejected();
            listener.onFailure(rejection(admission.limit()));
            return;
        }
        try {
            pool.get().execute(() -> {
                T result = null;
                Exception failure = null;
                try {
                    result = work.get();
                } catch (Exception e) {
                    failure = e;
                } finally {
                    admission.release();
                }
                if (failure != null) {
                    listener.onFailure(failure);
                } else {
                    listener.onResponse(result);
                }
            });
        } catch (RuntimeException rejected) {
            // the pool's own queue is full (or the node is closing): 429 as well, and the caller retries later
            admission.release();
            listener.onFailure(rejected);
        }
    }

    /** The 429 of a task refused by the admission limit: names the setting, the limit, and what to do. */
    static OpenSearchStatusException rejection(int limit) {
        return new OpenSearchStatusException(String.format(Locale.ROOT,
            "[%s] inference rejected: [%d] inference tasks are already running or queued on this node, the limit set by [%s]; "
                + "retry later", InferenceSettings.THREAD_POOL, limit, InferenceSettings.MAX_PENDING.getKey()),
            RestStatus.TOO_MANY_REQUESTS);
    }

    /** Changes the admission limit (the dynamic {@link InferenceSettings#MAX_PENDING}); pending tasks are not affected. */
    public void setMaxPending(int limit) {
        admission.setLimit(limit);
    }

    /** Inference tasks admitted and not yet done on this node. */
    public int pending() {
        return admission.pending();
    }
}

package io.strata.inference;

import io.strata.stats.StrataStats;
import org.opensearch.OpenSearchStatusException;
import org.opensearch.common.CheckedSupplier;
import org.opensearch.common.unit.TimeValue;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.rest.RestStatus;
import org.opensearch.threadpool.Scheduler;
import org.opensearch.threadpool.ThreadPool;

import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * Runs blocking model work on this node's inference pools, never on transport, search or write threads, in two lanes:
 * <ul>
 *   <li>{@link #run}: the {@code strata_inference} pool, FIFO: ingest embeddings (slices of up to
 *       {@code embed_slice_texts}), model-guided chunking, previews, {@code _embed} of passages;</li>
 *   <li>{@link #runQuery}: the {@code strata_inference_query} pool, the <b>query lane</b>: embeddings of queries, which
 *       never wait behind ingest work (they have their own threads, and {@link DjlEmbedder#embedQuery} its own
 *       predictors).</li>
 * </ul>
 *
 * <p><b>Back-pressure.</b> Ingest-lane work passes an admission limit first ({@link InferenceSettings#MAX_PENDING},
 * dynamic): beyond it, or when the pool's queue is full, the caller gets 429 at once and retries later. Query-lane work
 * is bounded by its queue ({@link InferenceSettings#QUERY_QUEUE_SIZE}) and by a time-out to start
 * ({@link InferenceSettings#QUERY_QUEUE_TIMEOUT}, dynamic): a query embedding that has not started by then fails with 429
 * and is counted. An embedded model call in flight cannot be interrupted (ONNX Runtime and PyTorch run it to its end on
 * the inference thread), so running work has no time-out: its bound is the input limits ({@code max_tokens}, batch size).
 */
public final class InferenceExecutor {
    private final Supplier<ThreadPool> threadPool;
    private final Admission admission;
    private final StrataStats stats;
    private volatile TimeValue queryQueueTimeout;

    /** @param threadPool the node's thread pool, looked up on use (it exists only once the node's thread pool does) */
    public InferenceExecutor(Supplier<ThreadPool> threadPool, int maxPending, TimeValue queryQueueTimeout, StrataStats stats) {
        this.threadPool = threadPool;
        this.admission = new Admission(maxPending);
        this.queryQueueTimeout = queryQueueTimeout;
        this.stats = stats;
    }

    /**
     * Hands {@code work} to the {@code strata_inference} pool if the admission limit lets it in, else fails the listener at
     * once with 429. The task is released when the work is done, before the listener runs.
     */
    public <T> void run(CheckedSupplier<T, Exception> work, ActionListener<T> listener) {
        if (!admission.tryAcquire()) {
            stats.inferenceRejected();
            listener.onFailure(rejection(admission.limit()));
            return;
        }
        try {
            threadPool.get().executor(InferenceSettings.THREAD_POOL).execute(() -> {
                T result = null;
                Exception failure = null;
                try {
                    result = work.get();
                } catch (Exception e) {
                    failure = e;
                } catch (StackOverflowError e) {
                    failure = contained(e);
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

    /**
     * Hands {@code work} (a query embedding) to the query lane. If no query-lane thread has taken it within
     * {@link InferenceSettings#QUERY_QUEUE_TIMEOUT}, the listener fails then with 429 and the work is dropped when its turn
     * comes; a full queue fails it at once with 429.
     */
    public <T> void runQuery(CheckedSupplier<T, Exception> work, ActionListener<T> listener) {
        ThreadPool pool = threadPool.get();
        TimeValue timeout = queryQueueTimeout;
        AtomicBoolean decided = new AtomicBoolean(); // set by whichever comes first: a thread taking the work, or the time-out
        Scheduler.ScheduledCancellable timer = pool.schedule(() -> {
            if (decided.compareAndSet(false, true)) {
                stats.queryLaneTimedOut();
                listener.onFailure(queryTimeout(timeout));
            }
        }, timeout, ThreadPool.Names.GENERIC);
        try {
            pool.executor(InferenceSettings.QUERY_THREAD_POOL).execute(() -> {
                if (!decided.compareAndSet(false, true)) {
                    return; // timed out while it waited: its caller has its 429
                }
                timer.cancel();
                T result;
                try {
                    result = work.get();
                } catch (Exception e) {
                    listener.onFailure(e);
                    return;
                } catch (StackOverflowError e) {
                    listener.onFailure(contained(e));
                    return;
                }
                listener.onResponse(result);
            });
        } catch (RuntimeException rejected) {
            // the lane's queue is full (or the node is closing): 429, counted by the pool
            timer.cancel();
            if (decided.compareAndSet(false, true)) {
                listener.onFailure(rejected);
            }
        }
    }

    /**
     * The failure of one request whose work raised {@code error}, or null when the error must stay fatal to the node.
     * Strata's task boundaries (both lanes here, {@link Chunkers#run} on the caller's thread) contain a
     * {@link StackOverflowError}: it concerns the one thread's stack, which is unwound by the time it is caught, and comes
     * from the request's own input (the readers bound the nesting of documents, so one means a walk that escaped the
     * bounds); uncontained it reaches OpenSearch's uncaught-exception handler, which exits the node. Every other
     * {@link Error} stays fatal: an {@link OutOfMemoryError} leaves the whole heap, every thread, in an unknown state (and
     * OpenSearch exits on it so the node restarts clean), and an {@link InternalError} or a {@link LinkageError} is a broken
     * JVM or install, not one request.
     */
    public static OpenSearchStatusException contained(Error error) {
        if (!(error instanceof StackOverflowError)) {
            return null;
        }
        return new OpenSearchStatusException("[strata] the work of this request failed with a StackOverflowError: its input "
            + "nests deeper than this node's stack allows", RestStatus.INTERNAL_SERVER_ERROR, error);
    }

    /** The 429 of a task refused by the admission limit: names the setting, the limit, and what to do. */
    static OpenSearchStatusException rejection(int limit) {
        return new OpenSearchStatusException(String.format(Locale.ROOT,
            "[%s] inference rejected: [%d] inference tasks are already running or queued on this node, the limit set by [%s]; "
                + "retry later", InferenceSettings.THREAD_POOL, limit, InferenceSettings.MAX_PENDING.getKey()),
            RestStatus.TOO_MANY_REQUESTS);
    }

    /** The 429 of a query embedding that did not start in time: names the lane, the setting and what to do. */
    static OpenSearchStatusException queryTimeout(TimeValue timeout) {
        return new OpenSearchStatusException(String.format(Locale.ROOT,
            "[%s] query embedding rejected: no query-lane thread took it within [%s], the limit set by [%s]; the node's query lane "
                + "is saturated: retry later, or raise [%s] or [%s]", InferenceSettings.QUERY_THREAD_POOL, timeout,
            InferenceSettings.QUERY_QUEUE_TIMEOUT.getKey(), InferenceSettings.QUERY_QUEUE_TIMEOUT.getKey(),
            InferenceSettings.QUERY_THREADS.getKey()), RestStatus.TOO_MANY_REQUESTS);
    }

    /** Changes the admission limit (the dynamic {@link InferenceSettings#MAX_PENDING}); pending tasks are not affected. */
    public void setMaxPending(int limit) {
        admission.setLimit(limit);
    }

    /** Changes the query lane's time-out to start (the dynamic {@link InferenceSettings#QUERY_QUEUE_TIMEOUT}) for new queries. */
    public void setQueryQueueTimeout(TimeValue timeout) {
        this.queryQueueTimeout = timeout;
    }

    /** Ingest-lane tasks admitted and not yet done on this node. */
    public int pending() {
        return admission.pending();
    }
}

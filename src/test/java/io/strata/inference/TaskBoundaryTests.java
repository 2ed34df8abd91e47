package io.strata.inference;

import io.strata.chunking.MultiGranularChunker;
import io.strata.chunking.RecursiveStrategy;
import io.strata.chunking.SentenceSegmenter;
import io.strata.plugin.StrataPlugin;
import io.strata.stats.StrataStats;
import org.junit.After;
import org.junit.Test;
import org.opensearch.ExceptionsHelper;
import org.opensearch.common.settings.Settings;
import org.opensearch.common.unit.TimeValue;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.rest.RestStatus;
import org.opensearch.threadpool.ExecutorBuilder;
import org.opensearch.threadpool.TestThreadPool;
import org.opensearch.threadpool.ThreadPool;

import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/**
 * Strata's task boundaries: a StackOverflowError raised by the work of one request fails that request (its listener), on
 * the inference lanes and when a rule-based chunker runs on the caller's thread. On a node an Error that leaves a pool's
 * task reaches OpenSearch's uncaught-exception handler, which exits the node.
 */
public class TaskBoundaryTests {
    private final StrataStats stats = new StrataStats();
    private ThreadPool threadPool;

    @After
    public void stop() {
        if (threadPool != null) {
            ThreadPool.terminate(threadPool, 10, TimeUnit.SECONDS);
        }
    }

    private InferenceExecutor executor() {
        Settings settings = Settings.EMPTY;
        threadPool = new TestThreadPool("task-boundary-tests", settings,
            new StrataPlugin(settings).getExecutorBuilders(settings).toArray(new ExecutorBuilder<?>[0]));
        return new InferenceExecutor(() -> threadPool, 100, TimeValue.timeValueSeconds(10), stats);
    }

    private static int recurse(int n) {
        return recurse(n + 1) + 1;
    }

    private static <T> ActionListener<T> into(CompletableFuture<T> future) {
        return ActionListener.wrap(future::complete, future::completeExceptionally);
    }

    private static Exception failure(CompletableFuture<?> f) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(20, TimeUnit.SECONDS));
        return (Exception) e.getCause();
    }

    private static void assertContained(Exception e) {
        assertEquals(RestStatus.INTERNAL_SERVER_ERROR, ExceptionsHelper.status(e));
        assertTrue(e.getMessage(), e.getMessage().contains("StackOverflowError"));
    }

    @Test
    public void testRun_whenTheWorkOverflowsTheStack_failsTheRequestAndTheLaneServesTheNext() throws Exception {
        InferenceExecutor executor = executor();
        CompletableFuture<Integer> overflowed = new CompletableFuture<>();
        executor.run(() -> recurse(0), into(overflowed));
        assertContained(failure(overflowed));
        assertEquals(0, executor.pending()); // the admission slot was given back
        CompletableFuture<Integer> next = new CompletableFuture<>();
        executor.run(() -> 42, into(next));
        assertEquals(42, (int) next.get(20, TimeUnit.SECONDS));
    }

    @Test
    public void testRunQuery_whenTheWorkOverflowsTheStack_failsTheRequest() {
        InferenceExecutor executor = executor();
        CompletableFuture<Integer> overflowed = new CompletableFuture<>();
        executor.runQuery(() -> recurse(0), into(overflowed));
        assertContained(failure(overflowed));
    }

    @Test
    public void testChunkersRun_onTheCallersThread_whenTheWorkOverflowsTheStack_failsTheRequest() {
        MultiGranularChunker chunker = new MultiGranularChunker(new RecursiveStrategy(50), List.of(0.5),
            SentenceSegmenter.forLocale(Locale.ENGLISH));
        CompletableFuture<Integer> overflowed = new CompletableFuture<>();
        Chunkers.run(null, chunker, c -> recurse(0), into(overflowed));
        assertContained(failure(overflowed));
    }

    @Test
    public void testOtherErrors_stayFatal() {
        assertEquals(null, InferenceExecutor.contained(new OutOfMemoryError("heap")));
        assertEquals(null, InferenceExecutor.contained(new InternalError("vm")));
    }
}

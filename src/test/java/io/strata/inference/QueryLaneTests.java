package io.strata.inference;

import io.strata.chunking.Embedder;
import io.strata.model.ModelRef;
import io.strata.plugin.StrataPlugin;
import io.strata.stats.StrataStats;
import org.junit.After;
import org.junit.Test;
import org.opensearch.ExceptionsHelper;
import org.opensearch.common.settings.Settings;
import org.opensearch.common.unit.TimeValue;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.rest.RestStatus;
import org.opensearch.threadpool.TestThreadPool;
import org.opensearch.threadpool.ThreadPool;
import org.opensearch.threadpool.ThreadPoolStats;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/**
 * The query lane of {@link InferenceService} on the node's real thread pools (built by the plugin) and the bundled model:
 * a query embedding never waits behind ingest work, and one that cannot start in time fails with 429.
 */
public class QueryLaneTests {
    private static final ModelRef BGE = ModelRef.embedded("bge-small-en-v15-q");
    private static final String QUERY = "who walked to Hartfield in the rain?";

    private final StrataStats stats = new StrataStats();
    private ThreadPool threadPool;
    private InferenceService service;

    private InferenceService start(Settings settings) {
        threadPool = new TestThreadPool("query-lane-tests", settings,
            new StrataPlugin(settings).getExecutorBuilders(settings).toArray(new org.opensearch.threadpool.ExecutorBuilder<?>[0]));
        service = new InferenceService(settings, DjlEmbedderTests.MODELS, () -> threadPool, null, null, stats);
        return service;
    }

    @After
    public void stop() {
        if (service != null) {
            service.close();
        }
        if (threadPool != null) {
            ThreadPool.terminate(threadPool, 10, TimeUnit.SECONDS);
        }
    }

    private static <T> ActionListener<T> into(CompletableFuture<T> future) {
        return ActionListener.wrap(future::complete, future::completeExceptionally);
    }

    private static Exception failure(CompletableFuture<?> f) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(30, TimeUnit.SECONDS));
        return (Exception) e.getCause();
    }

    /** Tasks completed by pool {@code name}, once it reaches {@code expected} (a pool counts a task after its listener ran). */
    private long completed(String name, long expected) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            long completed = -1;
            for (ThreadPoolStats.Stats s : threadPool.stats()) {
                if (s.getName().equals(name)) {
                    completed = s.getCompleted();
                }
            }
            if (completed == expected || System.nanoTime() > deadline) {
                return completed;
            }
            Thread.sleep(10);
        }
    }

    @Test
    public void testQueryEmbedding_whileIngestWorkFillsItsLaneAndAdmission_answersWithoutWaitingForIt() throws Exception {
        InferenceService service = start(Settings.builder().put(InferenceSettings.THREADS.getKey(), 1)
            .put(InferenceSettings.MAX_PENDING.getKey(), 2).build());
        // the ingest lane: its one thread blocked, and a 128-text slice queued behind it: admission is full
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch blocking = new CountDownLatch(1);
        CompletableFuture<String> blocked = new CompletableFuture<>();
        service.run(() -> {
            blocking.countDown();
            assertTrue(release.await(60, TimeUnit.SECONDS));
            return "done";
        }, into(blocked));
        assertTrue(blocking.await(10, TimeUnit.SECONDS));
        List<String> slice = Collections.nCopies(128, "Mr. Knightley walked to Hartfield in the rain, as he often did of an evening.");
        CompletableFuture<List<float[]>> ingest = new CompletableFuture<>();
        service.embed(BGE, slice, Embedder.Purpose.PASSAGE, into(ingest));
        CompletableFuture<List<float[]>> refused = new CompletableFuture<>();
        service.embed(BGE, List.of("one more passage"), Embedder.Purpose.PASSAGE, into(refused));
        assertEquals("ingest keeps its back-pressure", RestStatus.TOO_MANY_REQUESTS, ExceptionsHelper.status(failure(refused)));

        CompletableFuture<List<float[]>> query = new CompletableFuture<>();
        try {
            service.embed(BGE, List.of(QUERY), Embedder.Purpose.QUERY, into(query));
            float[] v = query.get(30, TimeUnit.SECONDS).get(0);
            assertFalse("the ingest work is still waiting", ingest.isDone() || blocked.isDone());
            // the same vector, bitwise, as the ingest lane's predictors give it
            float[] viaIngestPredictors = service.embedded().embedder(BGE.model()).embed(List.of(QUERY), Embedder.Purpose.QUERY).get(0);
            assertArrayEquals(viaIngestPredictors, v, 0f);
        } finally {
            release.countDown();
        }
        assertEquals("done", blocked.get(30, TimeUnit.SECONDS));
        assertEquals(128, ingest.get(60, TimeUnit.SECONDS).size());
        assertEquals("one query-lane call", 1, completed(InferenceSettings.QUERY_THREAD_POOL, 1));
    }

    @Test
    public void testQueryEmbedding_thatCannotStartInTime_failsWith429NamingTheSetting_isCounted_andNeverRuns() throws Exception {
        InferenceService service = start(Settings.builder().put(InferenceSettings.QUERY_THREADS.getKey(), 1)
            .put(InferenceSettings.QUERY_QUEUE_TIMEOUT.getKey(), "300ms").build());
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch occupied = new CountDownLatch(1);
        CompletableFuture<String> holder = new CompletableFuture<>();
        service.executor().runQuery(() -> {
            occupied.countDown();
            assertTrue(release.await(60, TimeUnit.SECONDS));
            return "held";
        }, into(holder));
        assertTrue(occupied.await(10, TimeUnit.SECONDS));

        CompletableFuture<List<float[]>> late = new CompletableFuture<>();
        long start = System.nanoTime();
        service.embed(BGE, List.of(QUERY), Embedder.Purpose.QUERY, into(late));
        Exception e = failure(late);
        long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        release.countDown();
        assertEquals(RestStatus.TOO_MANY_REQUESTS, ExceptionsHelper.status(e));
        assertTrue(e.getMessage(), e.getMessage().contains("[strata_inference_query] query embedding rejected: no query-lane thread "
            + "took it within [300ms], the limit set by [plugins.strata.inference.query_queue_timeout]"));
        assertTrue("failed when the time-out passed, not when the lane freed: " + waitedMs, waitedMs < 30_000);
        assertEquals(1, stats.snapshot(null, null, java.util.Map.of()).queryLane().timedOut());
        assertEquals("held", holder.get(30, TimeUnit.SECONDS));

        // the lane is free again, with a time-out changed at runtime: queries answer; the dropped one never ran
        service.executor().setQueryQueueTimeout(TimeValue.timeValueSeconds(30));
        CompletableFuture<List<float[]>> next = new CompletableFuture<>();
        service.embed(BGE, List.of(QUERY), Embedder.Purpose.QUERY, into(next));
        assertEquals(384, next.get(30, TimeUnit.SECONDS).get(0).length);
        assertEquals("the timed-out query was not a call of the model", 1, stats.snapshot(null, null, java.util.Map.of()).models()
            .get(BGE.model()).calls());
    }

    @Test
    public void testQueryPurposeWithManyTexts_runsOnTheIngestLane() throws Exception {
        InferenceService service = start(Settings.EMPTY);
        List<String> texts = new ArrayList<>();
        for (int i = 0; i <= InferenceSettings.QUERY_LANE_MAX_TEXTS; i++) {
            texts.add("query number " + i);
        }
        CompletableFuture<List<float[]>> many = new CompletableFuture<>();
        service.embed(BGE, texts, Embedder.Purpose.QUERY, into(many));
        assertEquals(texts.size(), many.get(60, TimeUnit.SECONDS).size());
        CompletableFuture<List<float[]>> few = new CompletableFuture<>();
        service.embed(BGE, texts.subList(0, InferenceSettings.QUERY_LANE_MAX_TEXTS), Embedder.Purpose.QUERY, into(few));
        List<float[]> fewVectors = few.get(60, TimeUnit.SECONDS);
        for (int i = 0; i < fewVectors.size(); i++) {
            assertArrayEquals(texts.get(i), many.get().get(i), fewVectors.get(i), 0f);
        }
        assertEquals(1, completed(InferenceSettings.THREAD_POOL, 1));
        assertEquals(1, completed(InferenceSettings.QUERY_THREAD_POOL, 1));
    }
}

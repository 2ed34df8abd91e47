package io.strata.inference;

import io.strata.model.ModelRef;
import io.strata.chunking.Embedder;
import io.strata.plugin.StrataPlugin;
import io.strata.stats.StrataStats;
import org.opensearch.ExceptionsHelper;
import org.opensearch.common.settings.Settings;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.rest.RestStatus;
import org.opensearch.threadpool.ExecutorBuilder;
import org.opensearch.threadpool.TestThreadPool;
import org.opensearch.threadpool.ThreadPool;
import org.junit.After;
import org.junit.Test;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/**
 * The admission limit of {@link InferenceService}: work beyond it fails at once with 429, and the limit can change live.
 * On the node's real inference pool, as the plugin builds it.
 */
public class BackPressureTests {
    private final StrataStats stats = new StrataStats();
    private final List<ThreadPool> pools = new ArrayList<>();

    @After
    public void shutdown() {
        pools.forEach(p -> ThreadPool.terminate(p, 10, TimeUnit.SECONDS));
    }

    /** An inference service on a thread pool built with {@code settings} (4 inference threads unless they say otherwise). */
    private InferenceService service(Settings settings) {
        Settings node = Settings.builder().put(InferenceSettings.THREADS.getKey(), 4).put(InferenceSettings.QUEUE_SIZE.getKey(), 100)
            .put(settings).build();
        ThreadPool pool = new TestThreadPool("back-pressure-tests", node,
            new StrataPlugin(node).getExecutorBuilders(node).toArray(new ExecutorBuilder<?>[0]));
        pools.add(pool);
        return new InferenceService(node, Path.of("target", "no-models"), () -> pool, null, null, stats);
    }

    private static Settings maxPending(int n) {
        return Settings.builder().put(InferenceSettings.MAX_PENDING.getKey(), n).build();
    }

    /** Runs work that blocks until {@code release} opens; returns its result future. */
    private static CompletableFuture<String> blocked(InferenceService service, CountDownLatch started, CountDownLatch release) {
        CompletableFuture<String> result = new CompletableFuture<>();
        service.run(() -> {
            started.countDown();
            assertTrue(release.await(10, TimeUnit.SECONDS));
            return "done";
        }, ActionListener.wrap(result::complete, result::completeExceptionally));
        return result;
    }

    private static CompletableFuture<String> quick(InferenceService service) {
        CompletableFuture<String> result = new CompletableFuture<>();
        service.run(() -> "quick", ActionListener.wrap(result::complete, result::completeExceptionally));
        return result;
    }

    private static Exception failure(CompletableFuture<?> f) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(10, TimeUnit.SECONDS));
        return (Exception) e.getCause();
    }

    @Test
    public void testRun_beyondMaxPending_rejectsAtOnceWith429NamingTheSetting() throws Exception {
        InferenceService service = service(maxPending(2));
        CountDownLatch started = new CountDownLatch(2);
        CountDownLatch release = new CountDownLatch(1);
        CompletableFuture<String> a = blocked(service, started, release);
        CompletableFuture<String> b = blocked(service, started, release);
        assertTrue(started.await(10, TimeUnit.SECONDS));
        assertEquals(2, service.executor().pending());

        CompletableFuture<String> c = quick(service);
        assertTrue("rejected without waiting for a thread", c.isDone());
        Exception rejected = failure(c);
        assertEquals(RestStatus.TOO_MANY_REQUESTS, ExceptionsHelper.status(rejected));
        assertTrue(rejected.getMessage(), rejected.getMessage().contains("[2] inference tasks are already running or queued"));
        assertTrue(rejected.getMessage(), rejected.getMessage().contains("[plugins.strata.inference.max_pending]"));
        assertEquals(1, stats.snapshot(null, null, java.util.Map.of()).queue().rejected());

        release.countDown();
        assertEquals("done", a.get(10, TimeUnit.SECONDS));
        assertEquals("done", b.get(10, TimeUnit.SECONDS));
        assertEquals("quick", quick(service).get(10, TimeUnit.SECONDS));
        assertEquals(0, service.executor().pending());
    }

    @Test
    public void testSetMaxPending_raisedOrLowered_appliesToTheNextTask() throws Exception {
        InferenceService service = service(maxPending(1));
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CompletableFuture<String> a = blocked(service, started, release);
        assertTrue(started.await(10, TimeUnit.SECONDS));
        failure(quick(service));

        service.executor().setMaxPending(2);
        assertEquals("quick", quick(service).get(10, TimeUnit.SECONDS));

        // lowered below what is pending: the running task goes on, new ones wait for it to finish
        CountDownLatch started2 = new CountDownLatch(1);
        CompletableFuture<String> b = blocked(service, started2, release);
        assertTrue(started2.await(10, TimeUnit.SECONDS));
        service.executor().setMaxPending(1);
        assertEquals(RestStatus.TOO_MANY_REQUESTS, ExceptionsHelper.status(failure(quick(service))));
        release.countDown();
        assertEquals("done", a.get(10, TimeUnit.SECONDS));
        assertEquals("done", b.get(10, TimeUnit.SECONDS));
        assertEquals("quick", quick(service).get(10, TimeUnit.SECONDS));
    }

    @Test
    public void testRun_followUpFromTheListener_isNotRefusedByItsOwnPredecessor() throws Exception {
        // a document's chunking task, then its embedding task from the chunking listener: with a limit of 1 the first must
        // be released before its listener runs
        InferenceService service = service(maxPending(1));
        CompletableFuture<String> second = new CompletableFuture<>();
        service.run(() -> "chunked", ActionListener.wrap(
            chunks -> service.run(() -> chunks + " then embedded", ActionListener.wrap(second::complete, second::completeExceptionally)),
            second::completeExceptionally));
        assertEquals("chunked then embedded", second.get(10, TimeUnit.SECONDS));
    }

    @Test
    public void testRun_failingWork_releasesItsSlot() throws Exception {
        InferenceService service = service(maxPending(1));
        CompletableFuture<String> failed = new CompletableFuture<>();
        service.run(() -> {
            throw new IllegalStateException("model broke");
        }, ActionListener.wrap(failed::complete, failed::completeExceptionally));
        assertEquals("model broke", failure(failed).getMessage());
        assertEquals("quick", quick(service).get(10, TimeUnit.SECONDS));
        assertEquals(0, service.executor().pending());
    }

    @Test
    public void testEmbed_poolQueueFull_rejectsAndReleasesTheSlot() throws Exception {
        // an admission limit above the pool's 1 thread + 1 queued, so that the pool's own queue is what rejects
        InferenceService service = service(Settings.builder().put(InferenceSettings.THREADS.getKey(), 1)
            .put(InferenceSettings.QUEUE_SIZE.getKey(), 1).put(InferenceSettings.MAX_PENDING.getKey(), 10).build());
        assertEquals("defaults to threads + queue_size", InferenceSettings.THREADS.get(Settings.EMPTY) + 1000,
            (int) InferenceSettings.MAX_PENDING.get(Settings.EMPTY));
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CompletableFuture<String> running = blocked(service, started, release);
        assertTrue(started.await(10, TimeUnit.SECONDS));
        CompletableFuture<String> queued = quick(service);
        CompletableFuture<List<float[]>> embedded = new CompletableFuture<>();
        service.embed(ModelRef.embedded("any-model"), List.of("a text"), Embedder.Purpose.PASSAGE,
            ActionListener.wrap(embedded::complete, embedded::completeExceptionally));
        Exception rejected = failure(embedded);
        assertTrue(rejected.toString(), rejected instanceof RejectedExecutionException);
        assertEquals(RestStatus.TOO_MANY_REQUESTS, ExceptionsHelper.status(rejected));
        assertEquals("the rejected task holds no slot", 2, service.executor().pending());
        release.countDown();
        assertEquals("done", running.get(10, TimeUnit.SECONDS));
        assertEquals("quick", queued.get(10, TimeUnit.SECONDS));
        assertFalse("a rejected call is not a call of the model", stats.snapshot(null, null, java.util.Map.of()).models()
            .containsKey("any-model"));
    }

    @Test
    public void testMaxPending_outOfRange_isRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> InferenceSettings.MAX_PENDING.get(maxPending(0)));
        assertTrue(e.getMessage(), e.getMessage().contains("plugins.strata.inference.max_pending"));
    }
}

package io.strata.inference;

import io.strata.model.ModelRef;
import io.strata.chunking.Embedder;
import io.strata.stats.StrataStats;
import org.opensearch.ExceptionsHelper;
import org.opensearch.common.settings.Settings;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.rest.RestStatus;
import org.junit.After;
import org.junit.Test;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/** The admission limit of {@link InferenceService}: work beyond it fails at once with 429, and the limit can change live. */
public class BackPressureTests {
    private final ExecutorService pool = new ThreadPoolExecutor(4, 4, 0, TimeUnit.SECONDS, new ArrayBlockingQueue<>(100));
    private final StrataStats stats = new StrataStats();

    @After
    public void shutdown() throws InterruptedException {
        pool.shutdownNow();
        assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
    }

    private InferenceService service(Settings settings, ExecutorService executor) {
        return new InferenceService(settings, Path.of("target", "no-models"), () -> executor, null, null, stats);
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
        InferenceService service = service(maxPending(2), pool);
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
        assertEquals(1, stats.snapshot(null, java.util.Map.of()).queue().rejected());

        release.countDown();
        assertEquals("done", a.get(10, TimeUnit.SECONDS));
        assertEquals("done", b.get(10, TimeUnit.SECONDS));
        assertEquals("quick", quick(service).get(10, TimeUnit.SECONDS));
        assertEquals(0, service.executor().pending());
    }

    @Test
    public void testSetMaxPending_raisedOrLowered_appliesToTheNextTask() throws Exception {
        InferenceService service = service(maxPending(1), pool);
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
        InferenceService service = service(maxPending(1), pool);
        CompletableFuture<String> second = new CompletableFuture<>();
        service.run(() -> "chunked", ActionListener.wrap(
            chunks -> service.run(() -> chunks + " then embedded", ActionListener.wrap(second::complete, second::completeExceptionally)),
            second::completeExceptionally));
        assertEquals("chunked then embedded", second.get(10, TimeUnit.SECONDS));
    }

    @Test
    public void testRun_failingWork_releasesItsSlot() throws Exception {
        InferenceService service = service(maxPending(1), pool);
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
        ExecutorService full = new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS, new ArrayBlockingQueue<>(1), (r, e) -> {
            throw new RejectedExecutionException("queue full");
        });
        try {
            InferenceService service = service(Settings.EMPTY, full);
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
            assertTrue(failure(embedded) instanceof RejectedExecutionException);
            assertEquals("the rejected task holds no slot", 2, service.executor().pending());
            release.countDown();
            assertEquals("done", running.get(10, TimeUnit.SECONDS));
            assertEquals("quick", queued.get(10, TimeUnit.SECONDS));
            assertFalse("a rejected call is not a call of the model", stats.snapshot(null, java.util.Map.of()).models()
                .containsKey("any-model"));
        } finally {
            full.shutdownNow();
        }
    }

    @Test
    public void testMaxPending_outOfRange_isRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> InferenceSettings.MAX_PENDING.get(maxPending(0)));
        assertTrue(e.getMessage(), e.getMessage().contains("plugins.strata.inference.max_pending"));
    }
}

package io.strata.chunkindex.generations;

import org.opensearch.core.tasks.TaskCancelledException;
import org.opensearch.core.xcontent.ToXContentObject;
import org.opensearch.core.xcontent.XContentBuilder;
import org.opensearch.tasks.CancellableTask;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/** What a rebuild did, and while it runs, what {@code GET _tasks/<id>} shows of it. */
public final class RebuildReport implements ToXContentObject {
    final String sourceIndex;
    final String chunkIndex;
    final String generationIndex;
    final int generation;
    final String config;
    final String pipeline;
    final float requestsPerSecond;
    private final CancellableTask task;
    private final long started = System.nanoTime();
    volatile String phase = "checking";
    volatile long total = -1;
    volatile int passes;
    final AtomicLong done = new AtomicLong();
    /** A resume of an interrupted generation: the documents found complete in it, counted in {@link #done} too. */
    volatile boolean resumed;
    final AtomicLong skipped = new AtomicLong();
    /** Who started it (its automatic resume runs with these roles), and whether its persistent task is registered. */
    volatile CallerIdentity caller;
    volatile boolean registered;
    final AtomicLong parents = new AtomicLong();
    final AtomicLong orphans = new AtomicLong();
    /** Chunk vectors taken from stored chunks (the serving chunk index's, the generation's) / computed by the model. */
    final AtomicLong vectorsReused = new AtomicLong();
    final AtomicLong textsEmbedded = new AtomicLong();

    RebuildReport(String sourceIndex, String chunkIndex, String generationIndex, int generation, String config, String pipeline,
                  float requestsPerSecond, CancellableTask task) {
        this.sourceIndex = sourceIndex;
        this.chunkIndex = chunkIndex;
        this.generationIndex = generationIndex;
        this.generation = generation;
        this.config = config;
        this.pipeline = pipeline;
        this.requestsPerSecond = requestsPerSecond;
        this.task = task;
    }

    CancellableTask task() {
        return task;
    }

    boolean cancelled() {
        return task != null && task.isCancelled();
    }

    TaskCancelledException cancellation() {
        return new TaskCancelledException(String.format(Locale.ROOT, "[_rebuild] of [%s] was cancelled (%s) after %d source "
            + "documents; generation [%s] was deleted, [%s] is as it was", sourceIndex, task == null ? "" : task.getReasonCancelled(),
            done.get(), generationIndex, chunkIndex));
    }

    private double perSecond() {
        double seconds = Math.max(1e-3, (System.nanoTime() - started) / 1e9);
        return Math.round(done.get() / seconds * 10) / 10.0;
    }

    /** The task's status: documents done of the total, parents written, the rate. */
    Map<String, Object> progress() {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("source_index", sourceIndex);
        p.put("generation_index", generationIndex);
        p.put("generation", generation);
        p.put("phase", phase);
        p.put("pass", passes);
        p.put("total", total);
        p.put("done", done.get());
        p.put("resumed", resumed);
        p.put("documents_skipped", skipped.get());
        p.put("parents_written", parents.get());
        p.put("orphans_deleted", orphans.get());
        p.put("vectors_reused", vectorsReused.get());
        p.put("texts_embedded", textsEmbedded.get());
        p.put("documents_per_second", perSecond());
        if (Float.isFinite(requestsPerSecond)) {
            p.put("requests_per_second", (double) requestsPerSecond);
        }
        return p;
    }

    @Override
    public XContentBuilder toXContent(XContentBuilder builder, Params params) throws IOException {
        builder.startObject();
        builder.field("source_index", sourceIndex);
        builder.field("chunk_index", chunkIndex);
        builder.field("generation_index", generationIndex);
        builder.field("generation", generation);
        if (config != null) {
            builder.field("config", config);
        }
        if (pipeline != null) {
            builder.field("pipeline", pipeline);
        }
        builder.field("documents", done.get());
        builder.field("resumed", resumed);
        builder.field("documents_skipped", skipped.get());
        builder.field("parents_written", parents.get());
        builder.field("orphans_deleted", orphans.get());
        builder.field("vectors_reused", vectorsReused.get());
        builder.field("texts_embedded", textsEmbedded.get());
        builder.field("passes", passes);
        builder.field("took_ms", (System.nanoTime() - started) / 1_000_000);
        builder.field("documents_per_second", perSecond());
        return builder.endObject();
    }
}

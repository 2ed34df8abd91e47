package io.strata.chunkindex.reconcile;

import io.strata.chunkindex.write.ChunkWriter;

import org.opensearch.common.xcontent.StatusToXContentObject;
import org.opensearch.core.rest.RestStatus;
import org.opensearch.core.tasks.TaskCancelledException;
import org.opensearch.core.xcontent.XContentBuilder;
import org.opensearch.tasks.CancellableTask;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/** What one {@code _reconcile} run found and did: counts by kind of drift, fixes, and the first failures. */
public final class ReconcileReport implements StatusToXContentObject {
    static final int MAX_FAILURES = 100;

    final String sourceIndex;
    final List<String> chunkIndices;
    final boolean dryRun;
    final AtomicLong checked = new AtomicLong();
    final AtomicLong orphans = new AtomicLong();
    final AtomicLong missing = new AtomicLong();
    final AtomicLong stale = new AtomicLong();
    final AtomicLong duplicates = new AtomicLong();
    /** Documents chunked under another config than their pipeline's current one ({@link ChunkWriter#configDrifted}). */
    final AtomicLong configDrift = new AtomicLong();
    /** Checked documents by the config their summary records ({@code none}: none recorded), at most {@link #MAX_CONFIGS} keys. */
    private final Map<String, Long> configs = new java.util.TreeMap<>();
    static final int MAX_CONFIGS = 20;
    static final String OTHER_CONFIGS = "other";
    final AtomicLong fixed = new AtomicLong();
    final AtomicLong failureCount = new AtomicLong();
    final List<Map<String, Object>> failures = new ArrayList<>();
    /** The statuses of all failures; a null element for a failure without one. */
    final Set<RestStatus> failureStatuses = new HashSet<>();
    /** The source index no longer exists: every chunk is an orphan (see {@link Reconciler#reconcileDeleted}). */
    boolean sourceDeleted;
    final List<String> deletedIndices = new ArrayList<>();
    final long started = System.nanoTime();
    /** Source documents paged through so far, and how many the source index held when the run started (-1: not yet known). */
    final AtomicLong seen = new AtomicLong();
    volatile long total = -1;
    volatile String phase = "starting";
    /** The task the run reports to and is cancelled through; null when run without one. */
    private volatile CancellableTask task;

    ReconcileReport(String sourceIndex, List<String> chunkIndices, boolean dryRun) {
        this.sourceIndex = sourceIndex;
        this.chunkIndices = chunkIndices;
        this.dryRun = dryRun;
    }

    /** Counts a checked document under the config its summary records; summaries are user-writable, so keys are capped. */
    synchronized void countConfig(Object config) {
        String key = config instanceof String s ? s : "none";
        if (!configs.containsKey(key) && configs.size() >= MAX_CONFIGS) {
            key = OTHER_CONFIGS;
        }
        configs.merge(key, 1L, Long::sum);
    }

    /** Reports to {@code task}: its status shows {@link #progress}, and a cancel of it stops the run at its next step. */
    void reportTo(CancellableTask task) {
        this.task = task;
    }

    /** Whether the run was cancelled: the passes stop at the next page or document with {@link #cancellation}. */
    boolean cancelled() {
        CancellableTask t = task;
        return t != null && t.isCancelled();
    }

    TaskCancelledException cancellation() {
        return new TaskCancelledException(String.format(java.util.Locale.ROOT, "[_reconcile] of [%s] was cancelled (%s) after %d "
            + "source documents, %d fixes; what was fixed stays fixed", sourceIndex, task == null ? "" : task.getReasonCancelled(),
            seen.get(), fixed.get()));
    }

    /** What {@code GET _tasks} shows of a running reconcile. */
    Map<String, Object> progress() {
        Map<String, Object> p = new LinkedHashMap<>();
        long ms = Math.max(1, (System.nanoTime() - started) / 1_000_000);
        p.put("source_index", sourceIndex);
        p.put("phase", phase);
        p.put("dry_run", dryRun);
        p.put("total", total);
        p.put("seen", seen.get());
        p.put("checked", checked.get());
        p.put("orphans", orphans.get());
        p.put("missing", missing.get());
        p.put("stale", stale.get());
        p.put("duplicates", duplicates.get());
        p.put("config_drift", configDrift.get());
        p.put("fixed", fixed.get());
        p.put("failures", failureCount.get());
        p.put("took_ms", ms);
        p.put("documents_per_second", Math.round(seen.get() * 10_000.0 / ms) / 10.0);
        return p;
    }

    synchronized void fail(String index, String id, String reason) {
        fail(index, id, reason, null);
    }

    synchronized void fail(String index, String id, String reason, RestStatus status) {
        failureCount.incrementAndGet();
        failureStatuses.add(status);
        if (failures.size() < MAX_FAILURES) {
            Map<String, Object> f = new LinkedHashMap<>();
            f.put("index", index);
            if (id != null) {
                f.put("id", id);
            }
            f.put("reason", reason);
            if (status != null) {
                f.put("status", status.getStatus());
            }
            failures.add(f);
        }
    }

    @Override
    public synchronized XContentBuilder toXContent(XContentBuilder b, Params params) throws IOException {
        b.startObject();
        b.field("source_index", sourceIndex);
        b.field("chunk_indices", chunkIndices);
        b.field("checked", checked.get());
        b.field("orphans", orphans.get());
        b.field("missing", missing.get());
        b.field("stale", stale.get());
        b.field("duplicates", duplicates.get());
        b.field("config_drift", configDrift.get());
        b.field("configs", configs);
        b.field("fixed", fixed.get());
        b.field("failures", failures);
        if (failureCount.get() > failures.size()) {
            b.field("failures_not_shown", failureCount.get() - failures.size());
        }
        if (sourceDeleted) {
            b.field("source_deleted", true);
            b.field("deleted_indices", deletedIndices);
        }
        b.field("dry_run", dryRun);
        b.field("took_ms", (System.nanoTime() - started) / 1_000_000);
        return b.endObject();
    }

    /**
     * 200, unless the run fixed nothing and every failure had the same error status (e.g. 403: the caller may not
     * write the chunk index): then that status, with this report as the body.
     */
    @Override
    public synchronized RestStatus status() {
        if (fixed.get() == 0 && failureStatuses.size() == 1) {
            RestStatus only = failureStatuses.iterator().next();
            if (only != null && only.getStatus() >= 400) {
                return only;
            }
        }
        return RestStatus.OK;
    }
}

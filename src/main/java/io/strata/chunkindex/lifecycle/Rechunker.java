package io.strata.chunkindex.lifecycle;

import io.strata.chunkindex.ChunkKey;
import io.strata.chunkindex.SourceSummary;
import io.strata.chunkindex.registry.ChunkIndexRegistry;
import io.strata.chunkindex.setup.ChunkIndexSetup;
import io.strata.chunkindex.setup.WriteChecks;
import io.strata.chunkindex.store.ChunkCommit;
import io.strata.chunkindex.store.ChunkStore;
import io.strata.chunkindex.write.ChunkWriter;
import io.strata.chunkindex.write.ChunkWriters;
import io.strata.stats.StrataStats;
import org.opensearch.ExceptionsHelper;
import org.opensearch.action.get.GetRequest;
import org.opensearch.action.index.IndexRequest;
import org.opensearch.action.support.ContextPreservingActionListener;
import org.opensearch.common.util.concurrent.ThreadContext;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.index.Index;
import org.opensearch.index.engine.VersionConflictEngineException;
import org.opensearch.ingest.IngestService;
import org.opensearch.transport.client.Client;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Brings the chunks of one source document, and its {@code strata} summary, in step with the document as stored: for
 * writes that ran no chunking pipeline ({@code _update} of a partial document or by script, an index request without the
 * pipeline) and for {@code _reconcile}. The chunks of the chunk index its summary names are cut again from its stored text
 * by the processor that summary names (or the index's default/final pipeline), every other chunk index registered to its
 * source index loses its chunks, all versioned with the {@code _seq_no} of the document as read ({@link ChunkCommit}); then
 * a changed summary is stored, guarded by that sequence number (a newer write wins, and carries its own chunks) and
 * without running pipelines.
 */
public final class Rechunker {
    /** What bringing one document in step did. */
    public enum Outcome {
        /** Its chunks (and its summary, when it changed) are those of the stored document. */
        DONE,
        /** A newer write of the document came first; it carries its own chunks. */
        SUPERSEDED
    }

    private final ChunkIndexSetup setup;
    private final ChunkCommit commit;
    private final Supplier<ChunkWriters> writers;
    private final Client client;
    private final ThreadContext threadContext;
    private final StrataStats stats;

    public Rechunker(ChunkIndexSetup setup, ChunkCommit commit, Supplier<ChunkWriters> writers, Client client, StrataStats stats) {
        this.setup = setup;
        this.commit = commit;
        this.writers = writers;
        this.client = client;
        this.threadContext = client.threadPool().getThreadContext();
        this.stats = stats;
    }

    /**
     * Brings {@code doc} (stored in concrete index {@code source}) in step in the chunk indices {@code targets} and the one
     * its summary names, after a write. Fails when the summary names a chunk index no live pipeline writes to. A summary
     * recording a failed chunking ({@link SourceSummary#isFailed}: an {@code on_failure} handler stored the document) is
     * kept, and the document has no chunks in {@code targets}: cutting them again here would fail the write the handler
     * let through whenever the cause lasts; {@code _reconcile} ({@link #reconcile}) or the next write through the pipeline
     * cuts them.
     */
    public void rechunk(ChunkStore.StoredSource doc, Index source, List<String> targets, WriteChecks checks,
                        ActionListener<Outcome> listener) {
        rechunk(doc, source, targets, checks, false, false, listener);
    }

    /**
     * For {@code _reconcile}: as above, and a document whose summary records a failed chunking is cut again.
     * {@code repair} writes at the repair version ({@link ChunkCommit#repairing()}), after a plain rewrite of the unchanged
     * document lost to a chunk edited by hand.
     */
    public void reconcile(ChunkStore.StoredSource doc, Index source, List<String> targets, WriteChecks checks, boolean repair,
                          ActionListener<Outcome> listener) {
        rechunk(doc, source, targets, checks, repair, true, listener);
    }

    private void rechunk(ChunkStore.StoredSource doc, Index source, List<String> targets, WriteChecks checks, boolean repair,
                         boolean retryFailed, ActionListener<Outcome> listener) {
        ChunkCommit commit = repair ? this.commit.repairing() : this.commit;
        Map<String, Object> summary = doc.source().get(SourceSummary.FIELD) instanceof Map<?, ?> m ? cast(m) : null;
        // a failed chunking left as it is: no chunk index gets chunks (each of targets loses any), the summary stays
        String summaryName = !retryFailed && SourceSummary.isFailed(summary) ? null : movedTarget(source, summary);
        // targets are concrete (registered) indices; the summary names its chunk index, maybe an alias over a generation
        String summaryTarget = setup.servingIndex(summaryName);
        Set<String> all = new LinkedHashSet<>(targets);
        if (summaryTarget != null) {
            all.add(summaryTarget);
        }
        List<String> ordered = new ArrayList<>(all);
        Object[] newSummary = { summary };
        boolean[] superseded = { false };
        step(commit, ordered, 0, doc, source, checks, summaryName, summaryTarget, summary, newSummary, superseded, ActionListener.wrap(v -> {
            if (superseded[0] || Objects.equals(newSummary[0], summary)) {
                listener.onResponse(superseded[0] ? Outcome.SUPERSEDED : Outcome.DONE);
                return;
            }
            storeSummary(doc, cast((Map<?, ?>) newSummary[0]), listener);
        }, listener::onFailure));
    }

    private void step(ChunkCommit commit, List<String> targets, int i, ChunkStore.StoredSource doc, Index source, WriteChecks checks,
                      String summaryName, String summaryTarget,
                      Map<String, Object> summary, Object[] newSummary, boolean[] superseded, ActionListener<Void> listener) {
        if (i == targets.size()) {
            listener.onResponse(null);
            return;
        }
        String target = targets.get(i);
        ActionListener<ChunkCommit.Result> next = ActionListener.wrap(result -> {
            superseded[0] |= result == ChunkCommit.Result.SUPERSEDED;
            step(commit, targets, i + 1, doc, source, checks, summaryName, summaryTarget, summary, newSummary, superseded, listener);
        }, listener::onFailure);
        if (!target.equals(summaryTarget)) {
            commit.delete(target, keyOf(source, doc), doc.seqNo(), next); // no summary points here: no chunks
            return;
        }
        Object pipeline = summary == null ? null : summary.get("pipeline");
        ChunkWriters lookup = writers.get();
        ChunkWriter writer = lookup == null ? null : lookup.resolve(source.getName(), summary, target);
        if (writer == null) {
            listener.onFailure(new IllegalStateException(String.format(Locale.ROOT,
                "no pipeline has a [multi_granular_chunking] processor writing to [%s]; cannot rewrite the chunks of [%s][%s]", target,
                source.getName(), doc.id())));
            return;
        }
        String text = writer.textIn(doc.source());
        boolean runs;
        try {
            runs = text != null && lookup.runsOn(writer, doc);
        } catch (Exception e) {
            listener.onFailure(e); // the processor's condition failed on the document: as the pipeline would answer
            return;
        }
        if (!runs) {
            newSummary[0] = null; // the text is gone, or the processor would skip it now: so are its chunks and its summary
            commit.delete(target, keyOf(source, doc), doc.seqNo(), next);
            return;
        }
        String hash = SourceSummary.sourceHash(text);
        ChunkWriter.SourceFields fields;
        try {
            fields = writer.sourceFields(doc.source());
        } catch (IllegalArgumentException e) {
            listener.onFailure(e); // a context field the update made an object: as the pipeline would answer
            return;
        }
        StrataStats.Progress progress = stats.track(source.getName(), doc.id(), text.length());
        ActionListener<ChunkCommit.Result> tracked = ActionListener.runBefore(next, progress::done);
        Consumer<Exception> failed = tracked::onFailure;
        writer.chunk(text, ActionListener.wrap(parents -> writer.prepare(target, source.getName(), doc.id(), parents,
            fields, hash, checks, progress, ActionListener.wrap(prepared -> {
                newSummary[0] = writer.summary(summaryName, parents, hash, pipeline instanceof String p ? p : null);
                setup.register(target, source, writer.callerContext(ActionListener.wrap(
                    r -> {
                        progress.stage(StrataStats.Stage.WRITING);
                        commit.write(target, keyOf(source, doc), doc.seqNo(), prepared.count(), prepared.documents(source.getName(), doc.id(),
                            doc.routing()), progress::written, tracked);
                    }, failed)));
            }, failed), failed), failed));
    }

    /** The document's chunk key: its _id on the shard its routing sends it to (where it was read). */
    private ChunkKey keyOf(Index source, ChunkStore.StoredSource doc) {
        return setup.keyOf(source.getName(), doc.id(), doc.routing());
    }

    /**
     * The chunk index the document's chunks belong in: the summary's, unless that one serves another source index, no
     * writer of this one writes there, and the one that agrees with the summary writes elsewhere — a rollover between the
     * pipeline (which named the previous write index's chunk index) and the write (which landed in the new index), whose
     * summary the bulk filter could not correct ({@link #retarget}). The summary is then corrected here.
     */
    private String movedTarget(Index source, Map<String, Object> summary) {
        String named = summary != null && summary.get("target_index") instanceof String t ? t : null;
        ChunkWriters lookup = writers.get();
        ChunkIndexRegistry.Registration registered = named == null ? null : setup.registry().ofChunkIndex(setup.servingIndex(named));
        if (registered == null || registered.source().getUUID().equals(source.getUUID()) || lookup == null
            || lookup.resolve(source.getName(), summary, named) != null) {
            return named; // not registered to another source index: the summary's own chunk index
        }
        ChunkWriter writer = lookup.resolve(source.getName(), summary, null);
        return writer == null ? named : writer.targetFor(source.getName());
    }

    /**
     * Points the summary of {@code doc} (as written, at its {@code _seq_no}) at {@code target}: for a document whose pipeline
     * named the chunk index of the write index before a rollover and that landed in the new index, whose chunk index got
     * its chunks. Guarded by the sequence number like every summary write; a newer write of the document wins.
     */
    public void retarget(ChunkStore.StoredSource doc, String target, ActionListener<Outcome> listener) {
        Map<String, Object> summary = doc.source().get(SourceSummary.FIELD) instanceof Map<?, ?> m ? cast(m) : null;
        if (summary == null || target.equals(summary.get("target_index"))) {
            listener.onResponse(Outcome.DONE);
            return;
        }
        Map<String, Object> moved = new LinkedHashMap<>(summary);
        moved.put("target_index", target);
        storeSummary(doc, moved, listener);
    }

    /**
     * Stores {@code summary} (null: none) in the document, if it is still the version read, without running pipelines. The
     * document written back is the one stored, read as the node, never what the caller read: field-level security drops
     * fields from the caller's read and masking replaces values, and indexing that view would lose them for good. The
     * write itself is the caller's (the security plugin checks it), guarded by the sequence number read.
     */
    private void storeSummary(ChunkStore.StoredSource doc, Map<String, Object> summary, ActionListener<Outcome> listener) {
        ActionListener<Outcome> caller = ContextPreservingActionListener.wrapPreservingContext(listener, threadContext);
        Supplier<ThreadContext.StoredContext> restore = threadContext.newRestorableContext(false);
        GetRequest get = new GetRequest(doc.index(), doc.id()).routing(doc.routing()).realtime(true);
        try (ThreadContext.StoredContext ignored = threadContext.stashContext()) {
            client.get(get, new ContextPreservingActionListener<>(restore, ActionListener.wrap(stored -> {
                if (!stored.isExists() || stored.getSeqNo() != doc.seqNo() || stored.getPrimaryTerm() != doc.primaryTerm()) {
                    caller.onResponse(Outcome.SUPERSEDED); // written or deleted meanwhile: that write carries its own chunks
                    return;
                }
                writeSummary(doc, stored.getSourceAsMap(), summary, caller);
            }, caller::onFailure)));
        }
    }

    private void writeSummary(ChunkStore.StoredSource doc, Map<String, Object> stored, Map<String, Object> summary,
                              ActionListener<Outcome> caller) {
        Map<String, Object> updated = new LinkedHashMap<>(stored);
        if (summary == null) {
            updated.remove(SourceSummary.FIELD);
        } else {
            updated.put(SourceSummary.FIELD, summary);
        }
        IndexRequest index = new IndexRequest(doc.index()).id(doc.id()).routing(doc.routing()).source(updated)
            .setPipeline(IngestService.NOOP_PIPELINE_NAME).setIfSeqNo(doc.seqNo()).setIfPrimaryTerm(doc.primaryTerm());
        // our own write, not handled again — also inside a bulk's chunk work, whose ledger (of the caller's documents) would
        // hold this document's earlier text when the bulk wrote it before updating it, and refuse the summary as changed
        try (ThreadContext.StoredContext ignored = threadContext.newStoredContext(true, List.of(ChunkLedger.TRANSIENT))) {
            threadContext.putTransient(ChunkLedger.TRANSIENT, ChunkLedger.ownWrites());
            client.index(index, ActionListener.wrap(r -> caller.onResponse(Outcome.DONE), e -> {
                if (ExceptionsHelper.unwrapCause(e) instanceof VersionConflictEngineException) {
                    caller.onResponse(Outcome.SUPERSEDED); // written meanwhile: that write carries its own chunks
                } else {
                    caller.onFailure(e);
                }
            }));
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> cast(Map<?, ?> map) {
        return map == null ? null : (Map<String, Object>) map;
    }
}

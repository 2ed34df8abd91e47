package io.strata.chunkindex.reconcile;

import io.strata.chunkindex.ChunkIndexMeta;
import io.strata.chunkindex.SourceSummary;
import io.strata.chunkindex.lifecycle.Rechunker;
import io.strata.chunkindex.registry.ChunkIndexRegistry;
import io.strata.chunkindex.setup.ChunkIndexSetup;
import io.strata.chunkindex.setup.WriteChecks;
import io.strata.chunkindex.store.ChunkCommit;
import io.strata.chunkindex.store.ChunkStore;
import io.strata.chunkindex.write.ChunkWriter;
import io.strata.chunkindex.write.ChunkWriters;
import io.strata.transport.ProgressTask;
import org.opensearch.ExceptionsHelper;
import org.opensearch.action.admin.indices.delete.DeleteIndexRequest;
import org.opensearch.action.search.SearchRequest;
import org.opensearch.action.support.IndicesOptions;
import org.opensearch.cluster.metadata.IndexMetadata;
import org.opensearch.cluster.metadata.Metadata;
import org.opensearch.cluster.service.ClusterService;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.index.Index;
import org.opensearch.core.rest.RestStatus;
import org.opensearch.index.query.QueryBuilders;
import org.opensearch.search.builder.SearchSourceBuilder;
import org.opensearch.tasks.CancellableTask;
import org.opensearch.transport.client.Client;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Supplier;

/**
 * Finds and fixes drift between a source index and its chunk indices ({@code POST _plugins/_strata/_reconcile}), one
 * bounded page at a time, so memory does not grow with the index. Every read and write goes through the node client in
 * the caller's thread context, so a reconcile can read and write only what the caller may.
 *
 * <p>Two passes, chunk side first so that its counts do not depend on the fixes of the second: {@link ReconcileChunkPass}
 * (orphans and duplicates: deleted) then {@link ReconcileSourcePass} (missing and stale chunks: rewritten from the stored
 * text by {@link Rechunker}). Pages are independent searches in {@code _seq_no} order ({@link ShardPages}): no scroll or
 * point in time to expire while a page's documents are re-embedded. Every fix is versioned as a pipeline's write is
 * ({@link ChunkCommit}): a rewrite with the source's {@code _seq_no} as read, a delete with the chunk's own version, so a
 * concurrent newer write wins and there is nothing to undo.
 *
 * <p>The chunk indices of a source index are those {@link ChunkIndexRegistry} records; chunk indices written before the
 * registry (format 1–2) that a pipeline names for this index are registered by a run that is not a dry run, once the
 * caller's right to write them is checked.
 */
public final class Reconciler {
    static final int SOURCE_PAGE = 100;
    static final int CHUNK_PAGE = 500;
    static final int MGET_BATCH = 1000;

    private final Client client;
    private final ClusterService clusterService;
    private final ChunkIndexSetup setup;
    private final Supplier<ChunkWriters> writers;
    private final ReconcileChunkPass chunkPass;
    private final ReconcileSourcePass sourcePass;
    private final CallerView view;

    public Reconciler(Client client, ClusterService clusterService, ChunkIndexSetup setup, ChunkStore store, Rechunker rechunker,
                      Supplier<ChunkWriters> writers, CallerView view) {
        this.client = client;
        this.clusterService = clusterService;
        this.setup = setup;
        this.writers = writers;
        this.view = view;
        ShardPages pages = new ShardPages(client, clusterService);
        this.chunkPass = new ReconcileChunkPass(client, pages, setup);
        this.sourcePass = new ReconcileSourcePass(client, pages, store, rechunker, writers, setup);
    }

    public void reconcile(String sourceIndex, boolean dryRun, ActionListener<ReconcileReport> listener) {
        reconcile(sourceIndex, dryRun, null, listener);
    }

    /**
     * As above, reporting to {@code task} (null: none): its status shows the run's counters and how many of the source
     * index's documents it has paged through, and a cancel stops the run after the page or document under way.
     */
    public void reconcile(String sourceIndex, boolean dryRun, CancellableTask task, ActionListener<ReconcileReport> listener) {
        Metadata metadata = clusterService.state().metadata();
        IndexMetadata source = metadata.index(sourceIndex);
        if (source == null) {
            listener.onFailure(new org.opensearch.index.IndexNotFoundException(sourceIndex));
            return;
        }
        TreeSet<String> chunkIndices = new TreeSet<>();
        setup.registry().ofSource(source.getIndexUUID()).forEach(r -> chunkIndices.add(r.chunkIndex().getName()));
        // reported, never checked nor registered: nothing but a mapping's _meta (anyone's to write) says they are chunk indices
        List<String> legacy = legacyChunkIndices(metadata, source);
        ReconcileReport report = new ReconcileReport(sourceIndex, List.copyOf(chunkIndices), dryRun);
        report.reportTo(task);
        if (task instanceof ProgressTask progress) {
            progress.progress(report::progress);
        }
        // a pair restored under new names: its documents' summaries name the chunk indices as they were called before
        Map<String, String> renamed = new HashMap<>();
        for (String chunkIndex : chunkIndices) {
            String before = ChunkIndexRegistry.restoredFrom(metadata.index(chunkIndex));
            if (before != null) {
                renamed.put(before, chunkIndex);
            }
        }
        WriteChecks checks = new WriteChecks(setup);
        List<String> all = new ArrayList<>(chunkIndices);
        all.add(sourceIndex);
        // the caller must see all of them: what it cannot see it would take for gone (CallerView)
        Map<String, List<String>> counted = new LinkedHashMap<>();
        ChunkWriters lookup = writers.get();
        // the chunked texts, and the summaries: a view without them (an FLS include list) takes every chunk for an orphan
        TreeSet<String> sourceFields = new TreeSet<>(List.of(SourceSummary.FIELD));
        if (lookup != null) {
            lookup.all().forEach(w -> sourceFields.add(w.field()));
        }
        counted.put(sourceIndex, List.copyOf(sourceFields));
        chunkIndices.forEach(c -> counted.put(c, List.of()));
        // searches see refreshed documents only: make every acknowledged write visible first
        client.admin().indices().prepareRefresh(all.toArray(String[]::new)).execute(ActionListener.wrap(
            refreshed -> view.requireWhole(counted, ActionListener.wrap(
            whole -> countSource(report, ActionListener.wrap(
            r -> registerLegacy(report, legacy.iterator(), source.getIndex(), checks, ActionListener.wrap(
                v -> chunkIndices(report, report.chunkIndices.iterator(), ActionListener.wrap(
                    w -> sourcePass.run(report, source.getIndex(), checks, renamed,
                        ActionListener.wrap(x -> refreshFixed(report, source.getIndex(), listener), listener::onFailure)),
                    listener::onFailure)),
                listener::onFailure)),
            listener::onFailure)),
            listener::onFailure)),
            listener::onFailure));
    }

    /** How many documents the source index holds as the caller sees them: the total of a task's progress. */
    private void countSource(ReconcileReport report, ActionListener<Void> listener) {
        SearchRequest count = new SearchRequest(report.sourceIndex).source(new SearchSourceBuilder().size(0).trackTotalHits(true)
            .query(QueryBuilders.matchAllQuery()));
        client.search(count, ActionListener.wrap(r -> {
            report.total = r.getHits().getTotalHits().value();
            listener.onResponse(null);
        }, listener::onFailure));
    }

    /**
     * A search right after the answer sees the fixes (the source was refreshed at the start and not written since): the
     * chunk indices of the run, and any the run's rewrites registered (one every write of the index failed to fill, its
     * documents stored by an on_failure handler; a clone's own).
     */
    private void refreshFixed(ReconcileReport report, Index source, ActionListener<ReconcileReport> listener) {
        if (report.dryRun || report.fixed.get() == 0) {
            listener.onResponse(report);
            return;
        }
        TreeSet<String> written = new TreeSet<>(report.chunkIndices);
        setup.registry().ofSource(source.getUUID()).forEach(r -> written.add(r.chunkIndex().getName()));
        client.admin().indices().prepareRefresh(written.toArray(String[]::new))
            .setIndicesOptions(IndicesOptions.lenientExpandOpen())
            .execute(ActionListener.wrap(r -> listener.onResponse(report), e -> listener.onResponse(report)));
    }

    /**
     * Indices that a live pipeline writes this index's chunks to, not registered, whose mapping {@code _meta} says they are
     * chunk indices of format 1–2 (written before the registry).
     */
    private List<String> legacyChunkIndices(Metadata metadata, IndexMetadata source) {
        TreeSet<String> out = new TreeSet<>();
        ChunkWriters lookup = writers.get();
        if (lookup == null) {
            return List.of();
        }
        for (ChunkWriter w : lookup.all()) {
            String target = w.targetFor(source.getIndex().getName());
            IndexMetadata chunkIndex = metadata.index(target);
            if (chunkIndex != null && setup.registry().ofChunkIndex(target) == null && ChunkIndexMeta.of(chunkIndex) != null
                && !ChunkIndexMeta.of(chunkIndex).versioned()) {
                out.add(target);
            }
        }
        return List.copyOf(out);
    }

    /**
     * Fails closed on indices that only their mapping's {@code _meta} calls chunk indices of this source (format 1–2, before
     * the registry): a user who may map an index can write that, so they are neither registered (which would let the node
     * delete them with the source) nor checked (which would delete their documents as orphans); each is reported.
     */
    private void registerLegacy(ReconcileReport report, Iterator<String> legacy, Index source, WriteChecks checks,
                                ActionListener<Void> listener) {
        legacy.forEachRemaining(target -> report.fail(target, null, String.format(Locale.ROOT, "[%s] is not registered to [%s]: its "
            + "mapping's _meta names a chunk index format from before the registry, which Strata does not take as proof that it "
            + "holds chunks; delete it (its chunks are rewritten into a new chunk index by the next _reconcile), or point the "
            + "pipeline's [target_index] at a new index", target, source.getName()), RestStatus.CONFLICT));
        listener.onResponse(null);
    }

    private void chunkIndices(ReconcileReport report, Iterator<String> chunkIndices, ActionListener<Void> listener) {
        if (!chunkIndices.hasNext()) {
            listener.onResponse(null);
            return;
        }
        String chunkIndex = chunkIndices.next();
        String before = ChunkIndexRegistry.restoredFrom(clusterService.state().metadata().index(chunkIndex));
        chunkPass.run(report, chunkIndex, before, ActionListener.wrap(v -> chunkIndices(report, chunkIndices, listener),
            listener::onFailure));
    }

    // ---- a deleted source index

    /**
     * The source index is gone: every chunk of the chunk indices registered to it is an orphan. Counts them per chunk index
     * and, unless a dry run, deletes each chunk index (as the caller) — only while no index of the source's name exists
     * again (a source re-created meanwhile: run reconcile again).
     */
    public void reconcileDeleted(String sourceIndex, List<String> chunkIndices, boolean dryRun, ActionListener<ReconcileReport> listener) {
        ReconcileReport report = new ReconcileReport(sourceIndex, chunkIndices, dryRun);
        report.sourceDeleted = true;
        client.admin().indices().prepareRefresh(chunkIndices.toArray(String[]::new)).execute(ActionListener.wrap(
            r -> deletedPass(report, chunkIndices.iterator(), ActionListener.wrap(v -> listener.onResponse(report), listener::onFailure)),
            listener::onFailure));
    }

    private void deletedPass(ReconcileReport report, Iterator<String> chunkIndices, ActionListener<Void> listener) {
        if (!chunkIndices.hasNext()) {
            listener.onResponse(null);
            return;
        }
        String chunkIndex = chunkIndices.next();
        ActionListener<Void> next = ActionListener.wrap(v -> deletedPass(report, chunkIndices, listener), listener::onFailure);
        SearchRequest count = new SearchRequest(chunkIndex).source(new SearchSourceBuilder().size(0).trackTotalHits(true)
            .query(QueryBuilders.matchAllQuery()));
        client.search(count, ActionListener.wrap(r -> {
            long orphans = r.getHits().getTotalHits().value();
            report.orphans.addAndGet(orphans);
            if (report.dryRun) {
                next.onResponse(null);
            } else if (clusterService.state().metadata().index(report.sourceIndex) != null) {
                report.fail(chunkIndex, null, String.format(Locale.ROOT,
                    "[%s] was re-created while reconciling; its chunk index is kept: reconcile [%s] again", report.sourceIndex,
                    report.sourceIndex), RestStatus.CONFLICT);
                next.onResponse(null);
            } else {
                client.admin().indices().delete(new DeleteIndexRequest(chunkIndex), ActionListener.wrap(ack -> {
                    report.fixed.addAndGet(orphans);
                    synchronized (report) {
                        report.deletedIndices.add(chunkIndex);
                    }
                    next.onResponse(null);
                }, e -> {
                    report.fail(chunkIndex, null, "deleting the chunk index failed: " + e.getMessage(),
                        ExceptionsHelper.status(ExceptionsHelper.unwrapCause(e)));
                    next.onResponse(null);
                }));
            }
        }, listener::onFailure));
    }
}

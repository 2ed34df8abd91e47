package io.strata.chunkindex;

import org.opensearch.action.bulk.BulkItemResponse;
import org.opensearch.action.bulk.BulkRequest;
import org.opensearch.action.delete.DeleteRequest;
import org.opensearch.action.get.GetRequest;
import org.opensearch.action.get.MultiGetItemResponse;
import org.opensearch.action.get.MultiGetRequest;
import org.opensearch.action.index.IndexRequest;
import org.opensearch.action.search.ClearScrollRequest;
import org.opensearch.action.search.SearchRequest;
import org.opensearch.action.search.SearchResponse;
import org.opensearch.action.search.SearchScrollRequest;
import org.opensearch.cluster.service.ClusterService;
import org.opensearch.common.unit.TimeValue;
import org.opensearch.core.action.ActionListener;
import org.opensearch.ExceptionsHelper;
import org.opensearch.action.admin.indices.delete.DeleteIndexRequest;
import org.opensearch.common.xcontent.StatusToXContentObject;
import org.opensearch.core.rest.RestStatus;
import org.opensearch.core.xcontent.XContentBuilder;
import org.opensearch.index.query.QueryBuilder;
import org.opensearch.index.query.QueryBuilders;
import org.opensearch.ingest.IngestService;
import org.opensearch.search.SearchHit;
import org.opensearch.search.builder.SearchSourceBuilder;
import org.opensearch.search.fetch.subphase.FetchSourceContext;
import org.opensearch.transport.client.Client;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;

/**
 * Finds and fixes drift between a source index and its chunk indices, one bounded page at a time (scrolls of
 * {@link #SOURCE_PAGE} source / {@link #CHUNK_PAGE} chunk documents, multi-gets of at most {@link #MGET_BATCH} ids), so
 * memory does not grow with the index. Every call goes through the node client in the caller's thread context, so a
 * reconcile can read and write only what the caller may.
 *
 * <p>Two passes, chunk side first so that its counts do not depend on the fixes of the second:
 * <ol>
 *   <li>every chunk document (of every chunk index whose mapping names the source index): an <b>orphan</b> when its
 *       source document is gone or no longer carries a summary pointing at this chunk index; a <b>duplicate</b> when its
 *       ordinal is at or beyond the summary's {@code parents}. Fix: delete.</li>
 *   <li>every source document with a summary: <b>missing</b> when one of its chunks {@code 0..parents-1} is absent
 *       (realtime multi-get, exact before a refresh); else <b>stale</b> when its text no longer hashes to the summary's
 *       {@code source_hash}, or a chunk carries another {@code source_hash} (chunks of a newer or older text, e.g. a node
 *       crash between the chunk write and the source write). Fix: rewrite its chunks from its stored text with its
 *       pipeline's processor ({@link MultiGranularChunkingProcessor#rewrite}) and store the new summary, guarded by the
 *       document's sequence number so a concurrent write wins.</li>
 * </ol>
 * Chunks written before {@code source_hash} existed are compared by content instead: each parent's text must equal the
 * source text at its offsets.
 *
 * <p>Not safe against ingest of the same ids at the same moment: a chunk written for a source document whose own write
 * has not happened yet looks like an orphan. Run it when that source is quiet, or run it again.
 */
public final class Reconciler {
    static final int SOURCE_PAGE = 100;
    static final int CHUNK_PAGE = 500;
    static final int MGET_BATCH = 1000;
    static final int MAX_FAILURES = 100;
    private static final TimeValue KEEP_ALIVE = TimeValue.timeValueMinutes(2);
    private static final String SUMMARY = ChunkWriter.SUMMARY_FIELD;

    private final Client client;
    private final ClusterService clusterService;
    private final ChunkWriters writers;

    public Reconciler(Client client, ClusterService clusterService, ChunkWriters writers) {
        this.client = client;
        this.clusterService = clusterService;
        this.writers = writers;
    }

    /** What one run found and did. */
    public static final class Report implements StatusToXContentObject {
        final String sourceIndex;
        final List<String> chunkIndices;
        final boolean dryRun;
        final AtomicLong checked = new AtomicLong();
        final AtomicLong orphans = new AtomicLong();
        final AtomicLong missing = new AtomicLong();
        final AtomicLong stale = new AtomicLong();
        final AtomicLong duplicates = new AtomicLong();
        final AtomicLong fixed = new AtomicLong();
        final AtomicLong failureCount = new AtomicLong();
        final List<Map<String, Object>> failures = new ArrayList<>();
        /** The statuses of all failures; a null element for a failure without one. */
        final Set<RestStatus> failureStatuses = new HashSet<>();
        /** The source index no longer exists: every chunk is an orphan (see {@link #reconcileDeleted}). */
        boolean sourceDeleted;
        final List<String> deletedIndices = new ArrayList<>();
        final long started = System.nanoTime();

        Report(String sourceIndex, List<String> chunkIndices, boolean dryRun) {
            this.sourceIndex = sourceIndex;
            this.chunkIndices = chunkIndices;
            this.dryRun = dryRun;
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

    public void reconcile(String sourceIndex, boolean dryRun, ActionListener<Report> listener) {
        Report report = new Report(sourceIndex, ChunkIndexMeta.chunkIndicesOf(clusterService.state().metadata(), sourceIndex), dryRun);
        List<String> all = new ArrayList<>(report.chunkIndices);
        all.add(sourceIndex);
        // scrolls see refreshed documents only: make every acknowledged write visible first
        client.admin().indices().prepareRefresh(all.toArray(String[]::new)).execute(ActionListener.wrap(
            r -> chunkPass(report, report.chunkIndices.iterator(), ActionListener.wrap(
                v -> sourcePass(report, ActionListener.wrap(w -> listener.onResponse(report), listener::onFailure)),
                listener::onFailure)),
            listener::onFailure));
    }

    // ---- a deleted source index

    /**
     * The source index is gone (its name is free): every chunk of it is an orphan. Counts them per chunk index and,
     * unless a dry run, removes them — the whole chunk index when it holds nothing else (it should not: one chunk index
     * per source index), else page by page. The chunk index is deleted only if the source index still does not exist
     * right before (a source re-created meanwhile writes to it again; run reconcile on it then).
     */
    public void reconcileDeleted(String sourceIndex, List<String> chunkIndices, boolean dryRun, ActionListener<Report> listener) {
        Report report = new Report(sourceIndex, chunkIndices, dryRun);
        report.sourceDeleted = true;
        client.admin().indices().prepareRefresh(chunkIndices.toArray(String[]::new)).execute(ActionListener.wrap(
            r -> deletedPass(report, chunkIndices.iterator(), ActionListener.wrap(v -> listener.onResponse(report), listener::onFailure)),
            listener::onFailure));
    }

    private void deletedPass(Report report, Iterator<String> chunkIndices, ActionListener<Void> listener) {
        if (!chunkIndices.hasNext()) {
            listener.onResponse(null);
            return;
        }
        String chunkIndex = chunkIndices.next();
        ActionListener<Void> next = ActionListener.wrap(v -> deletedPass(report, chunkIndices, listener), listener::onFailure);
        var mine = QueryBuilders.termQuery(ChunkDocuments.SOURCE_INDEX, report.sourceIndex);
        count(chunkIndex, QueryBuilders.matchAllQuery(), ActionListener.wrap(total -> count(chunkIndex, mine, ActionListener.wrap(
            orphans -> removeOrphans(report, chunkIndex, mine, total, orphans, next), listener::onFailure)), listener::onFailure));
    }

    /** {@code orphans} of the {@code total} documents of {@code chunkIndex} are chunks of the deleted source ({@code mine}). */
    private void removeOrphans(Report report, String chunkIndex, QueryBuilder mine, long total, long orphans, ActionListener<Void> next) {
        report.orphans.addAndGet(orphans);
        if (report.dryRun || (orphans == 0 && total > 0)) {
            next.onResponse(null);
        } else if (orphans < total) {
            // other documents too (put there by hand): delete only this source's chunks
            SearchRequest search = new SearchRequest(chunkIndex).scroll(KEEP_ALIVE).source(new SearchSourceBuilder().size(CHUNK_PAGE)
                .sort("_doc").query(mine).fetchSource(false));
            scroll(search, (hits, l) -> deleteChunks(report, chunkIndex, Arrays.stream(hits).map(SearchHit::getId).toList(), l), next);
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
    }

    private void count(String index, QueryBuilder query, ActionListener<Long> listener) {
        SearchRequest search = new SearchRequest(index).source(new SearchSourceBuilder().size(0).trackTotalHits(true).query(query));
        client.search(search, ActionListener.wrap(r -> listener.onResponse(r.getHits().getTotalHits().value()), listener::onFailure));
    }

    // ---- pass 1: chunk documents

    private void chunkPass(Report report, Iterator<String> chunkIndices, ActionListener<Void> listener) {
        if (!chunkIndices.hasNext()) {
            listener.onResponse(null);
            return;
        }
        String chunkIndex = chunkIndices.next();
        SearchRequest search = new SearchRequest(chunkIndex).scroll(KEEP_ALIVE).source(new SearchSourceBuilder().size(CHUNK_PAGE)
            .sort("_doc").fetchSource(new String[] { ChunkDocuments.SOURCE_ID, ChunkDocuments.ORDINAL }, null));
        scroll(search, (hits, l) -> checkChunks(report, chunkIndex, hits, l),
            ActionListener.wrap(v -> chunkPass(report, chunkIndices, listener), listener::onFailure));
    }

    private void checkChunks(Report report, String chunkIndex, SearchHit[] hits, ActionListener<Void> listener) {
        Set<String> sourceIds = new LinkedHashSet<>();
        for (SearchHit hit : hits) {
            sourceIds.add(sourceIdOf(hit));
        }
        MultiGetRequest sources = new MultiGetRequest().realtime(true);
        FetchSourceContext summaryOnly = new FetchSourceContext(true, new String[] { SUMMARY }, null);
        sourceIds.forEach(id -> sources.add(new MultiGetRequest.Item(report.sourceIndex, id).fetchSourceContext(summaryOnly)));
        client.multiGet(sources, ActionListener.wrap(response -> {
            Map<String, Map<?, ?>> summaries = new HashMap<>();
            for (MultiGetItemResponse item : response.getResponses()) {
                if (item.isFailed()) {
                    throw item.getFailure().getFailure();
                }
                if (item.getResponse().isExists() && item.getResponse().getSourceAsMap().get(SUMMARY) instanceof Map<?, ?> s
                    && chunkIndex.equals(s.get("target_index"))) {
                    summaries.put(item.getId(), s);
                }
            }
            List<String> delete = new ArrayList<>();
            for (SearchHit hit : hits) {
                Map<?, ?> summary = summaries.get(sourceIdOf(hit));
                if (summary == null) {
                    report.orphans.incrementAndGet();
                    delete.add(hit.getId());
                } else if (ordinalOf(hit) >= intOf(summary.get("parents"))) {
                    report.duplicates.incrementAndGet();
                    delete.add(hit.getId());
                }
            }
            deleteChunks(report, chunkIndex, delete, listener);
        }, listener::onFailure));
    }

    private void deleteChunks(Report report, String chunkIndex, List<String> ids, ActionListener<Void> listener) {
        if (ids.isEmpty() || report.dryRun) {
            listener.onResponse(null);
            return;
        }
        BulkRequest bulk = new BulkRequest();
        ids.forEach(id -> bulk.add(new DeleteRequest(chunkIndex, id)));
        client.bulk(bulk, ActionListener.wrap(response -> {
            for (BulkItemResponse item : response.getItems()) {
                if (item.isFailed()) {
                    report.fail(chunkIndex, item.getId(), "deleting the chunk failed: " + item.getFailureMessage(),
                        item.getFailure().getStatus());
                } else {
                    report.fixed.incrementAndGet();
                }
            }
            listener.onResponse(null);
        }, listener::onFailure));
    }

    private static String sourceIdOf(SearchHit hit) {
        Map<String, Object> source = hit.getSourceAsMap();
        if (source != null && source.get(ChunkDocuments.SOURCE_ID) instanceof String id) {
            return id;
        }
        int colon = hit.getId().lastIndexOf(':');
        return colon < 0 ? hit.getId() : hit.getId().substring(0, colon);
    }

    private static int ordinalOf(SearchHit hit) {
        Map<String, Object> source = hit.getSourceAsMap();
        if (source != null && source.get(ChunkDocuments.ORDINAL) instanceof Number n) {
            return n.intValue();
        }
        int colon = hit.getId().lastIndexOf(':');
        try {
            return Integer.parseInt(hit.getId().substring(colon + 1));
        } catch (NumberFormatException e) {
            return Integer.MAX_VALUE; // not a chunk id of ours: beyond every summary
        }
    }

    private static int intOf(Object value) {
        return value instanceof Number n ? n.intValue() : 0;
    }

    // ---- pass 2: source documents

    /** What pass 2 knows about one source document of a page. */
    private static final class SourceDoc {
        final String id;
        final String target;
        final int parents;
        final String summaryHash;
        final ChunkWriter writer;
        /** Hash of the text as stored now; null when the processor is unknown or the text is gone. */
        final String currentHash;
        final String text;
        int present;
        boolean mismatch;

        SourceDoc(String id, String target, int parents, String summaryHash, ChunkWriter writer, String text) {
            this.id = id;
            this.target = target;
            this.parents = parents;
            this.summaryHash = summaryHash;
            this.writer = writer;
            this.text = text;
            this.currentHash = text == null ? null : ChunkWriter.sourceHash(text);
        }
    }

    private void sourcePass(Report report, ActionListener<Void> listener) {
        Set<String> includes = new TreeSet<>(Set.of(SUMMARY));
        for (ChunkWriter p : writers.all()) {
            includes.add(p.field());
        }
        SearchRequest search = new SearchRequest(report.sourceIndex).scroll(KEEP_ALIVE).source(new SearchSourceBuilder()
            .size(SOURCE_PAGE).sort("_doc").query(QueryBuilders.existsQuery(SUMMARY + ".target_index"))
            .fetchSource(includes.toArray(String[]::new), null));
        Map<String, Object> resolved = new HashMap<>();
        scroll(search, (hits, l) -> checkSources(report, hits, resolved, l), listener);
    }

    private void checkSources(Report report, SearchHit[] hits, Map<String, Object> resolved, ActionListener<Void> listener) {
        Map<String, SourceDoc> docs = new LinkedHashMap<>();
        List<MultiGetRequest.Item> items = new ArrayList<>();
        for (SearchHit hit : hits) {
            Map<String, Object> source = hit.getSourceAsMap();
            if (!(source.get(SUMMARY) instanceof Map<?, ?> summary) || !(summary.get("target_index") instanceof String target)) {
                continue;
            }
            report.checked.incrementAndGet();
            ChunkWriter writer = resolve(report.sourceIndex, summary.get("pipeline"), target, resolved);
            String text = writer != null && source.get(writer.field()) instanceof String s && !s.isBlank() ? s : null;
            String hash = summary.get(ChunkDocuments.SOURCE_HASH) instanceof String h ? h : null;
            SourceDoc doc = new SourceDoc(hit.getId(), target, intOf(summary.get("parents")), hash, writer, text);
            docs.put(doc.id, doc);
            FetchSourceContext fields = new FetchSourceContext(true, hash != null
                ? new String[] { ChunkDocuments.SOURCE_HASH }
                : new String[] { ChunkDocuments.SOURCE_HASH, ChunkDocuments.TEXT, ChunkDocuments.START, ChunkDocuments.END }, null);
            for (int i = 0; i < doc.parents; i++) {
                items.add(new MultiGetRequest.Item(target, ChunkDocuments.chunkId(doc.id, i)).fetchSourceContext(fields));
            }
        }
        probe(docs, items, 0, ActionListener.wrap(v -> {
            List<SourceDoc> drifted = new ArrayList<>();
            for (SourceDoc doc : docs.values()) {
                if (doc.present < doc.parents) {
                    report.missing.incrementAndGet();
                    drifted.add(doc);
                } else if (isStale(doc)) {
                    report.stale.incrementAndGet();
                    drifted.add(doc);
                }
            }
            fixSources(report, drifted.iterator(), listener);
        }, listener::onFailure));
    }

    private static boolean isStale(SourceDoc doc) {
        if (doc.mismatch) {
            return true;
        }
        if (doc.writer == null) {
            return false; // the text field is unknown: only the chunks' own hashes were compared
        }
        return doc.currentHash == null ? doc.parents > 0 : doc.summaryHash != null && !doc.summaryHash.equals(doc.currentHash);
    }

    /** Realtime multi-gets of the expected chunks, {@link #MGET_BATCH} ids at a time. */
    private void probe(Map<String, SourceDoc> docs, List<MultiGetRequest.Item> items, int from, ActionListener<Void> listener) {
        if (from >= items.size()) {
            listener.onResponse(null);
            return;
        }
        MultiGetRequest mget = new MultiGetRequest().realtime(true);
        items.subList(from, Math.min(items.size(), from + MGET_BATCH)).forEach(mget::add);
        client.multiGet(mget, ActionListener.wrap(response -> {
            for (MultiGetItemResponse item : response.getResponses()) {
                // a failed item (e.g. the chunk index is gone) counts as an absent chunk
                if (item.isFailed() || !item.getResponse().isExists()) {
                    continue;
                }
                String chunkId = item.getId();
                SourceDoc doc = docs.get(chunkId.substring(0, chunkId.lastIndexOf(':')));
                doc.present++;
                Map<String, Object> chunk = item.getResponse().getSourceAsMap();
                String expected = doc.currentHash != null ? doc.currentHash : doc.summaryHash;
                if (chunk.get(ChunkDocuments.SOURCE_HASH) instanceof String h) {
                    doc.mismatch |= expected != null && !expected.equals(h);
                } else if (doc.text != null) {
                    doc.mismatch |= !matchesText(doc.text, chunk);
                }
            }
            probe(docs, items, from + MGET_BATCH, listener);
        }, listener::onFailure));
    }

    /** A chunk without {@code source_hash} matches when its text is the source text at its offsets. */
    private static boolean matchesText(String text, Map<String, Object> chunk) {
        if (!(chunk.get(ChunkDocuments.START) instanceof Number s) || !(chunk.get(ChunkDocuments.END) instanceof Number e)) {
            return false;
        }
        int start = s.intValue();
        int end = e.intValue();
        return 0 <= start && start <= end && end <= text.length() && text.substring(start, end).equals(chunk.get(ChunkDocuments.TEXT));
    }

    /** One document at a time: a fix may embed, and the inference queue is shared with ingest. */
    private void fixSources(Report report, Iterator<SourceDoc> docs, ActionListener<Void> listener) {
        if (!docs.hasNext()) {
            listener.onResponse(null);
            return;
        }
        SourceDoc doc = docs.next();
        ActionListener<Void> next = ActionListener.wrap(v -> fixSources(report, docs, listener), listener::onFailure);
        if (report.dryRun) {
            next.onResponse(null);
            return;
        }
        if (doc.writer == null) {
            report.fail(report.sourceIndex, doc.id, String.format(Locale.ROOT,
                "no pipeline has a [%s] processor writing to [%s]; cannot rewrite the chunks",
                "multi_granular_chunking", doc.target));
            next.onResponse(null);
            return;
        }
        rewrite(report, doc, ActionListener.wrap(fixed -> {
            if (fixed) {
                report.fixed.incrementAndGet();
            }
            next.onResponse(null);
        }, e -> {
            report.fail(report.sourceIndex, doc.id, e.getMessage(), ExceptionsHelper.status(ExceptionsHelper.unwrapCause(e)));
            next.onResponse(null);
        }));
    }

    /**
     * Rewrites the chunks from the document as stored now and stores the summary that goes with them, without running
     * pipelines again ({@code _none}) and only if the document has not changed since it was read.
     */
    private void rewrite(Report report, SourceDoc doc, ActionListener<Boolean> listener) {
        client.get(new GetRequest(report.sourceIndex, doc.id).realtime(true), ActionListener.wrap(current -> {
            if (!current.isExists()) {
                listener.onResponse(false); // deleted meanwhile: its chunks went with it
                return;
            }
            Map<String, Object> source = current.getSourceAsMap();
            doc.writer.rewrite(report.sourceIndex, doc.id, new LinkedHashMap<>(source), ActionListener.wrap(summary -> {
                Map<String, Object> updated = new LinkedHashMap<>(source);
                if (summary == null) {
                    updated.remove(SUMMARY);
                } else {
                    updated.put(SUMMARY, summary);
                }
                IndexRequest index = new IndexRequest(report.sourceIndex).id(doc.id).source(updated)
                    .setPipeline(IngestService.NOOP_PIPELINE_NAME).setIfSeqNo(current.getSeqNo()).setIfPrimaryTerm(current.getPrimaryTerm());
                client.index(index, ActionListener.wrap(r -> listener.onResponse(true), listener::onFailure));
            }, listener::onFailure));
        }, listener::onFailure));
    }

    // ---- pipelines

    /** {@link ChunkWriters#resolve}, cached per run. */
    private ChunkWriter resolve(String sourceIndex, Object pipeline, String target, Map<String, Object> cache) {
        Object hit = cache.computeIfAbsent(pipeline + "|" + target, k -> {
            ChunkWriter found = writers.resolve(sourceIndex, pipeline, target);
            return found == null ? Boolean.FALSE : found;
        });
        return hit instanceof ChunkWriter w ? w : null;
    }

    // ---- scrolling

    /** Feeds the pages of a scroll to {@code page} one after the other, then clears the scroll. */
    private void scroll(SearchRequest search, BiConsumer<SearchHit[], ActionListener<Void>> page, ActionListener<Void> listener) {
        client.search(search, ActionListener.wrap(r -> nextPage(r, page, listener), listener::onFailure));
    }

    private void nextPage(SearchResponse response, BiConsumer<SearchHit[], ActionListener<Void>> page, ActionListener<Void> listener) {
        String scrollId = response.getScrollId();
        SearchHit[] hits = response.getHits().getHits();
        ActionListener<Void> done = ActionListener.runAfter(listener, () -> {
            if (scrollId != null) {
                ClearScrollRequest clear = new ClearScrollRequest();
                clear.addScrollId(scrollId);
                client.clearScroll(clear, ActionListener.wrap(r -> {}, e -> {}));
            }
        });
        if (hits.length == 0) {
            done.onResponse(null);
            return;
        }
        try {
            page.accept(hits, ActionListener.wrap(
                v -> client.searchScroll(new SearchScrollRequest(scrollId).scroll(KEEP_ALIVE), ActionListener.wrap(
                    next -> nextPage(next, page, listener), done::onFailure)),
                done::onFailure));
        } catch (Exception e) {
            done.onFailure(e);
        }
    }
}

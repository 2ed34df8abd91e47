package io.strata.chunkindex.reconcile;

import io.strata.chunkindex.SourceSummary;
import io.strata.chunkindex.TestClusterService;
import io.strata.chunkindex.Captured;
import io.strata.chunkindex.ChunkDocuments;
import io.strata.chunkindex.InMemoryClient;
import io.strata.chunkindex.lifecycle.Rechunker;
import io.strata.chunkindex.registry.ChunkIndexJanitorTests;
import io.strata.chunkindex.registry.ChunkIndexRegistry;
import io.strata.chunkindex.setup.ChunkIndexSetup;
import io.strata.chunkindex.setup.WriteChecks;
import io.strata.chunkindex.store.ChunkCommit;
import io.strata.chunkindex.store.ChunkStore;
import io.strata.chunkindex.store.Slicing;
import io.strata.chunkindex.write.ChunkWriter;
import io.strata.chunkindex.write.ChunkWriters;
import io.strata.stats.StrataStats;
import org.opensearch.action.admin.indices.delete.DeleteIndexRequest;
import org.opensearch.action.bulk.BulkRequest;
import org.opensearch.action.get.GetAction;
import org.opensearch.action.index.IndexRequest;
import org.opensearch.action.search.SearchRequest;
import org.opensearch.action.search.SearchScrollRequest;
import org.opensearch.common.settings.Settings;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.rest.RestStatus;
import org.opensearch.test.OpenSearchTestCase;
import org.opensearch.threadpool.TestThreadPool;
import org.opensearch.threadpool.ThreadPool;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static io.strata.chunkindex.TestClusterService.chunkIndex;
import static io.strata.chunkindex.TestClusterService.index;
import static io.strata.chunkindex.TestClusterService.state;
import static org.hamcrest.Matchers.containsString;

/**
 * What a reconcile run finds and fixes, over an in-memory client holding a source index and its chunk index: chunks whose
 * source document is gone or points elsewhere are orphans, chunks at or beyond the summary's {@code parents} are
 * duplicates (both deleted unless a dry run); a source document with a chunk absent is missing, one whose text or chunks
 * carry another hash (or, before hashes, whose chunk texts are not its text at their offsets) is stale; a dry run changes
 * nothing; rewrites are versioned with the document's sequence number and its summary written only if the document is still
 * that version (a concurrent write wins); pages are searches after the last {@code _seq_no}, no scroll. For a deleted source
 * index, its registered chunk index goes only while the source is still gone.
 */
public class ReconcilerTests extends OpenSearchTestCase {
    private static final String SOURCE = "docs";
    private static final String CHUNKS = "docs-chunks";
    private static final String FIELD = "body";

    private ThreadPool threadPool;
    private TestClusterService clusterService;
    private InMemoryClient client;
    /** What {@link ChunkWriters#resolve} answers for {@link #CHUNKS}; null: no pipeline writes there. */
    private ChunkWriter writer;
    private Reconciler reconciler;
    private Rechunker rechunker;
    private final ChunkIndexRegistry registry = new ChunkIndexRegistry();
    private ChunkIndexSetup setup;
    private ChunkStore store;

    @Override
    public void setUp() throws Exception {
        super.setUp();
        threadPool = new TestThreadPool(getTestName());
        clusterService = new TestClusterService(Settings.EMPTY, threadPool);
        setState(state(index(SOURCE, "src-1"), ChunkIndexJanitorTests.chunksOf(CHUNKS, "c-1", SOURCE, "src-1")));
        client = new InMemoryClient(threadPool, clusterService);
        ChunkWriters writers = new ChunkWriters() {
            @Override
            public ChunkWriter resolve(String sourceIndex, Map<?, ?> summary, String target) {
                return target.equals(CHUNKS) ? writer : null;
            }

            @Override
            public List<ChunkWriter> all() {
                return writer == null ? List.of() : List.of(writer);
            }
        };
        setup = new ChunkIndexSetup(client, clusterService, registry,
            () -> new org.opensearch.cluster.metadata.IndexNameExpressionResolver(threadPool.getThreadContext()));
        store = new ChunkStore(client, new StrataStats());
        rechunker = new Rechunker(setup, new ChunkCommit(store, Slicing.DEFAULTS), () -> writers, client, new StrataStats());
        // the caller sees everything here; the check itself runs against the real security plugin (SecuredIngestIT)
        reconciler = new Reconciler(client, clusterService, setup, store, rechunker, () -> writers, (fields, l) -> l.onResponse(null));
    }

    private void setState(org.opensearch.cluster.ClusterState state) {
        clusterService.setState(state);
        registry.apply(state.metadata());
    }

    @Override
    public void tearDown() throws Exception {
        ThreadPool.terminate(threadPool, 10, TimeUnit.SECONDS);
        super.tearDown();
    }

    /** A writer of {@link #FIELD} to {@link #CHUNKS}; only its text field and its delete path (blank text) are used here. */
    private void withWriter() {
        writer = new ChunkWriter(FIELD, CHUNKS, null, List.of(), null, new ChunkWriter.Services(store, setup, null, null,
            new StrataStats(), Slicing.DEFAULTS));
    }

    /** A source document chunked into {@code parents} parents from {@code chunkedText} (null: a summary without hash). */
    private void source(String id, String text, int parents, String chunkedText, String target) {
        Map<String, Object> summary = new LinkedHashMap<>();
        summary.put("target_index", target);
        summary.put("parents", parents);
        if (chunkedText != null) {
            summary.put(ChunkDocuments.SOURCE_HASH, SourceSummary.sourceHash(chunkedText));
        }
        Map<String, Object> doc = new LinkedHashMap<>();
        if (text != null) {
            doc.put(FIELD, text);
        }
        doc.put(SourceSummary.FIELD, summary);
        client.put(SOURCE, id, doc);
    }

    /** Chunk {@code ordinal} of {@code sourceId}, cut from {@code chunkedText} (null: written before hashes existed). */
    private void chunk(String sourceId, int ordinal, String chunkedText, String text, int start, int end) {
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put(ChunkDocuments.SOURCE_ID, sourceId);
        doc.put(ChunkDocuments.SOURCE_INDEX, SOURCE);
        doc.put(ChunkDocuments.ORDINAL, ordinal);
        doc.put(ChunkDocuments.TEXT, text);
        doc.put(ChunkDocuments.START, start);
        doc.put(ChunkDocuments.END, end);
        if (chunkedText != null) {
            doc.put(ChunkDocuments.SOURCE_HASH, SourceSummary.sourceHash(chunkedText));
        }
        client.put(CHUNKS, ChunkDocuments.chunkId(sourceId, ordinal), doc);
    }

    private void chunk(String sourceId, int ordinal, String chunkedText) {
        chunk(sourceId, ordinal, chunkedText, "…", 0, 1);
    }

    private ReconcileReport reconcile(boolean dryRun) {
        Captured<ReconcileReport> report = new Captured<>();
        reconciler.reconcile(SOURCE, dryRun, report);
        return report.value();
    }

    /** Documents of every kind of drift, with no pipeline known for the chunk index. */
    private void driftOfEveryKind() {
        source("ok", "a b", 2, "a b", CHUNKS);
        chunk("ok", 0, "a b");
        chunk("ok", 1, "a b");
        source("missing", "c d", 2, "c d", CHUNKS);
        chunk("missing", 0, "c d");
        source("stale", "e f", 1, "e f", CHUNKS);
        chunk("stale", 0, "e f, as it was once");
        source("duplicate", "g h", 1, "g h", CHUNKS);
        chunk("duplicate", 0, "g h");
        chunk("duplicate", 1, "g h");
        chunk("gone", 0, "i j"); // its source document was deleted
        source("moved", "k l", 0, "k l", "elsewhere-chunks"); // now chunked into another index
        chunk("moved", 0, "k l");
        Map<String, Object> unchunked = new LinkedHashMap<>();
        unchunked.put(FIELD, "m n");
        client.put(SOURCE, "unchunked", unchunked); // no summary any more
        chunk("unchunked", 0, "m n");
    }

    public void testReconcile_dryRun_countsEveryKindOfDrift_andChangesNothing() {
        driftOfEveryKind();
        List<String> chunksBefore = client.ids(CHUNKS);

        ReconcileReport report = reconcile(true);

        assertEquals(List.of(CHUNKS), report.chunkIndices);
        assertEquals("source documents with a summary", 5, report.checked.get());
        assertEquals(3, report.orphans.get());
        assertEquals(1, report.duplicates.get());
        assertEquals(1, report.missing.get());
        assertEquals(1, report.stale.get());
        assertEquals(0, report.fixed.get());
        assertEquals(List.of(), report.failures);
        assertEquals(chunksBefore, client.ids(CHUNKS));
        assertEquals(List.of(), client.requests(BulkRequest.class));
        assertEquals(List.of(), client.requests(IndexRequest.class));
    }

    public void testReconcile_deletesOrphansAndDuplicates_andReportsWhatItCannotRewrite() {
        driftOfEveryKind();

        ReconcileReport report = reconcile(false);

        assertEquals(List.of("duplicate:0", "missing:0", "ok:0", "ok:1", "stale:0"), client.ids(CHUNKS).stream().sorted().toList());
        assertEquals("3 orphans and 1 duplicate deleted", 4, report.fixed.get());
        assertEquals(2, report.failures.size());
        for (Map<String, Object> failure : report.failures) {
            assertThat(failure.get("reason").toString(),
                containsString("no pipeline has a [multi_granular_chunking] processor writing to [docs-chunks]"));
        }
        assertEquals(List.of("missing", "stale"), report.failures.stream().map(f -> f.get("id")).sorted().toList());
        assertEquals(RestStatus.OK, report.status());
    }

    public void testReconcile_withTheWritersField_comparesTheTextAsStoredNow() {
        withWriter();
        source("edited", "the new text", 1, "the old text", CHUNKS); // edited without its pipeline
        chunk("edited", 0, "the old text");
        source("legacy", "alpha beta", 2, null, CHUNKS); // chunked before hashes existed: compared by content
        chunk("legacy", 0, null, "alpha", 0, 5);
        chunk("legacy", 1, null, "beta", 6, 10);
        source("legacy-edited", "alpha gamma", 2, null, CHUNKS);
        chunk("legacy-edited", 0, null, "alpha", 0, 5);
        chunk("legacy-edited", 1, null, "beta", 6, 10);
        source("emptied", "   ", 1, "x", CHUNKS); // its text is gone, its chunk is not
        chunk("emptied", 0, "x");
        source("fine", "same", 1, "same", CHUNKS);
        chunk("fine", 0, "same");

        ReconcileReport report = reconcile(true);

        assertEquals(5, report.checked.get());
        assertEquals(0, report.missing.get());
        assertEquals("edited, legacy-edited and emptied", 3, report.stale.get());
    }

    public void testReconcile_rewritesADocumentWhoseTextIsGone_dropsItsChunksAndItsSummary() {
        withWriter();
        source("emptied", "", 2, "x y", CHUNKS);
        chunk("emptied", 0, "x y");
        chunk("emptied", 1, "x y");

        ReconcileReport report = reconcile(false);

        assertEquals(1, report.stale.get());
        assertEquals(1, report.fixed.get());
        assertEquals(List.of(), client.ids(CHUNKS));
        assertFalse(client.get(SOURCE, "emptied").containsKey(SourceSummary.FIELD));
        IndexRequest write = client.requests(IndexRequest.class).get(0);
        assertEquals("_none", write.getPipeline());
        assertTrue("guarded by the sequence number it read", write.ifSeqNo() >= 0);
    }

    public void testReconcile_whenTheDocumentChangesBeforeItsSummaryIsStored_theConcurrentWriteWins_andNothingIsUndone() {
        withWriter();
        source("emptied", "", 1, "x", CHUNKS);
        chunk("emptied", 0, "x");
        // the rewrite reads the document; a write lands right after that read (a new sequence number)
        client.on(GetAction.INSTANCE, (request, listener) -> client.answer(GetAction.INSTANCE, request, ActionListener.wrap(read -> {
            client.put(SOURCE, "emptied", Map.of(FIELD, "written meanwhile"));
            listener.onResponse(read);
        }, listener::onFailure)));

        ReconcileReport report = reconcile(false);

        assertEquals("superseded by the newer write: not counted as fixed", 0, report.fixed.get());
        assertEquals(List.of(), report.failures);
        assertEquals(Map.of(FIELD, "written meanwhile"), client.get(SOURCE, "emptied"));
        assertEquals(RestStatus.OK, report.status());
    }

    /** A document an on_failure handler stored after its chunking failed: the summary the processor gave it, no chunks. */
    private Map<String, Object> failedChunking(String id, String text) {
        Map<String, Object> summary = new LinkedHashMap<>();
        summary.put("parents", 0);
        summary.put("children", 0);
        summary.put("target_index", CHUNKS);
        summary.put("field", FIELD);
        summary.put(SourceSummary.FAILURE, "[model_id] [m] ml-commons did not answer within [2s]");
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put(FIELD, text);
        doc.put(SourceSummary.FIELD, summary);
        client.put(SOURCE, id, doc);
        return doc;
    }

    public void testReconcile_countsADocumentWhoseChunkingFailed_asMissing_andChunksLeftOfItsOlderTextAsDuplicates() {
        failedChunking("failed", "a text the model could not embed");
        failedChunking("rewritten", "a new text whose chunking failed");
        chunk("rewritten", 0, "the text it had before"); // left when deleting it failed too

        ReconcileReport report = reconcile(true);

        assertEquals(2, report.checked.get());
        assertEquals("both are without their chunks", 2, report.missing.get());
        assertEquals(1, report.duplicates.get());
        assertEquals(0, report.orphans.get() + report.stale.get());
    }

    public void testReconcile_rewritesADocumentWhoseChunkingFailed_throughItsPipelinesWriter() {
        failedChunking("failed", "a text the model could not embed");

        ReconcileReport report = reconcile(false);

        assertEquals(1, report.missing.get());
        // no pipeline writes to the chunk index here: the rewrite was attempted, and says why it could not be done
        assertEquals(1, report.failures.size());
        assertThat(report.failures.get(0).get("reason").toString(),
            containsString("no pipeline has a [multi_granular_chunking] processor writing to [docs-chunks]"));
    }

    public void testRechunkAfterAWrite_keepsTheSummaryOfAFailedChunking_andLeavesTheDocumentWithoutChunks() {
        Map<String, Object> doc = failedChunking("failed", "a text the model could not embed");
        chunk("failed", 0, "the text it had before");
        chunk("failed", 1, "the text it had before");

        Captured<Rechunker.Outcome> outcome = new Captured<>();
        rechunker.rechunk(new ChunkStore.StoredSource(SOURCE, "failed", null, doc, 7, 1), index(SOURCE, "src-1").getIndex(),
            List.of(CHUNKS), new WriteChecks(setup), outcome);

        assertEquals(Rechunker.Outcome.DONE, outcome.value());
        assertEquals("its chunks of the older text are deleted", List.of(), client.ids(CHUNKS));
        assertEquals("the summary stays for _reconcile (no pipeline runs here, so cutting again would fail the write)",
            doc, client.get(SOURCE, "failed"));
        assertEquals(List.of(), client.requests(IndexRequest.class));
    }

    public void testReconcile_pagesThroughMoreSourcesThanOnePage_bySeqNo_withoutAScroll() {
        int docs = Reconciler.SOURCE_PAGE * 2 + 50;
        for (int i = 0; i < docs; i++) {
            String id = "doc-" + i;
            source(id, "text " + i, 1, "text " + i, CHUNKS);
            if (i != 230) {
                chunk(id, 0, "text " + i);
            }
        }

        ReconcileReport report = reconcile(true);

        assertEquals(docs, report.checked.get());
        assertEquals(1, report.missing.get());
        assertEquals(0, report.orphans.get() + report.duplicates.get() + report.stale.get());
        assertEquals("no scroll to expire", List.of(), client.requests(SearchScrollRequest.class));
        List<SearchRequest> sourcePages = client.requests(SearchRequest.class).stream()
            .filter(r -> r.indices()[0].equals(SOURCE) && r.source().sorts() != null).toList();
        assertEquals("three pages of at most 100 (100, 100, 50)", 3, sourcePages.size());
        assertTrue(sourcePages.stream().allMatch(r -> r.scroll() == null));
    }

    // ---- a deleted source index

    private ReconcileReport reconcileDeleted(boolean dryRun) {
        Captured<ReconcileReport> report = new Captured<>();
        reconciler.reconcileDeleted(SOURCE, List.of(CHUNKS), dryRun, report);
        return report.value();
    }

    public void testReconcileDeleted_deletesTheWholeChunkIndexWhileTheSourceIsStillGone() {
        setState(state(ChunkIndexJanitorTests.chunksOf(CHUNKS, "c-1", SOURCE, "src-1")));
        for (int i = 0; i < 3; i++) {
            chunk("d", i, "x");
        }

        assertEquals(3, reconcileDeleted(true).orphans.get());
        assertEquals(List.of(), client.requests(DeleteIndexRequest.class));

        ReconcileReport report = reconcileDeleted(false);
        assertTrue(report.sourceDeleted);
        assertEquals(3, report.orphans.get());
        assertEquals(3, report.fixed.get());
        assertEquals(List.of(CHUNKS), report.deletedIndices);
        assertFalse(clusterService.state().metadata().hasIndex(CHUNKS));
    }

    public void testReconcileDeleted_whenTheSourceWasReCreatedMeanwhile_keepsTheChunkIndex_andAnswersConflict() {
        chunk("d", 0, "x"); // the state still holds [docs]: it was created again

        ReconcileReport report = reconcileDeleted(false);

        assertEquals(0, report.fixed.get());
        assertTrue(clusterService.state().metadata().hasIndex(CHUNKS));
        assertThat(report.failures.get(0).get("reason").toString(), containsString("[docs] was re-created while reconciling"));
        assertEquals(RestStatus.CONFLICT, report.status());
    }

    public void testReconcileDeleted_deletesTheChunkIndexWithEverythingInIt_forItServedThatSourceOnly() {
        setState(state(ChunkIndexJanitorTests.chunksOf(CHUNKS, "c-1", SOURCE, "src-1")));
        chunk("d", 0, "x");
        chunk("d", 1, "x");
        client.put(CHUNKS, "by-hand", Map.of(ChunkDocuments.SOURCE_INDEX, "news"));

        ReconcileReport report = reconcileDeleted(false);

        assertEquals(3, report.orphans.get());
        assertEquals(3, report.fixed.get());
        assertEquals(List.of(CHUNKS), report.deletedIndices);
    }

    // ---- the report's status

    public void testReportStatus_isTheFailuresStatus_onlyWhenNothingWasFixedAndAllFailedAlike() {
        ReconcileReport forbidden = new ReconcileReport(SOURCE, List.of(CHUNKS), false);
        forbidden.fail(CHUNKS, "a", "no", RestStatus.FORBIDDEN);
        forbidden.fail(CHUNKS, "b", "no", RestStatus.FORBIDDEN);
        assertEquals(RestStatus.FORBIDDEN, forbidden.status());

        forbidden.fixed.incrementAndGet();
        assertEquals(RestStatus.OK, forbidden.status());

        ReconcileReport mixed = new ReconcileReport(SOURCE, List.of(CHUNKS), false);
        mixed.fail(CHUNKS, "a", "no", RestStatus.FORBIDDEN);
        mixed.fail(CHUNKS, "b", "gone", RestStatus.NOT_FOUND);
        assertEquals(RestStatus.OK, mixed.status());

        ReconcileReport withoutStatus = new ReconcileReport(SOURCE, List.of(CHUNKS), false);
        withoutStatus.fail(CHUNKS, "a", "no pipeline");
        assertEquals(RestStatus.OK, withoutStatus.status());
    }

    public void testReport_keepsTheFirstHundredFailures_andCountsTheRest() {
        ReconcileReport report = new ReconcileReport(SOURCE, List.of(CHUNKS), true);
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < ReconcileReport.MAX_FAILURES + 5; i++) {
            ids.add("d" + i);
            report.fail(CHUNKS, "d" + i, "failed");
        }
        assertEquals(ReconcileReport.MAX_FAILURES, report.failures.size());
        assertEquals(ReconcileReport.MAX_FAILURES + 5, report.failureCount.get());
        assertEquals(ids.subList(0, ReconcileReport.MAX_FAILURES), report.failures.stream().map(f -> f.get("id")).toList());
    }
}

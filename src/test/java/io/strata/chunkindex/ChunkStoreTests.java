package io.strata.chunkindex;

import io.strata.model.ModelInfo;
import io.strata.model.ModelRef;
import io.strata.stats.StrataStats;
import org.opensearch.OpenSearchSecurityException;
import org.opensearch.action.admin.indices.create.CreateIndexAction;
import org.opensearch.action.admin.indices.create.CreateIndexRequest;
import org.opensearch.action.admin.indices.mapping.put.PutMappingAction;
import org.opensearch.action.admin.indices.mapping.put.PutMappingRequest;
import org.opensearch.action.bulk.BulkAction;
import org.opensearch.action.bulk.BulkRequest;
import org.opensearch.action.delete.DeleteRequest;
import org.opensearch.action.get.MultiGetRequest;
import org.opensearch.action.index.IndexRequest;
import org.opensearch.cluster.ClusterState;
import org.opensearch.cluster.metadata.IndexMetadata;
import org.opensearch.cluster.metadata.Metadata;
import org.opensearch.common.settings.Settings;
import org.opensearch.common.util.concurrent.ThreadContext;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.action.ActionResponse;
import org.opensearch.core.concurrency.OpenSearchRejectedExecutionException;
import org.opensearch.core.rest.RestStatus;
import org.opensearch.index.IndexNotFoundException;
import org.opensearch.test.OpenSearchTestCase;
import org.opensearch.threadpool.TestThreadPool;
import org.opensearch.threadpool.ThreadPool;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import static io.strata.chunkindex.TestClusterService.chunkIndex;
import static io.strata.chunkindex.TestClusterService.index;
import static io.strata.chunkindex.TestClusterService.state;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.instanceOf;

/**
 * What the chunk store decides and writes, over an in-memory client and a cluster state set by hand: {@code ensureIndex}
 * creates the chunk index or claims it for the current incarnation of the source index before any chunk is written,
 * refuses a target that holds another source's chunks or another model's vectors, and runs one check for concurrent
 * callers, each continuing under its own thread context; {@code replace} writes in slices, removes the chunks beyond the
 * new count and leaves nothing of a version that failed half-way; {@code deleteFrom}, {@code unmet} and
 * {@code storedVectors} read the chunks by consecutive ids.
 */
public class ChunkStoreTests extends OpenSearchTestCase {
    private static final String SOURCE = "docs";
    private static final String CHUNKS = "docs-chunks";
    private static final ModelInfo E5 = new ModelInfo(ModelRef.embedded("e5-small-v2"), "intfloat/e5-small-v2", 384);
    private static final ModelInfo BGE = new ModelInfo(ModelRef.embedded("bge-small"), "BAAI/bge-small-en-v1.5", 512);

    private ThreadPool threadPool;
    private TestClusterService clusterService;
    private InMemoryClient client;
    private ChunkStore store;

    @Override
    public void setUp() throws Exception {
        super.setUp();
        threadPool = new TestThreadPool(getTestName());
        clusterService = new TestClusterService(Settings.EMPTY, threadPool);
        client = new InMemoryClient(threadPool, clusterService);
        store = new ChunkStore(client, clusterService, new StrataStats());
    }

    @Override
    public void tearDown() throws Exception {
        ThreadPool.terminate(threadPool, 10, TimeUnit.SECONDS);
        super.tearDown();
    }

    private Captured<Void> ensure(ModelInfo model) {
        Captured<Void> done = new Captured<>();
        store.ensureIndex(CHUNKS, SOURCE, model, done);
        return done;
    }

    private static ChunkIndexMeta metaOf(Map<String, Object> mapping) {
        return ChunkIndexMeta.ofMapping(mapping);
    }

    private ChunkIndexMeta storedMeta() {
        return ChunkIndexMeta.of(clusterService.state().metadata().index(CHUNKS));
    }

    private void addIndex(IndexMetadata index) {
        ClusterState s = clusterService.state();
        clusterService.setState(ClusterState.builder(s).metadata(Metadata.builder(s.metadata()).put(index, false)).build());
    }

    // ---- ensureIndex

    public void testEnsureIndex_withoutAChunkIndex_createsOneRecordingTheSourceIncarnation_andChecksOnlyOnce() {
        clusterService.setState(state(index(SOURCE, "src-1")));

        ensure(E5).assertSucceeded();

        List<CreateIndexRequest> creates = client.requests(CreateIndexRequest.class);
        assertEquals(1, creates.size());
        assertEquals(CHUNKS, creates.get(0).index());
        assertTrue(creates.get(0).settings().getAsBoolean("index.knn", false));
        ChunkIndexMeta meta = metaOf(InMemoryClient.parse(creates.get(0).mappings()));
        assertEquals(SOURCE, meta.sourceIndex());
        assertEquals("src-1", meta.sourceUuid());
        assertEquals(ChunkDocuments.modelMeta(E5), meta.model());

        int before = client.requests.size();
        ensure(E5).assertSucceeded();
        ensure(E5).assertSucceeded();
        assertEquals("checked once for this index, mapping and source incarnation", before, client.requests.size());
    }

    public void testEnsureIndex_beforeTheSourceIndexExists_recordsNa_andClaimsTheIndexOnceTheSourceExists() {
        ensure(E5).assertSucceeded();
        assertEquals(IndexMetadata.INDEX_UUID_NA_VALUE, storedMeta().sourceUuid());

        addIndex(index(SOURCE, "src-1")); // the bulk creates the source index after running its pipelines
        ensure(E5).assertSucceeded();

        List<PutMappingRequest> puts = client.requests(PutMappingRequest.class);
        assertEquals(1, puts.size());
        assertEquals("src-1", storedMeta().sourceUuid());
        assertEquals("the other keys stay", ChunkDocuments.modelMeta(E5), storedMeta().model());
        assertEquals(1, client.requests(CreateIndexRequest.class).size());
    }

    public void testEnsureIndex_whenTheSourceWasReCreated_claimsTheChunkIndexForTheNewIncarnation() {
        clusterService.setState(state(index(SOURCE, "src-2"), chunkIndex(CHUNKS, "c-1", ChunkDocuments.mapping(SOURCE, "src-1", E5))));

        ensure(E5).assertSucceeded();

        assertEquals(1, client.requests(PutMappingRequest.class).size());
        assertEquals(List.of(), client.requests(CreateIndexRequest.class));
        assertEquals("src-2", storedMeta().sourceUuid());
        assertEquals("the same chunk index", "c-1", clusterService.state().metadata().index(CHUNKS).getIndexUUID());
    }

    public void testEnsureIndex_whenTheJanitorDeletedTheChunkIndexBeforeTheClaim_createsAFreshOne() {
        clusterService.setState(state(index(SOURCE, "src-2"), chunkIndex(CHUNKS, "c-1", ChunkDocuments.mapping(SOURCE, "src-1", E5))));
        client.on(PutMappingAction.INSTANCE, (request, listener) -> {
            clusterService.setState(state(index(SOURCE, "src-2"))); // the janitor's delete came first on the cluster manager
            throw new IndexNotFoundException(CHUNKS);
        });

        ensure(E5).assertSucceeded();

        assertEquals(1, client.requests(CreateIndexRequest.class).size());
        IndexMetadata fresh = clusterService.state().metadata().index(CHUNKS);
        assertNotEquals("c-1", fresh.getIndexUUID());
        assertEquals("src-2", ChunkIndexMeta.of(fresh).sourceUuid());
    }

    public void testEnsureIndex_whenTheTargetHoldsAnotherSourcesChunks_failsNamingThatSource_andWritesNothing() {
        clusterService.setState(state(index(SOURCE, "src-1"), chunkIndex(CHUNKS, "c-1", ChunkDocuments.mapping("news", "n-1", E5))));

        Exception e = ensure(E5).failure();

        assertThat(e, instanceOf(IllegalArgumentException.class));
        assertThat(e.getMessage(), containsString("[target_index] [docs-chunks] already holds the chunks of index [news]"));
        assertEquals(List.of(), client.requests);
    }

    public void testEnsureIndex_whenTheTargetHoldsVectorsOfAnotherModel_failsNamingBothModels() {
        clusterService.setState(state(index(SOURCE, "src-1"), chunkIndex(CHUNKS, "c-1", ChunkDocuments.mapping(SOURCE, "src-1", E5))));

        String otherModel = ensure(BGE).failure().getMessage();
        assertThat(otherModel, containsString("holds vectors of model [e5-small-v2] (384 dims)"));
        assertThat(otherModel, containsString("this pipeline embeds with model [bge-small] (512 dims)"));

        assertThat(ensure(null).failure().getMessage(), containsString("this pipeline embeds with no model"));
        assertEquals(List.of(), client.requests);
    }

    public void testEnsureIndex_withAModel_onAnIndexCreatedWithoutKnn_failsSayingHowToCreateIt() {
        clusterService.setState(state(index(SOURCE, "src-1"), index(CHUNKS, "c-1")));

        assertThat(ensure(E5).failure().getMessage(), containsString("was created without [index.knn: true]"));
        assertEquals(List.of(), client.requests);
    }

    public void testEnsureIndex_onAnIndexTheUserCreated_addsTheChunkMapping() {
        clusterService.setState(state(index(SOURCE, "src-1"), index(CHUNKS, "c-1", null, Settings.builder().put("index.knn", true)
            .build())));

        ensure(E5).assertSucceeded();

        List<PutMappingRequest> puts = client.requests(PutMappingRequest.class);
        assertEquals(1, puts.size());
        Map<String, Object> mapping = InMemoryClient.parse(puts.get(0).source());
        assertEquals(ChunkDocuments.mapping(SOURCE, "src-1", E5).keySet(), mapping.keySet());
        assertEquals("src-1", metaOf(mapping).sourceUuid());
    }

    public void testEnsureIndex_withAModel_onAChunkIndexWrittenWithoutVectors_addsTheVectorFields() {
        clusterService.setState(state(index(SOURCE, "src-1"), chunkIndex(CHUNKS, "c-1", ChunkDocuments.mapping(SOURCE, "src-1", null))));

        ensure(E5).assertSucceeded();

        assertEquals(1, client.requests(PutMappingRequest.class).size());
        assertEquals(ChunkDocuments.modelMeta(E5), storedMeta().model());
    }

    public void testEnsureIndex_onItsOwnChunkIndexOfTheCurrentIncarnation_writesNothing() {
        clusterService.setState(state(index(SOURCE, "src-1"), chunkIndex(CHUNKS, "c-1", ChunkDocuments.mapping(SOURCE, "src-1", E5))));

        ensure(E5).assertSucceeded();
        ensure(E5).assertSucceeded();

        assertEquals(List.of(), client.requests);
    }

    public void testEnsureIndex_concurrentCallersShareOneCheck_andEachContinuesInItsOwnThreadContext() {
        clusterService.setState(state(index(SOURCE, "src-1")));
        List<Runnable> held = new ArrayList<>();
        client.on(CreateIndexAction.INSTANCE, (request, listener) -> held.add(() -> answer(CreateIndexAction.INSTANCE, request, listener)));
        ThreadContext context = threadPool.getThreadContext();
        List<String> users = List.of("ann", "bob", "cid");
        List<Captured<Void>> answers = new ArrayList<>();
        String[] seenBy = new String[users.size()];
        for (int i = 0; i < users.size(); i++) {
            int caller = i;
            try (ThreadContext.StoredContext ignored = context.stashContext()) {
                context.putHeader("user", users.get(i));
                Captured<Void> answer = new Captured<>();
                answers.add(answer);
                store.ensureIndex(CHUNKS, SOURCE, E5, ActionListener.wrap(v -> {
                    seenBy[caller] = context.getHeader("user");
                    answer.onResponse(v);
                }, answer::onFailure));
            }
        }
        assertEquals("one check for all three", 1, held.size());
        assertTrue(answers.stream().allMatch(a -> a.calls() == 0));

        held.get(0).run();

        answers.forEach(Captured::assertSucceeded);
        assertArrayEquals(users.toArray(), seenBy);
        assertEquals(1, client.requests(CreateIndexRequest.class).size());
    }

    public void testEnsureIndex_whenTheCallerWhoRanTheCheckMayNotCreateTheIndex_theOthersCheckUnderTheirOwnRights() {
        clusterService.setState(state(index(SOURCE, "src-1")));
        List<Runnable> held = new ArrayList<>();
        List<String> createdBy = new ArrayList<>();
        ThreadContext context = threadPool.getThreadContext();
        client.on(CreateIndexAction.INSTANCE, (request, listener) -> {
            String user = context.getHeader("user");
            createdBy.add(user);
            if (user.equals("ann")) {
                held.add(() -> listener.onFailure(new OpenSearchSecurityException("no permission for [ann]", RestStatus.FORBIDDEN)));
            } else {
                answer(CreateIndexAction.INSTANCE, request, listener);
            }
        });
        List<Captured<Void>> answers = new ArrayList<>();
        for (String user : List.of("ann", "bob", "cid")) {
            try (ThreadContext.StoredContext ignored = context.stashContext()) {
                context.putHeader("user", user);
                Captured<Void> answer = new Captured<>();
                answers.add(answer);
                store.ensureIndex(CHUNKS, SOURCE, E5, answer);
            }
        }

        held.get(0).run();

        assertThat(answers.get(0).failure().getMessage(), containsString("no permission for [ann]"));
        answers.get(1).assertSucceeded();
        answers.get(2).assertSucceeded();
        // bob checks again under his rights and creates the index; cid then finds it ready
        assertEquals(List.of("ann", "bob"), createdBy);
    }

    /** The in-memory client's usual answer, from inside a handler. */
    private void answer(org.opensearch.action.ActionType<?> action, org.opensearch.action.ActionRequest request,
                        ActionListener<ActionResponse> listener) {
        try {
            client.answer(action, request, listener);
        } catch (Exception e) {
            listener.onFailure(e);
        }
    }

    // ---- replace, deleteFrom

    private void storeChunks(String sourceId, int count, String version) {
        for (int i = 0; i < count; i++) {
            client.put(CHUNKS, ChunkDocuments.chunkId(sourceId, i), Map.of("version", version, "ordinal", i));
        }
    }

    private List<String> chunkIdsOf(String sourceId) {
        return client.ids(CHUNKS).stream().filter(id -> id.startsWith(sourceId + ":")).sorted().toList();
    }

    private Captured<Void> replace(String sourceId, int count, Slicing slicing) {
        Captured<Void> done = new Captured<>();
        store.replace(CHUNKS, sourceId, count, i -> Map.of("version", "new", "ordinal", i), slicing, StrataStats.Progress.UNTRACKED,
            done);
        return done;
    }

    private static final Slicing TWO_PER_BULK = new Slicing(1, 2, 1 << 20);

    public void testReplace_writesTheNewChunksInSlices_andDeletesChunksBeyondTheNewCount() {
        storeChunks("d", 6, "old");
        storeChunks("e", 2, "old");

        replace("d", 3, TWO_PER_BULK).assertSucceeded();

        assertEquals(List.of("d:0", "d:1", "d:2"), chunkIdsOf("d"));
        for (String id : chunkIdsOf("d")) {
            assertEquals("new", client.get(CHUNKS, id).get("version"));
        }
        assertEquals("another document's chunks stay", List.of("e:0", "e:1"), chunkIdsOf("e"));
        List<Integer> writeSlices = client.requests(BulkRequest.class).stream()
            .filter(b -> b.requests().get(0) instanceof IndexRequest).map(BulkRequest::numberOfActions).toList();
        assertEquals(List.of(2, 1), writeSlices);
        List<String> deleted = client.requests(BulkRequest.class).stream().flatMap(b -> b.requests().stream())
            .filter(r -> r instanceof DeleteRequest).map(r -> r.id()).toList();
        assertEquals(List.of("d:3", "d:4", "d:5"), deleted);
    }

    public void testReplace_withZeroChunks_deletesEveryChunkOfTheDocument() {
        storeChunks("d", 4, "old");
        storeChunks("e", 1, "old");

        replace("d", 0, TWO_PER_BULK).assertSucceeded();

        assertEquals(List.of(), chunkIdsOf("d"));
        assertEquals(List.of("e:0"), chunkIdsOf("e"));
    }

    public void testReplace_whenALaterSliceFails_leavesNothingOfTheDocument_andFailsWithTheCause() {
        storeChunks("d", 7, "old");
        client.failBulkItem = r -> r instanceof IndexRequest && r.id().equals("d:3") ? new IllegalStateException("disk full") : null;

        Exception e = replace("d", 5, TWO_PER_BULK).failure();

        assertThat(e, instanceOf(ChunkWriteException.class));
        assertThat(e.getMessage(), containsString("writing chunks to [docs-chunks] failed: disk full"));
        assertEquals("no mix of two versions is left", List.of(), chunkIdsOf("d"));
    }

    public void testReplace_whenTheFirstSliceIsRejectedAsAWhole_keepsTheEarlierVersion() {
        storeChunks("d", 4, "old");
        client.on(BulkAction.INSTANCE, (request, listener) -> {
            throw new OpenSearchRejectedExecutionException("write queue full");
        });

        Exception e = replace("d", 3, TWO_PER_BULK).failure();

        assertThat(e.getMessage(), containsString("write queue full"));
        assertEquals(List.of("d:0", "d:1", "d:2", "d:3"), chunkIdsOf("d"));
        assertEquals(List.of(), client.requests(MultiGetRequest.class));
    }

    public void testDeleteFrom_probesOnUntilAProbeFindsNoChunk() {
        storeChunks("d", 150, "old");

        Captured<Void> done = new Captured<>();
        store.deleteFrom(CHUNKS, "d", 10, done);
        done.assertSucceeded();

        assertEquals(IntStream.range(0, 10).mapToObj(i -> "d:" + i).sorted().toList(), chunkIdsOf("d"));
        // probes of 64 ids: 10-73, 74-137, 138-201 (finds 12), 202-265 (finds none)
        assertEquals(4, client.requests(MultiGetRequest.class).size());
    }

    public void testDeleteFrom_whenThereIsNoChunkIndex_succeedsWithNothingToDelete() {
        Captured<Void> done = new Captured<>();
        store.deleteFrom(CHUNKS, "d", 0, done);

        done.assertSucceeded();
        assertEquals(List.of(), client.requests(BulkRequest.class));
    }

    public void testDeleteFrom_whenTheCallerMayNotReadTheChunks_failsRatherThanLeaveThemBehind() {
        storeChunks("d", 3, "old");
        client.failGetItem = item -> new OpenSearchSecurityException("no read permission", RestStatus.FORBIDDEN);

        Captured<Void> done = new Captured<>();
        store.deleteFrom(CHUNKS, "d", 0, done);

        assertThat(done.failure(), instanceOf(ChunkWriteException.class));
        assertThat(done.failure().getMessage(), containsString("no read permission"));
        assertEquals(3, chunkIdsOf("d").size());
    }

    // ---- reading the chunks

    public void testUnmet_findsTheDocumentsWithAMissingStaleOrSurplusChunk() {
        for (String id : List.of("ok", "missing", "stale", "surplus")) {
            client.put(CHUNKS, id + ":0", Map.of(ChunkDocuments.SOURCE_HASH, id.equals("stale") ? "h-old" : "h"));
            if (!id.equals("missing")) {
                client.put(CHUNKS, id + ":1", Map.of(ChunkDocuments.SOURCE_HASH, "h"));
            }
        }
        client.put(CHUNKS, "surplus:2", Map.of(ChunkDocuments.SOURCE_HASH, "h"));
        List<ChunkStore.Expected> expected = List.of(new ChunkStore.Expected(CHUNKS, "ok", "h", 2),
            new ChunkStore.Expected(CHUNKS, "missing", "h", 2), new ChunkStore.Expected(CHUNKS, "stale", "h", 2),
            new ChunkStore.Expected(CHUNKS, "surplus", "h", 2), new ChunkStore.Expected(CHUNKS, "none", "h", 0));

        Captured<List<ChunkStore.Expected>> unmet = new Captured<>();
        store.unmet(expected, unmet);

        assertEquals(List.of(expected.get(1), expected.get(2), expected.get(3)), unmet.value());
        assertEquals("one multi-get for all", 1, client.requests(MultiGetRequest.class).size());
    }

    public void testStoredVectors_keepsTheVectorsOfWantedTextsOnly_acrossProbes() {
        int count = ChunkStore.PROBE + 6;
        for (int i = 0; i < count; i++) {
            Map<String, Object> chunk = new LinkedHashMap<>();
            chunk.put(ChunkDocuments.TEXT_HASH, "t" + i);
            chunk.put(ChunkDocuments.EMBEDDING, List.of((float) i, 0f));
            chunk.put(ChunkDocuments.CHILDREN, List.of(Map.of(ChunkDocuments.LEVEL, 0, ChunkDocuments.EMBEDDING, List.of((float) i, 0f)),
                Map.of(ChunkDocuments.LEVEL, 1, ChunkDocuments.EMBEDDING, List.of((float) i, 1f))));
            client.put(CHUNKS, ChunkDocuments.chunkId("d", i), chunk);
        }

        Captured<Map<String, List<float[]>>> vectors = new Captured<>();
        store.storedVectors(CHUNKS, "d", count, Set.of("t1", "t" + (count - 1), "t-unknown"), vectors);

        Map<String, List<float[]>> byHash = vectors.value();
        assertEquals(Set.of("t1", "t" + (count - 1)), byHash.keySet());
        List<float[]> last = byHash.get("t" + (count - 1));
        assertEquals("the parent's, then the child's (the level-0 entry repeats the parent)", 2, last.size());
        assertArrayEquals(new float[] { count - 1, 0f }, last.get(0), 0f);
        assertArrayEquals(new float[] { count - 1, 1f }, last.get(1), 0f);
        assertEquals(2, client.requests(MultiGetRequest.class).size());
    }
}

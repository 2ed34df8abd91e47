package io.strata.chunkindex.setup;

import io.strata.chunkindex.TestClusterService;
import io.strata.chunkindex.Captured;
import io.strata.chunkindex.ChunkDocuments;
import io.strata.chunkindex.ChunkIndexMeta;
import io.strata.chunkindex.ChunkWriteException;
import io.strata.chunkindex.InMemoryClient;
import io.strata.chunkindex.registry.ChunkIndexRegistry;
import io.strata.model.ModelInfo;
import io.strata.model.ModelRef;
import org.opensearch.OpenSearchSecurityException;
import org.opensearch.action.admin.indices.create.CreateIndexAction;
import org.opensearch.action.admin.indices.create.CreateIndexRequest;
import org.opensearch.action.admin.indices.mapping.put.PutMappingRequest;
import org.opensearch.cluster.ClusterState;
import org.opensearch.cluster.metadata.ComposableIndexTemplate;
import org.opensearch.cluster.metadata.IndexMetadata;
import org.opensearch.cluster.metadata.Metadata;
import org.opensearch.common.settings.Settings;
import org.opensearch.common.util.concurrent.ThreadContext;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.action.ActionResponse;
import org.opensearch.core.index.Index;
import org.opensearch.core.rest.RestStatus;
import org.opensearch.test.OpenSearchTestCase;
import org.opensearch.threadpool.TestThreadPool;
import org.opensearch.threadpool.ThreadPool;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static io.strata.chunkindex.registry.ChunkIndexJanitorTests.chunksOf;
import static io.strata.chunkindex.TestClusterService.chunkIndex;
import static io.strata.chunkindex.TestClusterService.index;
import static io.strata.chunkindex.TestClusterService.state;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.instanceOf;

/**
 * Getting a chunk index ready for a caller's writes, over an in-memory client and a cluster state set by hand: it is
 * created (or mapped) once with the model's mapping and no source index in {@code _meta}; a target registered to another
 * source index (or a deleted incarnation) or holding another model's vectors is refused before anything is written;
 * concurrent callers share one check, each continuing under its own thread context; the write check tells 409 (allowed)
 * from 403.
 */
public class ChunkIndexSetupTests extends OpenSearchTestCase {
    private static final String SOURCE = "docs";
    private static final String CHUNKS = "docs-chunks";
    private static final ChunkIndexSetup.Fields BODY = new ChunkIndexSetup.Fields("body", List.of());
    private static final ModelInfo E5 = new ModelInfo(ModelRef.embedded("e5-small-v2"), "intfloat/e5-small-v2", 384);
    private static final ModelInfo BGE = new ModelInfo(ModelRef.embedded("bge-small"), "BAAI/bge-small-en-v1.5", 512);

    private ThreadPool threadPool;
    private TestClusterService clusterService;
    private InMemoryClient client;
    private ChunkIndexRegistry registry;
    private ChunkIndexSetup setup;

    @Override
    public void setUp() throws Exception {
        super.setUp();
        threadPool = new TestThreadPool(getTestName());
        clusterService = new TestClusterService(Settings.EMPTY, threadPool);
        client = new InMemoryClient(threadPool, clusterService);
        registry = new ChunkIndexRegistry();
        setup = new ChunkIndexSetup(client, clusterService, registry,
            () -> new org.opensearch.cluster.metadata.IndexNameExpressionResolver(threadPool.getThreadContext()));
    }

    @Override
    public void tearDown() throws Exception {
        ThreadPool.terminate(threadPool, 10, TimeUnit.SECONDS);
        super.tearDown();
    }

    private void setState(ClusterState state) {
        clusterService.setState(state);
        registry.apply(state.metadata());
    }

    /** The requests sent but the node's look at an existing index (refresh, document count, the cluster manager's state). */
    private List<org.opensearch.action.ActionRequest> changes() {
        return client.requests.stream()
            .filter(r -> !(r instanceof org.opensearch.action.admin.indices.stats.IndicesStatsRequest
                || r instanceof org.opensearch.action.admin.indices.refresh.RefreshRequest
                || r instanceof org.opensearch.action.admin.cluster.state.ClusterStateRequest)).toList();
    }

    private Captured<Void> ensure(ModelInfo model) {
        Captured<Void> done = new Captured<>();
        setup.ensureIndex(CHUNKS, SOURCE, BODY, model, done);
        return done;
    }

    private ChunkIndexMeta storedMeta() {
        return ChunkIndexMeta.of(clusterService.state().metadata().index(CHUNKS));
    }

    public void testEnsureIndex_withoutAChunkIndex_createsOneWithTheModelsMapping_andChecksOnlyOnce() {
        setState(state(index(SOURCE, "src-1")));

        ensure(E5).assertSucceeded();

        List<CreateIndexRequest> creates = client.requests(CreateIndexRequest.class);
        assertEquals(1, creates.size());
        assertEquals(CHUNKS, creates.get(0).index());
        assertTrue(creates.get(0).settings().getAsBoolean("index.knn", false));
        ChunkIndexMeta meta = ChunkIndexMeta.ofMapping(InMemoryClient.parse(creates.get(0).mappings()));
        assertNull("no source index in _meta", meta.sourceIndex());
        assertEquals(ChunkDocuments.FORMAT_VERSION, meta.format());
        assertEquals(ChunkDocuments.modelMeta(E5), meta.model());

        int before = client.requests.size();
        ensure(E5).assertSucceeded();
        ensure(E5).assertSucceeded();
        assertEquals("checked once for this index and mapping", before, client.requests.size());
    }

    public void testEnsureIndex_whenTheTargetIsRegisteredToAnotherIndex_failsSuggestingTheTemplate_andWritesNothing() {
        setState(state(index(SOURCE, "src-1"), index("news", "n-1"), chunksOf(CHUNKS, "c-1", "news", "n-1")));

        Exception e = ensure(E5).failure();

        assertThat(e, instanceOf(IllegalArgumentException.class));
        assertThat(e.getMessage(), containsString("[target_index] [docs-chunks] already holds the chunks of index [news]"));
        assertThat(e.getMessage(), containsString("{{_index}}"));
        assertEquals(List.of(), changes());
    }

    public void testEnsureIndex_whenTheTargetIsRegisteredToADeletedIncarnation_failsSayingToDeleteIt() {
        // the source deleted and written again (its chunk index kept: delete_with_source off): sequence numbers start over
        setState(state(index(SOURCE, "src-2"), chunksOf(CHUNKS, "c-1", SOURCE, "src-1")));

        Exception e = ensure(E5).failure();

        assertThat(e.getMessage(), containsString("holds the chunks of index [docs] (uuid [src-1]), which no longer exists"));
        assertThat(e.getMessage(), containsString("delete [docs-chunks]"));
        assertEquals(List.of(), changes());
    }

    public void testEnsureIndex_onItsOwnRegisteredChunkIndex_writesNothing() {
        setState(state(index(SOURCE, "src-1"), IndexMetadata.builder(chunkIndex(CHUNKS, "c-1", ChunkDocuments.mapping(E5)))
            .putCustom(ChunkIndexRegistry.CUSTOM_KEY, ChunkIndexRegistry.customData(new Index(SOURCE, "src-1"), -1L)).build()));

        ensure(E5).assertSucceeded();
        ensure(E5).assertSucceeded();

        assertEquals(List.of(), changes());
    }

    public void testEnsureIndex_whenTheTargetHoldsVectorsOfAnotherModel_failsNamingBothModels() {
        setState(state(index(SOURCE, "src-1"), chunkIndex(CHUNKS, "c-1", ChunkDocuments.mapping(E5))));

        String otherModel = ensure(BGE).failure().getMessage();
        assertThat(otherModel, containsString("holds vectors of model [e5-small-v2] (384 dims)"));
        assertThat(otherModel, containsString("this pipeline embeds with model [bge-small] (512 dims)"));

        assertThat(ensure(null).failure().getMessage(), containsString("this pipeline embeds with no model"));
        assertEquals(List.of(), changes());
    }

    public void testEnsureIndex_withAModel_onAnIndexCreatedWithoutKnn_failsSayingHowToCreateIt() {
        setState(state(index(SOURCE, "src-1"), index(CHUNKS, "c-1")));

        assertThat(ensure(E5).failure().getMessage(), containsString("was created without [index.knn: true]"));
        assertEquals(List.of(), changes());
    }

    public void testEnsureIndex_onAnIndexTheUserCreated_addsTheChunkMapping() {
        setState(state(index(SOURCE, "src-1"), index(CHUNKS, "c-1", null, Settings.builder().put("index.knn", true).build())));

        ensure(E5).assertSucceeded();

        List<PutMappingRequest> puts = client.requests(PutMappingRequest.class);
        assertEquals(1, puts.size());
        assertEquals(ChunkDocuments.mapping(E5).keySet(), InMemoryClient.parse(puts.get(0).source()).keySet());
    }

    public void testEnsureIndex_onAnIndexThatHoldsTheUsersDocuments_is400_beforeAnythingIsWritten() {
        setState(state(index(SOURCE, "src-1"), index(CHUNKS, "c-1", null, Settings.builder().put("index.knn", true).build())));
        client.put(CHUNKS, "u1", Map.of("name", "Harriet Smith"));

        Exception e = ensure(E5).failure();

        assertThat(e.getMessage(), containsString("[target_index] [" + CHUNKS + "] is an existing index that Strata did not create"));
        assertEquals("no mapping added", 0, client.requests(PutMappingRequest.class).size());
    }

    public void testEnsureIndex_onAChunkIndexWrittenAndRegisteredFromAnotherNode_notYetRegisteredHere_isUsed() {
        // the cluster manager's state has the registration; this node's registry has not applied it yet
        setState(state(index(SOURCE, "src-1"), index(CHUNKS, "c-1", null, Settings.builder().put("index.knn", true).build())));
        client.put(CHUNKS, SOURCE + ":0", Map.of("source_id", SOURCE));
        IndexMetadata chunks = clusterService.state().metadata().index(CHUNKS);
        IndexMetadata registered = IndexMetadata.builder(chunks).putCustom(ChunkIndexRegistry.CUSTOM_KEY,
            ChunkIndexRegistry.customData(clusterService.state().metadata().index(SOURCE).getIndex(), 0)).build();
        clusterService.setState(ClusterState.builder(clusterService.state())
            .metadata(Metadata.builder(clusterService.state().metadata()).put(registered, true)).build());
        assertNull("not applied by this node's registry", registry.ofChunkIndex(CHUNKS));

        ensure(E5).assertSucceeded();
    }

    public void testEnsureIndex_withAModel_onAChunkIndexWrittenWithoutVectors_addsTheVectorFields() {
        setState(state(index(SOURCE, "src-1"), chunkIndex(CHUNKS, "c-1", ChunkDocuments.mapping(null))));

        ensure(E5).assertSucceeded();

        assertEquals(1, client.requests(PutMappingRequest.class).size());
        assertEquals(ChunkDocuments.modelMeta(E5), storedMeta().model());
    }

    public void testEnsureIndex_concurrentCallersShareOneCheck_andEachContinuesInItsOwnThreadContext() {
        setState(state(index(SOURCE, "src-1")));
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
                setup.ensureIndex(CHUNKS, SOURCE, BODY, E5, ActionListener.wrap(v -> {
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
        setState(state(index(SOURCE, "src-1")));
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
                setup.ensureIndex(CHUNKS, SOURCE, BODY, E5, answer);
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

    // ---- the write check

    public void testCheckWritable_aVersionConflictMeansAllowed_aRefusalFailsNamingTheChunkIndex_andNothingIsWritten() {
        setState(state(chunkIndex(CHUNKS, "c-1", ChunkDocuments.mapping(null))));
        Captured<Void> allowed = new Captured<>();
        setup.checkWritable(CHUNKS, allowed);
        allowed.assertSucceeded();
        assertEquals("nothing written", List.of(), client.ids(CHUNKS));

        client.failBulkItem = r -> new OpenSearchSecurityException("no permissions for [indices:data/write/bulk[s]]", RestStatus.FORBIDDEN);
        Captured<Void> refused = new Captured<>();
        setup.checkWritable(CHUNKS, refused);
        Exception e = refused.failure();
        assertEquals(RestStatus.FORBIDDEN, ((ChunkWriteException) e).status());
        assertThat(e.getMessage(), containsString("writing chunks to [docs-chunks] failed: no permissions for"));
    }

    public void testWriteChecks_checkEachChunkIndexOncePerRequest() {
        setState(state(chunkIndex(CHUNKS, "c-1", ChunkDocuments.mapping(null))));
        WriteChecks checks = new WriteChecks(setup);
        for (int i = 0; i < 5; i++) {
            Captured<Void> answer = new Captured<>();
            checks.check(CHUNKS, answer);
            answer.assertSucceeded();
        }
        assertEquals(1, client.requests(org.opensearch.action.bulk.BulkRequest.class).size());
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> textField(CreateIndexRequest create, String... path) {
        Map<String, Object> node = InMemoryClient.parse(create.mappings());
        for (String part : path) {
            node = (Map<String, Object>) ((Map<String, Object>) node.get("properties")).get(part);
        }
        return node;
    }

    public void testEnsureIndex_analysesTheChunksTextsAsTheChunkedField_withTheAnalysisSettingsThatDefineIt() throws Exception {
        Settings analysis = Settings.builder().put("index.analysis.analyzer.my_en.type", "custom")
            .put("index.analysis.analyzer.my_en.tokenizer", "standard").putList("index.analysis.analyzer.my_en.filter", "lowercase",
                "porter_stem").build();
        Map<String, Object> mapping = Map.of("properties", Map.of("doc", Map.of("properties", Map.of("body", Map.of("type", "text",
            "analyzer", "my_en", "search_analyzer", "english"))), "title", Map.of("type", "text")));
        setState(state(index(SOURCE, "src-1", mapping, analysis)));
        Captured<Void> done = new Captured<>();
        setup.ensureIndex(CHUNKS, SOURCE, new ChunkIndexSetup.Fields("doc.body", List.of()), E5, done);
        done.assertSucceeded();

        CreateIndexRequest create = client.requests(CreateIndexRequest.class).get(0);
        Map<String, Object> expected = Map.of("type", "text", "analyzer", "my_en", "search_analyzer", "english");
        assertEquals(expected, textField(create, "text"));
        assertEquals(expected, textField(create, "context_header"));
        assertEquals(expected, textField(create, "children", "text"));
        assertEquals(expected, textField(create, "children", "context_header"));
        assertEquals(Map.of("type", "keyword"), textField(create, "source_id"));
        assertEquals("standard", create.settings().get("index.analysis.analyzer.my_en.tokenizer"));
        assertEquals(List.of("lowercase", "porter_stem"), create.settings().getAsList("index.analysis.analyzer.my_en.filter"));
        assertTrue(create.settings().getAsBoolean("index.knn", false));

        // a field with the index's default analyzer: the chunk index's default too, and no analysis settings copied
        List<Map<String, Object>> mappings = setup.sources().sourceMapping(SOURCE).mappings();
        assertEquals(Map.of(), ChunkIndexMappings.analysisOf(mappings, "title"));
        assertEquals(Map.of(), ChunkIndexMappings.analysisOf(mappings, "missing.field"));
        assertEquals(Map.of("analyzer", "english"), ChunkIndexMappings.analysisOf(List.of(Map.of("properties", Map.of("b",
            Map.of("type", "match_only_text", "analyzer", "english")))), "b"));
        assertEquals("not a text field", Map.of(), ChunkIndexMappings.analysisOf(List.of(Map.of("properties", Map.of("b",
            Map.of("type", "keyword", "normalizer", "folded")))), "b"));
    }

    public void testEnsureIndex_copiesTheSourcesIndexWideDefaultAnalyzerAndSimilarity_whichItsTextFieldsUseWithoutParameters() {
        setState(state(index(SOURCE, "src-1", Map.of("properties", Map.of("body", Map.of("type", "text"))), Settings.builder()
            .put("index.analysis.analyzer.default.type", "english").put("index.similarity.default.type", "boolean")
            .put("index.refresh_interval", "5s").build())));
        ensure(E5).assertSucceeded();
        CreateIndexRequest create = client.requests(CreateIndexRequest.class).get(0);
        assertEquals("english", create.settings().get("index.analysis.analyzer.default.type"));
        assertEquals("boolean", create.settings().get("index.similarity.default.type"));
        assertNull("only analysis and similarity", create.settings().get("index.refresh_interval"));
    }

    public void testEnsureIndex_beforeTheSourceIndexExists_takesTheAnalysisItsTemplatesGive_andAChunkTemplatesAnalyzerWins()
        throws Exception {
        org.opensearch.cluster.metadata.Template docs = new org.opensearch.cluster.metadata.Template(Settings.builder()
            .put("index.analysis.analyzer.my_en.type", "custom").put("index.analysis.analyzer.my_en.tokenizer", "whitespace").build(),
            new org.opensearch.common.compress.CompressedXContent("{\"properties\":{\"body\":{\"type\":\"text\",\"analyzer\":\"my_en\"}}}"),
            null);
        setState(TestClusterService.state(Metadata.builder().put("docs", new ComposableIndexTemplate(List.of("docs"), docs, null, null,
            null, null, null)).build(), true));
        setup.ensureIndex(CHUNKS, SOURCE, BODY, E5, new Captured<>());
        CreateIndexRequest create = client.requests(CreateIndexRequest.class).get(0);
        assertEquals("my_en", textField(create, "children", "text").get("analyzer"));
        assertEquals("whitespace", create.settings().get("index.analysis.analyzer.my_en.tokenizer"));
        // a data stream's first backing index: its stream's template
        setState(TestClusterService.state(Metadata.builder().put("logs", new ComposableIndexTemplate(List.of("logs-*"), docs, null, null,
            null, null, new ComposableIndexTemplate.DataStreamTemplate())).build(), true));
        assertEquals(Map.of("analyzer", "my_en"), ChunkIndexMappings.analysisOf(setup.sources().sourceMapping(".ds-logs-app-000001").mappings(),
            "body"));

        // a template of the chunk index that maps the text fields itself decides, and its analysis settings stay its own
        org.opensearch.cluster.metadata.Template chunks = new org.opensearch.cluster.metadata.Template(Settings.builder()
            .put("index.analysis.analyzer.my_en.type", "custom").put("index.analysis.analyzer.my_en.tokenizer", "standard").build(),
            new org.opensearch.common.compress.CompressedXContent("{\"properties\":{\"text\":{\"type\":\"text\",\"analyzer\":\"simple\"}}}"),
            null);
        setState(TestClusterService.state(Metadata.builder().put("docs", new ComposableIndexTemplate(List.of("docs"), docs, null, null,
            null, null, null)).put("chunks", new ComposableIndexTemplate(List.of("*-chunks"), chunks, null, null, null, null, null))
            .build(), true));
        client.requests.clear();
        setup.ensureIndex("other-chunks", SOURCE, BODY, E5, new Captured<>());
        create = client.requests(CreateIndexRequest.class).get(0);
        assertEquals("simple", textField(create, "text").get("analyzer"));
        assertNull("the chunk template's own definition", create.settings().get("index.analysis.analyzer.my_en.tokenizer"));
    }

    private static final Map<String, Object> SOURCE_FIELDS = Map.of("properties", Map.of(
        "body", Map.of("type", "text"),
        "tenant", Map.of("type", "keyword", "normalizer", "folded"),
        "published", Map.of("type", "date", "format", "dd/MM/yyyy"),
        "meta", Map.of("properties", Map.of("rank", Map.of("type", "integer"), "note", Map.of("type", "text"))),
        "tags", Map.of("type", "keyword", "copy_to", "everything"),
        "label", Map.of("type", "alias", "path", "tenant")));
    private static final List<String> COPIED = List.of("tenant", "published", "meta.rank", "tags", "label", "unmapped");

    public void testEnsureIndex_mapsTheCopiedFieldsAsTheSourceDoes_withTheNormalizersTheyUse() throws Exception {
        setState(state(index(SOURCE, "src-1", SOURCE_FIELDS, Settings.builder()
            .put("index.analysis.normalizer.folded.type", "custom").putList("index.analysis.normalizer.folded.filter", "lowercase").build())));
        setup.ensureIndex(CHUNKS, SOURCE, new ChunkIndexSetup.Fields("body", COPIED), E5, new Captured<>());

        CreateIndexRequest create = client.requests(CreateIndexRequest.class).get(0);
        assertEquals(Map.of("type", "keyword", "normalizer", "folded"), textField(create, "tenant"));
        assertEquals(Map.of("type", "date", "format", "dd/MM/yyyy"), textField(create, "published"));
        assertEquals(Map.of("type", "integer"), textField(create, "meta", "rank"));
        assertNull("only the copied fields of an object", ((Map<String, Object>) textField(create, "meta").get("properties")).get("note"));
        assertEquals("copy_to left out: its target is no chunk field", Map.of("type", "keyword"), textField(create, "tags"));
        Map<String, Object> properties = (Map<String, Object>) InMemoryClient.parse(create.mappings()).get("properties");
        assertFalse("an alias field: its target is not copied", properties.containsKey("label"));
        assertFalse("a field the source maps dynamically is left to dynamic mapping", properties.containsKey("unmapped"));
        assertEquals(Map.of("type", "text"), textField(create, "text"));
        assertEquals(List.of("lowercase"), create.settings().getAsList("index.analysis.normalizer.folded.filter"));
    }

    public void testEnsureIndex_onAnExistingChunkIndex_mapsOnlyTheCopiedFieldsItDoesNotMapYet() throws Exception {
        Map<String, Object> chunkMapping = new java.util.LinkedHashMap<>(ChunkDocuments.mapping(E5));
        Map<String, Object> props = new java.util.LinkedHashMap<>((Map<String, Object>) chunkMapping.get("properties"));
        props.put("tags", Map.of("type", "text")); // mapped dynamically by an older version: it stays so
        chunkMapping.put("properties", props);
        setState(state(index(SOURCE, "src-1", SOURCE_FIELDS, Settings.EMPTY), chunkIndex(CHUNKS, "c-1", chunkMapping)));

        setup.ensureIndex(CHUNKS, SOURCE, new ChunkIndexSetup.Fields("body", List.of("tags", "meta.rank")), E5, new Captured<>());
        List<PutMappingRequest> puts = client.requests(PutMappingRequest.class);
        assertEquals(1, puts.size());
        assertEquals(Map.of("properties", Map.of("meta", Map.of("properties", Map.of("rank", Map.of("type", "integer"))))),
            InMemoryClient.parse(puts.get(0).source()));

        int before = changes().size();
        setup.ensureIndex(CHUNKS, SOURCE, new ChunkIndexSetup.Fields("body", List.of("tags", "meta.rank")), E5, new Captured<>());
        setup.ensureIndex(CHUNKS, SOURCE, BODY, E5, new Captured<>());
        assertEquals("nothing left to map", before, changes().size());
    }
}

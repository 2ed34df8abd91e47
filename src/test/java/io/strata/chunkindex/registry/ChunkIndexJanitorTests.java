package io.strata.chunkindex.registry;

import io.strata.chunkindex.TestClusterService;
import io.strata.chunkindex.ChunkDocuments;

import org.opensearch.cluster.ClusterChangedEvent;
import org.opensearch.cluster.ClusterState;
import org.opensearch.cluster.ClusterStateUpdateTask;
import org.opensearch.cluster.metadata.IndexMetadata;
import org.opensearch.cluster.metadata.Metadata;
import org.opensearch.cluster.metadata.MetadataDeleteIndexService;
import org.opensearch.common.settings.Settings;
import org.opensearch.core.index.Index;
import org.opensearch.test.OpenSearchTestCase;
import org.opensearch.threadpool.TestThreadPool;
import org.opensearch.threadpool.ThreadPool;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static io.strata.chunkindex.TestClusterService.chunkIndex;
import static io.strata.chunkindex.TestClusterService.index;
import static io.strata.chunkindex.TestClusterService.state;

/**
 * The janitor's decisions against hand-built cluster states: on the deletion of a source index it submits one update task,
 * and that task deletes a chunk index only if, in the state it replaces, it is still the same index (by UUID) and still
 * registered ({@link ChunkIndexRegistry}) to the deleted source index; an index whose mapping {@code _meta} merely names
 * the source is never touched; with the setting off, or on a node that is not the elected cluster manager, it does
 * nothing. The delete service is a fake that records what it is asked.
 */
public class ChunkIndexJanitorTests extends OpenSearchTestCase {
    private static final String SOURCE = "docs";
    private static final String CHUNKS = "docs-chunks";

    private ThreadPool threadPool;
    private TestClusterService clusterService;
    private final List<Set<Index>> deleted = new ArrayList<>();
    private final ChunkIndexRegistry registry = new ChunkIndexRegistry();

    @Override
    public void setUp() throws Exception {
        super.setUp();
        threadPool = new TestThreadPool(getTestName());
        clusterService = new TestClusterService(Settings.EMPTY, threadPool);
    }

    @Override
    public void tearDown() throws Exception {
        ThreadPool.terminate(threadPool, 10, TimeUnit.SECONDS);
        super.tearDown();
    }

    private ChunkIndexJanitor janitor(boolean enabled) {
        Settings settings = Settings.builder().put(ChunkIndexJanitor.DELETE_WITH_SOURCE.getKey(), enabled).build();
        MetadataDeleteIndexService deleteService = new MetadataDeleteIndexService(settings, clusterService, null) {
            @Override
            public ClusterState deleteIndices(ClusterState current, Set<Index> indices) {
                deleted.add(Set.copyOf(indices));
                Metadata.Builder metadata = Metadata.builder(current.metadata());
                indices.forEach(i -> metadata.remove(i.getName()));
                return ClusterState.builder(current).metadata(metadata).build();
            }
        };
        return new ChunkIndexJanitor(settings, clusterService, deleteService, registry);
    }

    /** A chunk index registered to {@code source} (by name and UUID). */
    public static IndexMetadata chunksOf(String name, String uuid, String source, String sourceUuid) {
        IndexMetadata plain = chunkIndex(name, uuid, ChunkDocuments.mapping(null));
        return IndexMetadata.builder(plain).putCustom(ChunkIndexRegistry.CUSTOM_KEY,
            ChunkIndexRegistry.customData(new Index(source, sourceUuid), -1L)).build();
    }

    /** A chunk index registered to {@code source} created at {@code created}, as the registration action records it. */
    public static IndexMetadata chunksOf(String name, String uuid, String source, String sourceUuid, long created) {
        return IndexMetadata.builder(chunkIndex(name, uuid, ChunkDocuments.mapping(null))).putCustom(ChunkIndexRegistry.CUSTOM_KEY,
            ChunkIndexRegistry.customData(new Index(source, sourceUuid), created)).build();
    }

    /** A source index created at {@code created} (epoch ms; a snapshot restore keeps it). */
    static IndexMetadata sourceCreatedAt(String name, String uuid, long created) {
        return index(name, uuid, null, Settings.builder().put(IndexMetadata.SETTING_CREATION_DATE, created).build());
    }

    /** The janitor sees the deletion after the registry applied the state before it. */
    private void deletion(ChunkIndexJanitor janitor, ClusterState before, ClusterState after) {
        registry.apply(before.metadata());
        janitor.clusterChanged(new ClusterChangedEvent("delete [docs]", after, before));
    }

    /** The update task the janitor submitted for the one event it saw. */
    private ClusterStateUpdateTask onlyTask() {
        assertEquals("one update task", 1, clusterService.submitted.size());
        return clusterService.submitted.get(0);
    }

    // ---- a snapshot restore brings a source and its chunk index back under new UUIDs

    /** The janitor sees the state a restore created {@code restored}'s indices in, after {@code before}. */
    private void restore(ChunkIndexJanitor janitor, ClusterState before, ClusterState restored) {
        janitor.clusterChanged(new ClusterChangedEvent("restore", restored, before));
    }

    private static ChunkIndexRegistry.Registration registrationIn(ClusterState state, String index) {
        return ChunkIndexRegistry.registrationOf(state.metadata().index(index));
    }

    public void testRestore_ofAPair_registersTheChunkIndexToTheRestoredSource_evenWithDeleteWithSourceOff() throws Exception {
        // registered on the old cluster to docs (src-1, created at 1000); restored: docs is src-2, still created at 1000
        ClusterState restored = state(sourceCreatedAt(SOURCE, "src-2", 1000), chunksOf(CHUNKS, "chunks-2", SOURCE, "src-1", 1000),
            sourceCreatedAt("other", "o-1", 1000));
        restore(janitor(false), state(), restored);

        ClusterState next = onlyTask().execute(restored);
        assertEquals(new Index(SOURCE, "src-2"), registrationIn(next, CHUNKS).source());
        assertEquals("1000", next.metadata().index(CHUNKS).getCustomData(ChunkIndexRegistry.CUSTOM_KEY)
            .get(ChunkIndexRegistry.SOURCE_CREATED));
        assertNull("settled once", ChunkIndexRegistry.afterRestore(next.metadata().index(CHUNKS), next.metadata(), Set.of(SOURCE, CHUNKS)));
    }

    public void testRestore_ofARenamedPairNextToTheLivePair_registersTheCopyToTheCopy_andLeavesTheLivePairAlone() throws Exception {
        // rename_pattern "(.+)" → "restored_$1": both copies carry the live pair's registration (src-1)
        ClusterState before = state(sourceCreatedAt(SOURCE, "src-1", 1000), chunksOf(CHUNKS, "chunks-1", SOURCE, "src-1", 1000));
        ClusterState restored = state(sourceCreatedAt(SOURCE, "src-1", 1000), chunksOf(CHUNKS, "chunks-1", SOURCE, "src-1", 1000),
            sourceCreatedAt("restored_docs", "r-1", 1000), chunksOf("restored_docs-chunks", "rc-1", SOURCE, "src-1", 1000));
        restore(janitor(true), before, restored);

        ClusterState next = onlyTask().execute(restored);
        assertEquals(new Index("restored_docs", "r-1"), registrationIn(next, "restored_docs-chunks").source());
        assertEquals(new Index(SOURCE, "src-1"), registrationIn(next, CHUNKS).source());
    }

    public void testRestore_ofAChunkIndexAloneNextToItsLiveSource_unregistersTheCopy() throws Exception {
        ClusterState before = state(sourceCreatedAt(SOURCE, "src-1", 1000), chunksOf(CHUNKS, "chunks-1", SOURCE, "src-1", 1000));
        ClusterState restored = state(sourceCreatedAt(SOURCE, "src-1", 1000), chunksOf(CHUNKS, "chunks-1", SOURCE, "src-1", 1000),
            chunksOf("copy-chunks", "cc-1", SOURCE, "src-1", 1000));
        restore(janitor(true), before, restored);

        ClusterState next = onlyTask().execute(restored);
        assertNull("a copy is no chunk index of the live source", registrationIn(next, "copy-chunks"));
        assertEquals(new Index(SOURCE, "src-1"), registrationIn(next, CHUNKS).source());
    }

    public void testRestore_ofARegistrationWithoutARecordedDate_matchesTheSourceByName() throws Exception {
        ClusterState restored = state(sourceCreatedAt(SOURCE, "src-2", 1000), chunksOf(CHUNKS, "chunks-2", SOURCE, "src-1"));
        restore(janitor(true), state(), restored);
        assertEquals(new Index(SOURCE, "src-2"), registrationIn(onlyTask().execute(restored), CHUNKS).source());
    }

    public void testRestore_changesNothing_forASourceOfAnotherDate_aSourceNotRestoredWithIt_orAChunkIndexAsSource() {
        ChunkIndexJanitor janitor = janitor(true);
        // the source's name held by an index created at another time: not the source the chunks were cut from (and gone)
        restore(janitor, state(), state(sourceCreatedAt(SOURCE, "src-2", 2000), chunksOf(CHUNKS, "chunks-2", SOURCE, "src-1", 1000)));
        // the source's name now held by a chunk index
        restore(janitor, state(), state(chunksOf(SOURCE, "src-2", "x", "x-1", 1000), chunksOf(CHUNKS, "chunks-2", SOURCE, "src-1", 1000)));
        // an index given the source's name and creation date (a user may set index.creation_date) before the chunk index
        // was restored alone: they did not come back together
        ClusterState before = state(sourceCreatedAt(SOURCE, "src-2", 1000));
        restore(janitor, before, state(sourceCreatedAt(SOURCE, "src-2", 1000), chunksOf(CHUNKS, "chunks-2", SOURCE, "src-1", 1000)));
        assertEquals(List.of(), clusterService.submitted);
    }

    public void testRestore_decidesAgainOnTheStateItReplaces() throws Exception {
        ClusterState restored = state(sourceCreatedAt(SOURCE, "src-2", 1000), chunksOf(CHUNKS, "chunks-2", SOURCE, "src-1", 1000));
        restore(janitor(true), state(), restored);
        // the source deleted again before the task ran: nothing to move
        ClusterState sourceGone = state(chunksOf(CHUNKS, "chunks-2", SOURCE, "src-1", 1000));
        assertSame(sourceGone, onlyTask().execute(sourceGone));
    }

    // ---- a source index is deleted

    public void testSourceDeleted_deletesTheChunkIndexRegisteredToIt_only() throws Exception {
        IndexMetadata source = index(SOURCE, "src-1");
        IndexMetadata chunks = chunksOf(CHUNKS, "chunks-1", SOURCE, "src-1");
        IndexMetadata otherChunks = chunksOf("other-chunks", "chunks-2", "other", "other-1");
        ClusterState before = state(source, chunks, otherChunks, index("other", "other-1"));
        ClusterState after = state(chunks, otherChunks, index("other", "other-1"));

        deletion(janitor(true), before, after);

        ClusterState next = onlyTask().execute(after);
        assertEquals(List.of(Set.of(chunks.getIndex())), deleted);
        assertFalse(next.metadata().hasIndex(CHUNKS));
        assertTrue(next.metadata().hasIndex("other-chunks"));
    }

    public void testSourceDeleted_neverTouchesAnIndexWhoseMetaMerelyNamesIt() {
        // what any user with put-mapping rights can write: _meta.strata naming the source and its UUID
        IndexMetadata bystander = chunkIndex("bystander", "b-1", Map.of("_meta", Map.of("strata",
            Map.of("format", 2, "source_index", SOURCE, "source_index_uuid", "src-1"))));
        ClusterState before = state(index(SOURCE, "src-1"), bystander);
        ClusterState after = state(bystander);

        deletion(janitor(true), before, after);

        assertEquals(List.of(), clusterService.submitted);
    }

    public void testSourceDeleted_whenTheChunkIndexWasReplacedByAnotherOfTheSameName_keepsTheNewOne() throws Exception {
        IndexMetadata chunks = chunksOf(CHUNKS, "chunks-1", SOURCE, "src-1");
        deletion(janitor(true), state(index(SOURCE, "src-1"), chunks), state(chunks));

        // deleted and created again under the same name, even registered to the same (deleted) source
        ClusterState replaced = state(chunksOf(CHUNKS, "chunks-2", SOURCE, "src-1"));
        assertSame(replaced, onlyTask().execute(replaced));
        ClusterState gone = state();
        assertSame(gone, onlyTask().execute(gone));
        assertEquals(List.of(), deleted);
    }

    public void testSourceDeleted_whenNoChunkIndexIsRegisteredToThatIncarnation_submitsNothing() {
        // chunk indices of an older incarnation, of another source, and a plain index
        ClusterState before = state(index(SOURCE, "src-2"), chunksOf("old-chunks", "c-1", SOURCE, "src-1"),
            chunksOf("other-chunks", "c-3", "other", "src-3"), index("plain", "p-1"));
        ClusterState after = state(chunksOf("old-chunks", "c-1", SOURCE, "src-1"), chunksOf("other-chunks", "c-3", "other", "src-3"),
            index("plain", "p-1"));

        deletion(janitor(true), before, after);

        assertEquals(List.of(), clusterService.submitted);
    }

    public void testSourceDeleted_withTheSettingOff_doesNothing() {
        IndexMetadata chunks = chunksOf(CHUNKS, "chunks-1", SOURCE, "src-1");
        deletion(janitor(false), state(index(SOURCE, "src-1"), chunks), state(chunks));
        assertEquals(List.of(), clusterService.submitted);
    }

    public void testSetting_isDynamic() {
        IndexMetadata chunks = chunksOf(CHUNKS, "chunks-1", SOURCE, "src-1");
        ClusterState before = state(index(SOURCE, "src-1"), chunks);
        ClusterChangedEvent deletion = new ClusterChangedEvent("delete [docs]", state(chunks), before);
        registry.apply(before.metadata());
        ChunkIndexJanitor janitor = janitor(true);
        String key = ChunkIndexJanitor.DELETE_WITH_SOURCE.getKey();

        clusterService.getClusterSettings().applySettings(Settings.builder().put(key, false).build());
        janitor.clusterChanged(deletion);
        assertEquals(List.of(), clusterService.submitted);

        clusterService.getClusterSettings().applySettings(Settings.builder().put(key, true).build());
        janitor.clusterChanged(deletion);
        assertEquals(1, clusterService.submitted.size());
    }

    public void testSourceDeleted_seenOnANodeThatIsNotTheElectedClusterManager_doesNothing() {
        IndexMetadata chunks = chunksOf(CHUNKS, "chunks-1", SOURCE, "src-1");
        Metadata beforeMeta = Metadata.builder().put(index(SOURCE, "src-1"), false).put(chunks, false).build();
        Metadata afterMeta = Metadata.builder().put(chunks, false).build();
        registry.apply(beforeMeta);

        janitor(true).clusterChanged(new ClusterChangedEvent("delete [docs]", state(afterMeta, false), state(beforeMeta, false)));

        assertEquals(List.of(), clusterService.submitted);
    }
}

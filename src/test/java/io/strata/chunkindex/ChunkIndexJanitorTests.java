package io.strata.chunkindex;

import org.opensearch.action.admin.indices.mapping.put.PutMappingClusterStateUpdateRequest;
import org.opensearch.cluster.ClusterChangedEvent;
import org.opensearch.cluster.ClusterState;
import org.opensearch.cluster.ClusterStateUpdateTask;
import org.opensearch.cluster.ack.ClusterStateUpdateResponse;
import org.opensearch.cluster.metadata.IndexMetadata;
import org.opensearch.cluster.metadata.Metadata;
import org.opensearch.cluster.metadata.MetadataDeleteIndexService;
import org.opensearch.cluster.metadata.MetadataMappingService;
import org.opensearch.common.settings.Settings;
import org.opensearch.core.action.ActionListener;
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
 * records the deleted incarnation of the source; on the creation of a source index it records the new UUID in a chunk
 * index that recorded {@code _na_}; with the setting off, or on a node that is not the elected cluster manager, it does
 * nothing. The delete and mapping services are fakes that record what they are asked.
 */
public class ChunkIndexJanitorTests extends OpenSearchTestCase {
    private static final String SOURCE = "docs";
    private static final String CHUNKS = "docs-chunks";
    private static final String NA = IndexMetadata.INDEX_UUID_NA_VALUE;

    private ThreadPool threadPool;
    private TestClusterService clusterService;
    private final List<Set<Index>> deleted = new ArrayList<>();
    private final List<PutMappingClusterStateUpdateRequest> mappingUpdates = new ArrayList<>();

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
        MetadataMappingService mappingService = new MetadataMappingService(clusterService, null) {
            @Override
            public void putMapping(PutMappingClusterStateUpdateRequest request, ActionListener<ClusterStateUpdateResponse> listener) {
                mappingUpdates.add(request);
                listener.onResponse(new ClusterStateUpdateResponse(true));
            }
        };
        return new ChunkIndexJanitor(settings, clusterService, deleteService, mappingService);
    }

    private static IndexMetadata chunksOf(String name, String uuid, String source, String sourceUuid) {
        return chunkIndex(name, uuid, ChunkDocuments.mapping(source, sourceUuid, null));
    }

    /** The update task the janitor submitted for the one event it saw. */
    private ClusterStateUpdateTask onlyTask() {
        assertEquals("one update task", 1, clusterService.submitted.size());
        return clusterService.submitted.get(0);
    }

    // ---- a source index is deleted

    public void testSourceDeleted_whenItsChunkIndexStillRecordsIt_deletesThatChunkIndexOnly() throws Exception {
        IndexMetadata source = index(SOURCE, "src-1");
        IndexMetadata chunks = chunksOf(CHUNKS, "chunks-1", SOURCE, "src-1");
        IndexMetadata otherChunks = chunksOf("other-chunks", "chunks-2", "other", "other-1");
        ClusterState before = state(source, chunks, otherChunks, index("other", "other-1"));
        ClusterState after = state(chunks, otherChunks, index("other", "other-1"));

        janitor(true).clusterChanged(new ClusterChangedEvent("delete [docs]", after, before));

        ClusterState next = onlyTask().execute(after);
        assertEquals(List.of(Set.of(chunks.getIndex())), deleted);
        assertFalse(next.metadata().hasIndex(CHUNKS));
        assertTrue(next.metadata().hasIndex("other-chunks"));
    }

    public void testSourceDeleted_whenANewIncarnationClaimedTheChunkIndexFirst_keepsIt() throws Exception {
        IndexMetadata chunks = chunksOf(CHUNKS, "chunks-1", SOURCE, "src-1");
        ClusterState before = state(index(SOURCE, "src-1"), chunks);
        ClusterState after = state(chunks);
        janitor(true).clusterChanged(new ClusterChangedEvent("delete [docs]", after, before));

        // before the task runs, the processor claims the chunk index for the re-created source (or for _na_)
        for (String claimedBy : List.of("src-2", NA)) {
            ClusterState claimed = state(index(SOURCE, "src-2"), chunksOf(CHUNKS, "chunks-1", SOURCE, claimedBy));
            assertSame("claimed by [" + claimedBy + "]", claimed, onlyTask().execute(claimed));
        }
        assertEquals(List.of(), deleted);
    }

    public void testSourceDeleted_whenTheChunkIndexWasReplacedByAnotherOfTheSameName_keepsTheNewOne() throws Exception {
        IndexMetadata chunks = chunksOf(CHUNKS, "chunks-1", SOURCE, "src-1");
        janitor(true).clusterChanged(new ClusterChangedEvent("delete [docs]", state(chunks), state(index(SOURCE, "src-1"), chunks)));

        // deleted and created again under the same name, even recording the same (deleted) source incarnation
        ClusterState replaced = state(chunksOf(CHUNKS, "chunks-2", SOURCE, "src-1"));
        assertSame(replaced, onlyTask().execute(replaced));
        ClusterState gone = state();
        assertSame(gone, onlyTask().execute(gone));
        assertEquals(List.of(), deleted);
    }

    public void testSourceDeleted_whenNoChunkIndexRecordsThatIncarnation_submitsNothing() {
        // chunk indices of an older incarnation, of the source before it existed, of another source, and a plain index
        ClusterState before = state(index(SOURCE, "src-2"), chunksOf("old-chunks", "c-1", SOURCE, "src-1"),
            chunksOf("na-chunks", "c-2", SOURCE, NA), chunksOf("other-chunks", "c-3", "other", "src-2"), index("plain", "p-1"));
        ClusterState after = state(chunksOf("old-chunks", "c-1", SOURCE, "src-1"), chunksOf("na-chunks", "c-2", SOURCE, NA),
            chunksOf("other-chunks", "c-3", "other", "src-2"), index("plain", "p-1"));

        janitor(true).clusterChanged(new ClusterChangedEvent("delete [docs]", after, before));

        assertEquals(List.of(), clusterService.submitted);
    }

    public void testSourceDeleted_withTheSettingOff_doesNothing() {
        IndexMetadata chunks = chunksOf(CHUNKS, "chunks-1", SOURCE, "src-1");
        ClusterState before = state(index(SOURCE, "src-1"), chunks);
        ClusterState after = state(chunks);

        janitor(false).clusterChanged(new ClusterChangedEvent("delete [docs]", after, before));

        assertEquals(List.of(), clusterService.submitted);
    }

    public void testSetting_isDynamic() {
        IndexMetadata chunks = chunksOf(CHUNKS, "chunks-1", SOURCE, "src-1");
        ClusterChangedEvent deletion = new ClusterChangedEvent("delete [docs]", state(chunks), state(index(SOURCE, "src-1"), chunks));
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

        janitor(true).clusterChanged(new ClusterChangedEvent("delete [docs]", state(afterMeta, false), state(beforeMeta, false)));

        assertEquals(List.of(), clusterService.submitted);
    }

    // ---- a source index is created

    public void testSourceCreated_recordsItsUuidInAChunkIndexThatRecordedNa_keepingTheOtherKeys() {
        Map<String, Object> mapping = ChunkDocuments.mapping(SOURCE, NA, null);
        IndexMetadata chunks = chunkIndex(CHUNKS, "chunks-1", mapping);
        IndexMetadata waiting = chunksOf("other-chunks", "chunks-2", "other", NA); // its source is not created
        IndexMetadata recorded = chunksOf("older-chunks", "chunks-3", SOURCE, "src-0"); // already records an incarnation
        ClusterState before = state(chunks, waiting, recorded);
        ClusterState after = state(index(SOURCE, "src-1"), chunks, waiting, recorded);

        janitor(true).clusterChanged(new ClusterChangedEvent("create [docs]", after, before));

        assertEquals(1, mappingUpdates.size());
        PutMappingClusterStateUpdateRequest put = mappingUpdates.get(0);
        assertArrayEquals(new Index[] { chunks.getIndex() }, put.indices());
        Map<String, Object> strata = strataMeta(InMemoryClient.parse(put.source()));
        Map<String, Object> expected = new java.util.LinkedHashMap<>(strataMeta(mapping));
        expected.put(ChunkDocuments.META_SOURCE_UUID, "src-1");
        assertEquals(expected, strata);
        assertEquals(List.of(), clusterService.submitted);
    }

    public void testSourceCreated_withTheSettingOff_recordsNothing() {
        IndexMetadata chunks = chunksOf(CHUNKS, "chunks-1", SOURCE, NA);
        janitor(false).clusterChanged(new ClusterChangedEvent("create [docs]", state(index(SOURCE, "src-1"), chunks), state(chunks)));
        assertEquals(List.of(), mappingUpdates);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> strataMeta(Map<String, Object> mapping) {
        return (Map<String, Object>) ((Map<String, Object>) mapping.get("_meta")).get(ChunkDocuments.META_KEY);
    }
}

package io.strata.chunkindex.registry;

import io.strata.chunkindex.TestClusterService;
import io.strata.chunkindex.ChunkDocuments;
import io.strata.chunkindex.ServingIndex;

import org.opensearch.cluster.ClusterState;
import org.opensearch.cluster.metadata.IndexMetadata;
import org.opensearch.cluster.metadata.Metadata;
import org.opensearch.core.index.Index;
import org.opensearch.index.IndexNotFoundException;
import org.opensearch.test.OpenSearchTestCase;

import java.util.List;
import java.util.Map;

import static io.strata.chunkindex.registry.ChunkIndexJanitorTests.chunksOf;
import static io.strata.chunkindex.TestClusterService.chunkIndex;
import static io.strata.chunkindex.TestClusterService.index;
import static io.strata.chunkindex.TestClusterService.state;

/**
 * The registry of chunk index ↔ concrete source index: read from the chunk indices' own metadata (never their mapping),
 * kept by applying each new cluster state incrementally, and written only by the register task, which decides on the
 * state it replaces.
 */
public class ChunkIndexRegistryTests extends OpenSearchTestCase {

    public void testApply_findsRegistrationsBothWays_andFollowsChangesAndDeletions() {
        ChunkIndexRegistry registry = new ChunkIndexRegistry();
        IndexMetadata a = chunksOf("a-chunks", "ca", "a", "ua");
        IndexMetadata b = chunksOf("b-chunks", "cb", "b", "ub");
        Metadata first = Metadata.builder().put(index("a", "ua"), false).put(index("b", "ub"), false).put(a, false).put(b, false)
            .put(chunkIndex("meta-only", "cm", Map.of("_meta", Map.of("strata", Map.of("source_index", "a", "source_index_uuid", "ua")))),
                false).build();
        registry.apply(first);
        assertEquals(new Index("a", "ua"), registry.ofChunkIndex("a-chunks").source());
        assertEquals(List.of("a-chunks"), registry.ofSource("ua").stream().map(r -> r.chunkIndex().getName()).toList());
        assertNull("a mapping's _meta registers nothing", registry.ofChunkIndex("meta-only"));

        // b-chunks deleted, a second chunk index registered to a
        IndexMetadata a2 = chunksOf("a-more", "ca2", "a", "ua");
        Metadata second = Metadata.builder(first).remove("b-chunks").put(a2, false).build();
        registry.apply(second);
        assertNull(registry.ofChunkIndex("b-chunks"));
        assertEquals(List.of(), registry.ofSource("ub"));
        assertEquals(2, registry.ofSource("ua").size());

        // source a deleted: its chunk indices are reported as those of a deleted source
        Metadata third = Metadata.builder(second).remove("a").build();
        registry.apply(third);
        assertEquals(List.of("a-chunks", "a-more"), registry.ofDeletedSource(third, "a").stream().map(r -> r.chunkIndex().getName()).toList());
        assertEquals(List.of(), registry.ofDeletedSource(third, "b"));
    }

    public void testChunkIndicesBeside_namesTheRegisteredChunkIndicesARequestLeavesOut() {
        ChunkIndexRegistry registry = new ChunkIndexRegistry();
        registry.apply(Metadata.builder().put(index("a", "ua"), false).put(index("b", "ub"), false).put(index("plain", "up"), false)
            .put(chunksOf("a-chunks", "ca", "a", "ua"), false).put(chunksOf("a-more", "ca2", "a", "ua"), false)
            .put(chunksOf("b-chunks", "cb", "b", "ub"), false).build());
        Index a = new Index("a", "ua");
        Index b = new Index("b", "ub");
        assertEquals(Map.of("a-chunks", "a", "a-more", "a"), registry.chunkIndicesBeside(new Index[] {a}));
        assertEquals(Map.of("a-more", "a", "b-chunks", "b"),
            registry.chunkIndicesBeside(new Index[] {a, b, new Index("a-chunks", "ca")}));
        assertEquals("a chunk index or a plain index has none", Map.of(),
            registry.chunkIndicesBeside(new Index[] {new Index("a-chunks", "ca"), new Index("plain", "up")}));
        assertEquals("another incarnation of a (another UUID) has none", Map.of(),
            registry.chunkIndicesBeside(new Index[] {new Index("a", "other")}));
    }

    public void testRegister_recordsTheSourceInTheChunkIndexsMetadata_onceAndForOneSourceOnly() {
        IndexMetadata chunks = chunkIndex("c", "cu", ChunkDocuments.mapping(null));
        ClusterState current = state(index("logs-1", "u1"), index("logs-2", "u2"), chunks);

        ClusterState registered = TransportRegisterChunkIndexAction.register(current, chunks.getIndex(), new Index("logs-1", "u1"));
        assertEquals(new Index("logs-1", "u1"), ChunkIndexRegistry.registrationOf(registered.metadata().index("c")).source());
        assertSame("again: nothing changes", registered,
            TransportRegisterChunkIndexAction.register(registered, chunks.getIndex(), new Index("logs-1", "u1")));

        IllegalArgumentException e = expectThrows(IllegalArgumentException.class,
            () -> TransportRegisterChunkIndexAction.register(registered, chunks.getIndex(), new Index("logs-2", "u2")));
        assertTrue(e.getMessage(), e.getMessage().contains("[target_index] [c] already holds the chunks of index [logs-1]"));
        assertTrue(e.getMessage(), e.getMessage().contains("\"target_index\": \"{{_index}}-chunks\""));
    }

    public void testRegister_whenEitherIndexIsGoneOrAnotherIncarnation_fails() {
        IndexMetadata chunks = chunkIndex("c", "cu", ChunkDocuments.mapping(null));
        ClusterState current = state(index("logs-1", "u1"), chunks);
        expectThrows(IndexNotFoundException.class,
            () -> TransportRegisterChunkIndexAction.register(current, chunks.getIndex(), new Index("logs-1", "deleted-uuid")));
        expectThrows(IndexNotFoundException.class,
            () -> TransportRegisterChunkIndexAction.register(current, new Index("c", "old-uuid"), new Index("logs-1", "u1")));
    }
    public void testServe_registersTheGenerationAndUnregistersTheOneItReplaces_inOneUpdate() {
        IndexMetadata g1 = chunkIndex("c-g1", "u-g1", ChunkDocuments.mapping(null));
        IndexMetadata g2 = chunkIndex("c-g2", "u-g2", ChunkDocuments.mapping(null));
        ClusterState current = state(index("logs", "ul"), g1, g2);
        ClusterState first = TransportRegisterChunkIndexAction.register(current, g1.getIndex(), new Index("logs", "ul"));

        ChunkIndexRegistry.Served served = new ChunkIndexRegistry.Served("c-g1", "cfg", new long[] {4, 7});
        ClusterState swapped = TransportRegisterChunkIndexAction.serve(first, g2.getIndex(), new Index("logs", "ul"), "c-g1", served);
        assertEquals(new Index("logs", "ul"), ChunkIndexRegistry.registrationOf(swapped.metadata().index("c-g2")).source());
        assertNull("the replaced generation is no longer registered", ChunkIndexRegistry.registrationOf(swapped.metadata().index("c-g1")));
        ChunkIndexRegistry.Served read = ChunkIndexRegistry.servedOf(swapped.metadata().index("c-g2"));
        assertEquals("c-g1", read.previous());
        assertEquals("cfg", read.config());
        assertArrayEquals(new long[] {4, 7}, read.checkpoints());
        assertNull("a chunk index registered by a write is no served generation", ChunkIndexRegistry.servedOf(first.metadata().index("c-g1")));

        // a generation of another source is not unregistered by a swap of this one
        IndexMetadata other = chunkIndex("o", "uo", ChunkDocuments.mapping(null));
        ClusterState withOther = TransportRegisterChunkIndexAction.register(state(index("logs", "ul"), index("x", "ux"), g2, other),
            other.getIndex(), new Index("x", "ux"));
        ClusterState kept = TransportRegisterChunkIndexAction.serve(withOther, g2.getIndex(), new Index("logs", "ul"), "o", served);
        assertEquals(new Index("x", "ux"), ChunkIndexRegistry.registrationOf(kept.metadata().index("o")).source());
    }

    public void testServingIndex_resolvesAnAliasToItsWriteIndex_andLeavesOtherNamesAsTheyAre() {
        IndexMetadata g1 = IndexMetadata.builder(chunkIndex("c-g1", "u1", ChunkDocuments.mapping(null)))
            .putAlias(org.opensearch.cluster.metadata.AliasMetadata.builder("c").writeIndex(false)).build();
        IndexMetadata g2 = IndexMetadata.builder(chunkIndex("c-g2", "u2", ChunkDocuments.mapping(null)))
            .putAlias(org.opensearch.cluster.metadata.AliasMetadata.builder("c").writeIndex(true)).build();
        Metadata metadata = Metadata.builder().put(g1, false).put(g2, false).put(index("plain", "up"), false).build();
        assertEquals("c-g2", ServingIndex.of(metadata, "c"));
        assertEquals("c-g1", ServingIndex.of(metadata, "c-g1"));
        assertEquals("plain", ServingIndex.of(metadata, "plain"));
        assertEquals("absent", ServingIndex.of(metadata, "absent"));
        assertTrue(ServingIndex.same(metadata, "c", "c-g2"));
        assertFalse(ServingIndex.same(metadata, "c", "c-g1"));
    }
}

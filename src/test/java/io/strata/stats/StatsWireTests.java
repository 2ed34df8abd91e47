package io.strata.stats;

import io.strata.model.ModelRef;
import io.strata.chunking.Chunk;
import io.strata.chunking.ChunkedParent;
import io.strata.chunking.Span;
import io.strata.stats.transport.StatsNodeResponse;
import io.strata.stats.transport.StatsResponse;
import org.junit.Test;
import org.opensearch.Version;
import org.opensearch.action.FailedNodeException;
import org.opensearch.cluster.ClusterName;
import org.opensearch.cluster.node.DiscoveryNode;
import org.opensearch.common.io.stream.BytesStreamOutput;
import org.opensearch.common.xcontent.XContentFactory;
import org.opensearch.common.xcontent.XContentHelper;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.common.bytes.BytesReference;
import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.common.transport.TransportAddress;
import org.opensearch.core.xcontent.MediaTypeRegistry;
import org.opensearch.core.xcontent.ToXContent;
import org.opensearch.core.xcontent.XContentBuilder;
import org.opensearch.threadpool.ThreadPoolStats;

import java.io.IOException;
import java.net.InetAddress;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

/** The counters as they travel between nodes and as the REST API shows them. */
@SuppressWarnings("unchecked")
public class StatsWireTests {
    private static final ModelRef BGE = ModelRef.embedded("bge-small-en-v15-q");
    private static final ModelRef ML = new ModelRef(null, "aBcD1234");

    private static ChunkedParent parent(int children) {
        Chunk p = new Chunk("parent text", new Span(0, 11), 0, 0);
        return new ChunkedParent(p, java.util.Collections.nCopies(children, new Chunk("child", new Span(0, 5), 1, 0)));
    }

    /** A node that chunked two documents, failed two, embedded and answered a query. */
    private static StrataStats busy() {
        StrataStats stats = new StrataStats();
        stats.ingest().chunked(List.of(parent(2), parent(3)));
        stats.ingest().chunked(List.of(parent(0)));
        stats.ingest().chunksWritten(3);
        stats.ingest().chunksDeleted(1);
        stats.ingest().vectors(5, 3);
        stats.ingest().limitSplits(4);
        stats.ingest().failed(StrataStats.Failure.BAD_INPUT);
        stats.ingest().failed(StrataStats.Failure.REJECTED);
        stats.model(BGE).counting(8, ActionListener.<String>wrap(r -> {}, e -> {})).onResponse("ok");
        stats.model(BGE).counting(1, ActionListener.<String>wrap(r -> {}, e -> {})).onResponse("ok");
        stats.model(ML).counting(4, ActionListener.<String>wrap(r -> {}, e -> {})).onFailure(new IllegalStateException("down"));
        stats.query().received();
        stats.query().embedded();
        stats.queryLaneTimedOut();
        stats.queryLaneTimedOut();
        StrataStats.Progress book = stats.track("books", "emma", 5_000_000);
        book.planned(3000, 21000, 1000);
        book.stage(StrataStats.Stage.EMBEDDING);
        book.embedded(640);
        return stats;
    }

    private static ThreadPoolStats.Stats pool() {
        return new ThreadPoolStats.Stats("strata_inference", 2, 7, 1, 3, 2, 100, 0);
    }

    private static ThreadPoolStats.Stats queryPool() {
        return new ThreadPoolStats.Stats("strata_inference_query", 1, 4, 1, 6, 1, 50, 0);
    }

    private static NodeStats roundTrip(NodeStats stats) throws IOException {
        try (BytesStreamOutput out = new BytesStreamOutput()) {
            stats.writeTo(out);
            try (StreamInput in = out.bytes().streamInput()) {
                return NodeStats.read(in);
            }
        }
    }

    private static Map<String, Object> json(ToXContent content, boolean object) throws IOException {
        XContentBuilder builder = XContentFactory.jsonBuilder();
        if (object) {
            builder.startObject();
        }
        content.toXContent(builder, ToXContent.EMPTY_PARAMS);
        if (object) {
            builder.endObject();
        }
        return XContentHelper.convertToMap(BytesReference.bytes(builder), false, MediaTypeRegistry.JSON).v2();
    }

    @Test
    public void testSnapshot_countsDocumentsChunksVectorsFailuresModelsAndQueries() {
        NodeStats s = busy().snapshot(pool(), queryPool(), Map.of("bge-small-en-v15-q", 2L));
        assertEquals(new NodeStats.Ingest(2, 3, 5, 3, 1, 5, 3, Map.of("bad_input", 1L, "rejected", 1L, "model", 0L, "write", 0L,
            "other", 0L), 4), s.ingest());
        assertEquals(new NodeStats.Queue(7, 1, 3), s.queue());
        assertEquals(new NodeStats.QueryLane(4, 1, 6, 2), s.queryLane());
        NodeStats.Model bge = s.models().get("bge-small-en-v15-q");
        assertEquals(List.of(2L, 9L, 0L, 2L, true), List.of(bge.calls(), bge.texts(), bge.errors(), bge.truncated(), bge.loaded()));
        NodeStats.Model ml = s.models().get("aBcD1234");
        assertEquals(List.of(1L, 4L, 1L, false), List.of(ml.calls(), ml.texts(), ml.errors(), ml.embedded()));
        assertEquals(new NodeStats.Query(1, 1), s.query());
        NodeStats.InProgress book = s.inProgress().get(0);
        assertEquals(List.of("books", "emma", 5_000_000L, "embedding", 21000, 1000, 640, 3000, 0), List.of(book.index(), book.id(),
            book.chars(), book.stage(), book.texts(), book.textsReused(), book.textsEmbedded(), book.chunkDocuments(),
            book.chunkDocumentsWritten()));
    }

    @Test
    public void testTrack_showsLargeDocumentsUntilDone_inStartOrder_andIgnoresSmallOnes() {
        StrataStats stats = new StrataStats();
        StrataStats.Progress small = stats.track("src", "small", StrataStats.PROGRESS_MIN_CHARS - 1);
        assertFalse(small.isTracked());
        small.written(5);
        small.done();
        StrataStats.Progress first = stats.track("src", null, StrataStats.PROGRESS_MIN_CHARS);
        StrataStats.Progress second = stats.track("src", "b", 2 * StrataStats.PROGRESS_MIN_CHARS);
        first.id("a");
        first.planned(10, 0, 0);
        first.stage(StrataStats.Stage.WRITING);
        first.written(4);
        List<NodeStats.InProgress> shown = stats.snapshot(null, null, Map.of()).inProgress();
        assertEquals(List.of("a", "b"), shown.stream().map(NodeStats.InProgress::id).toList());
        assertEquals(List.of("writing", 10, 4), List.of(shown.get(0).stage(), shown.get(0).chunkDocuments(),
            shown.get(0).chunkDocumentsWritten()));
        assertEquals("chunking", shown.get(1).stage());
        first.done();
        first.done();
        assertEquals(List.of("b"), stats.snapshot(null, null, Map.of()).inProgress().stream().map(NodeStats.InProgress::id).toList());
        second.done();
        assertEquals(List.of(), stats.snapshot(null, null, Map.of()).inProgress());
    }

    @Test
    public void testTrack_beyondTheLimit_runsUntracked() {
        StrataStats stats = new StrataStats();
        for (int i = 0; i < StrataStats.MAX_IN_PROGRESS; i++) {
            assertTrue(stats.track("src", "d" + i, StrataStats.PROGRESS_MIN_CHARS).isTracked());
        }
        StrataStats.Progress extra = stats.track("src", "extra", StrataStats.PROGRESS_MIN_CHARS);
        assertFalse(extra.isTracked());
        assertEquals(StrataStats.MAX_IN_PROGRESS, stats.snapshot(null, null, Map.of()).inProgress().size());
    }

    @Test
    public void testSnapshot_listsLoadedModelsNeverCalled_andZerosWithoutThePool() {
        NodeStats s = new StrataStats().snapshot(null, null, Map.of("other-model", 0L));
        assertEquals(new NodeStats.Model(true, 0, 0, 0, 0, 0, true), s.models().get("other-model"));
        assertEquals(new NodeStats.Queue(0, 0, 0), s.queue());
        assertEquals(new NodeStats.QueryLane(0, 0, 0, 0), s.queryLane());
        assertEquals(0, s.ingest().documents());
    }

    @Test
    public void testModelIds_beyondTheLimit_areNotCounted_embeddedModelsAlwaysAre() {
        StrataStats stats = new StrataStats();
        for (int i = 0; i < StrataStats.MAX_MODELS + 10; i++) {
            stats.model(new ModelRef(null, "junk-" + i)).counting(1, ActionListener.<String>wrap(r -> {}, e -> {})).onFailure(
                new IllegalArgumentException("unknown model"));
        }
        stats.model(new ModelRef(null, "late-id")).counting(1, ActionListener.<String>wrap(r -> {}, e -> {})).onResponse("ok");
        stats.model(BGE).counting(1, ActionListener.<String>wrap(r -> {}, e -> {})).onResponse("ok");
        NodeStats s = stats.snapshot(null, null, Map.of());
        assertEquals(StrataStats.MAX_MODELS + 1, s.models().size());
        assertNull(s.models().get("late-id"));
        assertEquals(1, s.models().get("bge-small-en-v15-q").calls());
    }

    @Test
    public void testNodeStats_wireRoundTrip() throws IOException {
        NodeStats s = busy().snapshot(pool(), queryPool(), Map.of("bge-small-en-v15-q", 2L));
        NodeStats back = roundTrip(s);
        assertEquals(s, back);
        assertEquals("failures keep their order", List.of("bad_input", "rejected", "model", "write", "other"),
            List.copyOf(back.ingest().failures().keySet()));
    }

    @Test
    public void testNodeStats_json() throws IOException {
        Map<String, Object> m = json(busy().snapshot(pool(), queryPool(), Map.of("bge-small-en-v15-q", 2L)), true);
        Map<String, Object> ingest = (Map<String, Object>) m.get("ingest");
        assertEquals(2, ingest.get("documents"));
        assertEquals(3, ingest.get("chunk_documents_written"));
        assertEquals(3, ingest.get("vectors_reused"));
        assertEquals(4, ingest.get("limit_splits"));
        assertEquals(1, ((Map<String, Object>) ingest.get("failures")).get("bad_input"));
        Map<String, Object> inference = (Map<String, Object>) m.get("inference");
        assertEquals(Map.of("size", 7, "active", 1, "rejected", 3), inference.get("queue"));
        assertEquals(Map.of("size", 4, "active", 1, "rejected", 6, "timed_out", 2), inference.get("query_lane"));
        Map<String, Object> models = (Map<String, Object>) inference.get("models");
        Map<String, Object> bge = (Map<String, Object>) models.get("bge-small-en-v15-q");
        assertEquals(Set.of("type", "calls", "texts", "errors", "time_ms", "truncated", "loaded"), bge.keySet());
        assertEquals("embedded", bge.get("type"));
        assertEquals(true, bge.get("loaded"));
        Map<String, Object> ml = (Map<String, Object>) models.get("aBcD1234");
        assertEquals("ml_commons", ml.get("type"));
        assertFalse("truncation is unknown for ml-commons models", ml.containsKey("truncated"));
        assertEquals(Map.of("multi_granular", 1, "embedded_queries", 1), m.get("query"));
        List<Map<String, Object>> inProgress = (List<Map<String, Object>>) ingest.get("in_progress");
        assertEquals(1, inProgress.size());
        Map<String, Object> book = inProgress.get(0);
        assertEquals(Set.of("index", "id", "chars", "stage", "texts", "texts_reused", "texts_embedded", "chunk_documents",
            "chunk_documents_written", "elapsed_ms"), book.keySet());
        assertEquals(List.of("emma", "embedding", 21000, 640), List.of(book.get("id"), book.get("stage"), book.get("texts"),
            book.get("texts_embedded")));
    }

    @Test
    public void testStatsResponse_wireRoundTrip_keepsNodesAndFailures() throws IOException {
        TransportAddress address = new TransportAddress(InetAddress.getLoopbackAddress(), 9300);
        DiscoveryNode n0 = new DiscoveryNode("node-0", "id0", address, Map.of(), Set.of(), Version.CURRENT);
        DiscoveryNode n1 = new DiscoveryNode("node-1", "id1", address, Map.of(), Set.of(), Version.CURRENT);
        NodeStats s0 = busy().snapshot(pool(), queryPool(), Map.of());
        NodeStats s1 = new StrataStats().snapshot(null, null, Map.of());
        StatsResponse response = new StatsResponse(new ClusterName("it"), List.of(new StatsNodeResponse(n0, s0),
            new StatsNodeResponse(n1, s1)), List.of(new FailedNodeException("id2", "timed out", new IllegalStateException("slow"))));
        StatsResponse back;
        try (BytesStreamOutput out = new BytesStreamOutput()) {
            response.writeTo(out);
            try (StreamInput in = out.bytes().streamInput()) {
                back = new StatsResponse(in);
            }
        }
        assertEquals("it", back.getClusterName().value());
        assertEquals(s0, back.getNodesMap().get("id0").stats());
        assertEquals(s1, back.getNodesMap().get("id1").stats());
        assertEquals("id2", back.failures().get(0).nodeId());

        Map<String, Object> nodes = (Map<String, Object>) json(back, true).get("nodes");
        assertEquals(Set.of("id0", "id1"), nodes.keySet());
        Map<String, Object> node0 = (Map<String, Object>) nodes.get("id0");
        assertEquals("node-0", node0.get("name"));
        assertTrue(node0.keySet().containsAll(Set.of("ingest", "inference", "query")));
        assertNull(((Map<String, Object>) ((Map<String, Object>) node0.get("inference")).get("models")).get("missing"));
    }
}

package io.strata.it;

import io.strata.chaos.NodeSampler;
import io.strata.chunking.TestTexts;
import io.strata.demo.JsonRest;
import io.strata.chunkindex.store.Slicing;
import io.strata.stats.StrataStats;
import org.apache.hc.core5.http.HttpHost;
import org.opensearch.client.RestClient;
import org.opensearch.common.settings.Settings;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Very large documents (issue 7): a 5 MB book is chunked and written in bounded bulk slices with its progress visible in
 * {@code GET _plugins/_strata/stats} while it runs, and the node's heap stays bounded; an embedded large document is
 * embedded slice by slice, so small documents sent to the same node meanwhile are not held up behind it.
 *
 * <p>The 5 MB book is written without vectors: embedding its ~20,000 texts takes minutes on two cores (the full embedded
 * run is {@code bin/strata-chaos bigdoc}, figures in the README). Everything goes to one node (the first), so the
 * processor, its inference pool (one thread on two cores) and the progress report are that node's.
 */
@SuppressWarnings("unchecked")
public class LargeDocumentIT extends StrataRestTestCase {
    /** 5 MiB of text: the bundled Emma chapters, repeated with a numbered heading. */
    static final int BOOK_CHARS = 5 << 20;
    /**
     * Heap bound, as a share of the node's heap (bin/strata-node: 1 GiB). What the book needs at once is far less: its
     * request and source (~5 MB each, as bytes and as a String), its parents and children (~4 × 5 MB of text), one bulk
     * slice (≤ 4 MB, and its copies on the way to the shards) — under 100 MB, against ~40 MB of JSON in one bulk request
     * before (3× that with vectors). Sampled {@code heap_used} includes garbage that G1 has not collected yet: eden fills
     * up to its target before a young collection, and on a busy machine G1 grows eden until the total comes within a few
     * percent of the heap (seen: 974 of 1,024 MB with the old generation at 391 MB), so the total says nothing about what
     * the document holds. The bound applies to what survived young collections (heap used minus eden: old generation +
     * survivors), which is where a document held in memory at once would show; the total is reported. The slicing itself
     * is asserted exactly (bulk slices of {@link Slicing#bulkDocs()} documents, one model call per embedding slice).
     */
    static final double HEAP_BOUND = 0.75;

    @Override
    protected Settings restClientSettings() {
        return Settings.builder().put(super.restClientSettings()).put(CLIENT_SOCKET_TIMEOUT, "300s").build();
    }

    static String book(int chars) {
        String emma = TestTexts.emma();
        StringBuilder sb = new StringBuilder(chars + emma.length());
        for (int part = 1; sb.length() < chars; part++) {
            sb.append("PART ").append(part).append("\n\n").append(emma).append("\n\n");
        }
        return sb.substring(0, chars).strip();
    }

    private RestClient firstNode() throws IOException {
        return buildClient(restClientSettings(), new HttpHost[] { getClusterHosts().get(0) });
    }

    /** Parent chunk documents of {@code id} and their nested children, counted in {@code index}. */
    private static long[] chunkCounts(RestClient client, String index, String id) throws IOException {
        JsonRest.call(client, "POST", "/" + index + "/_refresh", null);
        Map<String, Object> r = JsonRest.call(client, "POST", "/" + index + "/_search", """
            {"size": 0, "track_total_hits": true, "query": {"term": {"source_id": "%s"}},
             "aggs": {"children": {"nested": {"path": "children"},
               "aggs": {"chunked": {"filter": {"range": {"children.level": {"gt": 0}}}}}}}}""".formatted(id));
        long parents = ((Number) ((Map<String, Object>) ((Map<String, Object>) r.get("hits")).get("total")).get("value")).longValue();
        // level-0 entries are the parents' own vectors (chunk format 2), not children of the chunking
        Map<String, Object> nested = (Map<String, Object>) ((Map<String, Object>) r.get("aggregations")).get("children");
        long children = ((Number) ((Map<String, Object>) nested.get("chunked")).get("doc_count")).longValue();
        return new long[] { parents, children };
    }

    private static Map<String, Object> summary(RestClient client, String index, String id) throws IOException {
        return (Map<String, Object>) ((Map<String, Object>) JsonRest.call(client, "GET", "/" + index + "/_doc/" + id, null).get("_source"))
            .get("strata");
    }

    private static String put(RestClient client, String index, String id, String pipeline, String text) throws IOException {
        return (String) JsonRest.call(client, "PUT", "/" + index + "/_doc/" + id + "?pipeline=" + pipeline, JsonRest.json(Map.of("body",
            text))).get("result");
    }

    public void testFiveMegabyteBook_isWrittenInBulkSlices_withProgressVisible_inBoundedHeap() throws Exception {
        putPipeline("bigdoc-plain", "{\"field\": \"body\", \"target_index\": \"bigdoc-plain-chunks\", \"embed\": false}");
        String text = book(BOOK_CHARS);
        try (RestClient node = firstNode(); NodeSampler sampler = new NodeSampler(node, 50)) {
            long t0 = System.nanoTime();
            assertEquals("created", put(node, "bigdoc-src", "book", "bigdoc-plain", text));
            double seconds = (System.nanoTime() - t0) / 1e9;
            Thread.sleep(200); // one more sample after the end
            sampler.close();

            Map<String, Object> summary = summary(node, "bigdoc-src", "book");
            int parents = ((Number) summary.get("parents")).intValue();
            int children = ((Number) summary.get("children")).intValue();
            assertArrayEquals(new long[] { parents, children }, chunkCounts(node, "bigdoc-plain-chunks", "book"));
            assertTrue("a 5 MB book has thousands of parents: " + parents, parents > 2000);

            List<NodeSampler.Seen> seen = sampler.seen("book");
            // the first sample of each state: "1234ms writing 500/4093"
            Map<String, Long> firstSeen = new java.util.LinkedHashMap<>();
            seen.forEach(s -> firstSeen.putIfAbsent(s.stage() + " " + s.get("chunk_documents_written") + "/" + s.get("chunk_documents"),
                s.atMillis()));
            List<String> timeline = firstSeen.entrySet().stream().map(e -> e.getValue() + "ms " + e.getKey()).toList();
            assertFalse("the book was seen in flight: " + sampler.errors(), seen.isEmpty());
            assertTrue("seen half-written, between two bulk slices: " + timeline, seen.stream().anyMatch(s -> s.stage().equals("writing")
                && s.get("chunk_documents") == parents && s.get("chunk_documents_written") > 0
                && s.get("chunk_documents_written") < parents));
            assertTrue(seen.stream().allMatch(s -> s.get("chars") == text.length() && s.get("texts") == 0));
            // ~4 KB a chunk document without vectors: the document limit of a bulk slice comes before its byte limit
            int sliceDocs = Slicing.DEFAULTS.bulkDocs();
            // chunks 1..n-1 in slices, then chunk 0 alone: the commit (ChunkCommit)
            assertTrue("written in bulk slices of " + sliceDocs + ": " + timeline, seen.stream().filter(s -> s.stage().equals("writing"))
                .allMatch(s -> s.get("chunk_documents_written") % sliceDocs == 0 || s.get("chunk_documents_written") >= parents - 1));
            assertTrue("several slices seen: " + timeline, seen.stream().map(s -> s.get("chunk_documents_written")).distinct().count() >= 3);
            Map<String, Object> now = (Map<String, Object>) ((Map<String, Object>) JsonRest.call(node, "GET", "/_plugins/_strata/stats",
                null).get("nodes")).values().iterator().next();
            assertEquals("finished documents leave the report", List.of(),
                ((Map<String, Object>) now.get("ingest")).get("in_progress"));

            logger.info("5 MB book without vectors: {} chars, {} parents, {} children in {} s; heap peak {} MB, retained "
                + "(old + survivors) peak {} MB, heap {} MB; {} samples; progress {}", text.length(), parents, children, String.format(java.util.Locale.ROOT, "%.1f",
                    seconds), mb(sampler.peakHeap()), mb(sampler.peakRetained()), mb(sampler.maxHeap()), sampler.samples(), timeline);
            assertHeapBounded(sampler);
        }
    }

    public void testEmbeddedLargeDocument_isEmbeddedInSlices_andSmallDocumentsAreNotHeldUp() throws Exception {
        putPipeline("bigdoc-emb", "{\"field\": \"body\", \"target_index\": \"bigdoc-emb-chunks\"}");
        String text = book(4 * TestTexts.emma().length()); // ~155k characters: ~650 texts, several slices
        assertTrue("tracked in the stats", text.length() >= StrataStats.PROGRESS_MIN_CHARS);
        List<String> chapters = List.copyOf(emmaChapters().values());
        ExecutorService pool = Executors.newFixedThreadPool(5);
        try (RestClient node = firstNode(); NodeSampler sampler = new NodeSampler(node, 50)) {
            put(node, "bigdoc-emb-src", "warm", "bigdoc-emb", chapters.get(0).substring(0, 500)); // the model is loaded
            long calls0 = modelCalls(node);
            long t0 = System.nanoTime();
            Future<Long> big = pool.submit(() -> {
                put(node, "bigdoc-emb-src", "big", "bigdoc-emb", text);
                return System.nanoTime();
            });
            // small documents start once the big one is embedding, one after another, each timed
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (sampler.seen("big").stream().noneMatch(s -> s.stage().equals("embedding") && s.get("texts_embedded") > 0)) {
                assertTrue("the big document reached its embedding stage", System.nanoTime() < deadline && !big.isDone());
                Thread.sleep(20);
            }
            // four small documents at once, each timed: they queue behind at most the slice running now
            List<Future<long[]>> small = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                String id = "small-" + i;
                String body = chapters.get(i % chapters.size()).substring(0, 1500);
                small.add(pool.submit(() -> {
                    long s0 = System.nanoTime();
                    put(node, "bigdoc-emb-src", id, "bigdoc-emb", body);
                    return new long[] { s0, System.nanoTime() };
                }));
            }
            List<Long> smallDone = new ArrayList<>();
            List<Double> smallSeconds = new ArrayList<>();
            for (Future<long[]> f : small) {
                long[] times = f.get(300, TimeUnit.SECONDS);
                smallDone.add(times[1]);
                smallSeconds.add((times[1] - times[0]) / 1e9);
            }
            long bigDone = big.get(300, TimeUnit.SECONDS);
            sampler.close();

            Map<String, Object> summary = summary(node, "bigdoc-emb-src", "big");
            int parents = ((Number) summary.get("parents")).intValue();
            int children = ((Number) summary.get("children")).intValue();
            assertArrayEquals(new long[] { parents, children }, chunkCounts(node, "bigdoc-emb-chunks", "big"));
            int texts = parents + children;
            int slices = (texts + Slicing.DEFAULTS.embedTexts() - 1) / Slicing.DEFAULTS.embedTexts();
            assertTrue("several slices: " + texts + " texts", slices >= 3);
            assertTrue("one model call per slice and per small document", modelCalls(node) - calls0 >= slices + 4);
            double bigSeconds = (bigDone - t0) / 1e9;
            for (long done : smallDone) {
                assertTrue("each small document finished before the big one", done < bigDone);
            }
            List<NodeSampler.Seen> seen = sampler.seen("big");
            // Not held up: when each small document was done, the big one still had at least a whole slice to embed.
            // Queued behind it, a small document would finish only after its last slice. (An order, not a time ratio:
            // the machine's speed moves both sides alike.)
            for (long done : smallDone) {
                long at = sampler.millisAt(done);
                int embeddedThen = seen.stream().filter(s -> s.atMillis() <= at)
                    .mapToInt(s -> s.get("texts_embedded")).max().orElse(0);
                assertTrue("small documents are not held up behind the big one: one finished when the big one had embedded "
                    + embeddedThen + " of " + texts + " texts (slices of " + Slicing.DEFAULTS.embedTexts() + ")",
                    embeddedThen <= texts - Slicing.DEFAULTS.embedTexts());
            }
            assertTrue("seen part-embedded", seen.stream().anyMatch(s -> s.get("texts") == texts && s.get("texts_embedded") > 0
                && s.get("texts_embedded") < texts));
            assertTrue("seen writing", seen.stream().anyMatch(s -> s.stage().equals("writing")));
            logger.info("embedded large document: {} chars, {} parents, {} children ({} slices) in {} s = {} texts/s; small documents "
                + "meanwhile {} s; heap peak {} MB, retained (old + survivors) peak {} MB", text.length(), parents, children, slices,
                String.format(java.util.Locale.ROOT, "%.1f", bigSeconds), String.format(java.util.Locale.ROOT, "%.1f", texts / bigSeconds),
                smallSeconds, mb(sampler.peakHeap()), mb(sampler.peakRetained()));
            assertHeapBounded(sampler);
        } finally {
            pool.shutdownNow();
        }
    }

    /** Embedding calls of the bundled model on every node. */
    private static long modelCalls(RestClient client) throws IOException {
        long sum = 0;
        for (Object n : ((Map<String, Object>) JsonRest.call(client, "GET", "/_plugins/_strata/stats", null).get("nodes")).values()) {
            Map<String, Object> models = (Map<String, Object>) ((Map<String, Object>) ((Map<String, Object>) n).get("inference"))
                .get("models");
            if (models.get("e5-small-v2-q") instanceof Map<?, ?> m) {
                sum += ((Number) m.get("calls")).longValue();
            }
        }
        return sum;
    }

    private static void assertHeapBounded(NodeSampler sampler) {
        assertFalse("heap was sampled", sampler.peakRetained().isEmpty());
        for (Map.Entry<String, Long> e : sampler.peakRetained().entrySet()) {
            long max = sampler.maxHeap().get(e.getKey());
            assertTrue(e.getKey() + " retained heap (old + survivors) peak " + (e.getValue() >> 20) + " MB of " + (max >> 20)
                + " (total heap peak " + (sampler.peakHeap().get(e.getKey()) >> 20) + " MB)", e.getValue() < HEAP_BOUND * max);
        }
    }

    private static Map<String, Long> mb(Map<String, Long> bytes) {
        Map<String, Long> out = new java.util.TreeMap<>();
        bytes.forEach((k, v) -> out.put(k, v >> 20));
        return out;
    }
}

package io.strata.it;

import org.opensearch.client.ResponseException;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * {@code _swap} serves a built generation under the chunk index's name (an alias whose write index it is) and
 * {@code _rollback} serves the previous one again. Oracle: {@code _chunk} of each stored source text under the config the
 * served generation was built with, against the chunk documents searched through the name (brute force: every document);
 * a searcher polling through the name throughout checks that each response comes from one generation and holds a whole
 * document (a document's chunks equal one config's cut of its text).
 */
@SuppressWarnings("unchecked")
public class SwapIT extends StrataRestTestCase {
    private static final List<Double> GRANULARITIES = List.of(0.5);

    private static Map<String, Object> strategy(int maxWords) {
        return Map.of("type", "recursive", "max_words", maxWords);
    }

    private static String pipelineJson(String target, int maxWords) {
        return "{\"field\": \"body\", \"target_index\": \"" + target + "\", \"embed\": false, "
            + "\"strategy\": {\"type\": \"recursive\", \"max_words\": " + maxWords + "}, \"granularities\": [0.5]}";
    }

    private static final String[] TEMPLATES = {
        "Document %d is about Highbury. It rained in Surrey that week. Mr Knightley walked to Hartfield twice, and Emma painted "
            + "a portrait of Harriet for the drawing room. The portrait was admired by everyone who saw it, and Mr Elton carried "
            + "it to London to be framed, with great care and many compliments.",
        "Note %d. Frank Churchill wrote from Enscombe.",
        "Letter %d from Randalls: Mrs Weston sends her love. The ball at the Crown was a success, though the room was cold and the "
            + "supper was late. Miss Bates talked of Jane Fairfax, of her letters, of her health, and of the baked apples that Mr "
            + "Woodhouse would not eat. Everyone agreed that the evening had been a pleasant one." };

    private static String text(int i) {
        return TEMPLATES[i % TEMPLATES.length].formatted(i);
    }

    private static int status(Exception e) {
        return e instanceof ResponseException r ? r.getResponse().getStatusLine().getStatusCode() : -1;
    }

    /** {@code chunks} is still the concrete index it was (no alias of that name), and {@code source} has no write block. */
    private static void assertNothingChanged(String source, String chunks) throws IOException {
        Map<String, Object> aliases = call("GET", "/" + chunks + "/_alias");
        assertEquals("a concrete index without aliases: " + aliases, Map.of(chunks, Map.of("aliases", Map.of())), aliases);
        Map<String, Object> settings = call("GET", "/" + source + "/_settings/index.blocks.write");
        Map<String, Object> ofSource = (Map<String, Object>) settings.get(source);
        assertTrue("no write block left: " + settings, ofSource == null || ((Map<String, Object>) ofSource.get("settings")).isEmpty());
    }

    private static Map<String, Object> generationsOf(String source) throws IOException {
        Map<String, Object> listed = call("GET", "/_plugins/_strata/generations?index=" + source);
        Map<String, Object> byIndex = new LinkedHashMap<>();
        for (Map<String, Object> g : (List<Map<String, Object>>) listed.get("generations")) {
            byIndex.put((String) g.get("index"), g);
        }
        return byIndex;
    }

    /** The concrete indices alias (or index) {@code name} resolves to, with whether each is its write index. */
    private static Map<String, Object> aliasOf(String name) throws IOException {
        Map<String, Object> out = new LinkedHashMap<>();
        Map<String, Object> r = call("GET", "/_alias/" + name);
        r.forEach((index, v) -> out.put(index, ((Map<String, Object>) ((Map<String, Object>) v).get("aliases")).get(name)));
        return out;
    }

    /**
     * Polls the name while the generation changes: every response comes from one concrete index (never a mix), and the
     * watched document's chunks are whole under one config (never partial).
     */
    private static final class Searcher extends Thread {
        final String name;
        final List<Object> oldCut;
        final List<Object> newCut;
        final AtomicBoolean stop = new AtomicBoolean();
        final AtomicReference<Throwable> failed = new AtomicReference<>();
        final Set<String> seenIndices = ConcurrentHashMap.newKeySet();
        final AtomicInteger oldSeen = new AtomicInteger();
        final AtomicInteger newSeen = new AtomicInteger();
        final AtomicInteger polls = new AtomicInteger();
        final List<String> order = new ArrayList<>();
        /** When failed searches began and ended (System.nanoTime): in flight when a concrete name is replaced by the alias. */
        final List<long[]> failedAt = java.util.Collections.synchronizedList(new ArrayList<>());
        final List<String> errors = java.util.Collections.synchronizedList(new ArrayList<>());

        Searcher(String name, List<Object> oldCut, List<Object> newCut) {
            this.name = name;
            this.oldCut = oldCut;
            this.newCut = newCut;
        }

        @Override
        public void run() {
            try {
                while (!stop.get()) {
                    long begun = System.nanoTime();
                    try {
                        poll();
                        polls.incrementAndGet();
                    } catch (ResponseException e) {
                        failedAt.add(new long[] { begun, System.nanoTime() });
                        errors.add(e.getMessage());
                    }
                }
            } catch (Throwable e) {
                failed.set(e);
            }
        }

        /** One search of each kind; partial results are refused, so a search that lost shards is an error, never fewer hits. */
        private void poll() throws IOException {
            {
                {
                    Map<String, Object> r = call("POST", "/" + name + "/_search?allow_partial_search_results=false", """
                        {"size": 100, "_source": true, "query": {"term": {"source_id": "d3"}}, "sort": [{"ordinal": "asc"}]}""");
                    List<Map<String, Object>> hits = (List<Map<String, Object>>) ((Map<String, Object>) r.get("hits")).get("hits");
                    Set<String> indices = new HashSet<>();
                    List<Map<String, Object>> chunks = new ArrayList<>();
                    for (Map<String, Object> h : hits) {
                        indices.add((String) h.get("_index"));
                        chunks.add((Map<String, Object>) h.get("_source"));
                    }
                    assertEquals("one generation per response: " + indices, 1, indices.size());
                    List<Object> shape = chunkShape(chunks);
                    if (shape.equals(oldCut)) {
                        oldSeen.incrementAndGet();
                        record("old");
                    } else if (shape.equals(newCut)) {
                        newSeen.incrementAndGet();
                        record("new");
                    } else {
                        throw new AssertionError("d3 is neither whole cut: " + shape);
                    }
                    seenIndices.addAll(indices);
                    Map<String, Object> q = call("POST", "/" + name + "/_search?allow_partial_search_results=false", json(Map.of("size", 20, "query", Map.of(
                        "multi_granular", Map.of("query_text", "Knightley walked to Hartfield", "mode", "lexical", "k", 20)))));
                    Set<String> qIndices = new HashSet<>();
                    for (Map<String, Object> h : (List<Map<String, Object>>) ((Map<String, Object>) q.get("hits")).get("hits")) {
                        qIndices.add((String) h.get("_index"));
                    }
                    assertTrue("multi_granular hits from one generation: " + q, qIndices.size() == 1);
                }
            }
        }

        private void record(String which) {
            synchronized (order) {
                if (order.isEmpty() || !order.get(order.size() - 1).equals(which)) {
                    order.add(which);
                }
            }
        }
    }

    public void testSwapAndRollback_withConcurrentWritesAndSearches_serveOneWholeGenerationAtATime() throws Exception {
        String source = "sw-live";
        String chunks = source + "-chunks";
        putPipeline("sw-live", pipelineJson(chunks, 40));
        call("PUT", "/" + source, "{\"settings\": {\"index.number_of_shards\": 2, \"index.default_pipeline\": \"sw-live\"}}");
        Map<String, Map<String, Object>> docs = new LinkedHashMap<>();
        for (int i = 0; i < 200; i++) {
            docs.put("d" + i, Map.of("body", text(i)));
        }
        assertEquals(false, bulk(source, "sw-live", docs).get("errors"));
        for (int i = 0; i < 5; i++) {
            call("PUT", "/" + source + "/_doc/r" + i + "?routing=rr&refresh=true", json(Map.of("body", text(i))));
        }
        putPipeline("sw-live", pipelineJson(chunks, 20));
        Map<String, Object> built = call("POST", "/_plugins/_strata/_rebuild?index=" + source);
        assertEquals(built.toString(), chunks + "-g2", built.get("generation_index"));

        // the pipeline now chunks under another config than the generation's: its writes would mix configs in it
        putPipeline("sw-live", pipelineJson(chunks, 30));
        ResponseException mixed = callFailing("POST", "/_plugins/_strata/_swap?index=" + source + "&generation=2", null);
        assertEquals(400, mixed.getResponse().getStatusLine().getStatusCode());
        assertTrue(mixed.getMessage(), mixed.getMessage().contains("[" + chunks + "-g2]") && mixed.getMessage().contains("config"));
        assertNothingChanged(source, chunks);
        putPipeline("sw-live", pipelineJson(chunks, 20));

        // d3 (never written meanwhile) is cut differently at θ 40 and θ 20: each response shows which generation it read
        Searcher searcher = new Searcher(chunks, cutByChunkApi(text(3), strategy(40), GRANULARITIES),
            cutByChunkApi(text(3), strategy(20), GRANULARITIES));
        assertNotEquals(searcher.oldCut, searcher.newCut);
        AtomicReference<Throwable> writerFailed = new AtomicReference<>();
        AtomicInteger refused = new AtomicInteger();
        AtomicBoolean swapped = new AtomicBoolean();
        Thread writer = new Thread(() -> {
            try {
                Random random = new Random(45);
                for (int k = 0; k < 150 || !swapped.get(); k++) {
                    int i = 10 + random.nextInt(200);
                    try {
                        switch (k % 3) {
                            case 0 -> call("PUT", "/" + source + "/_doc/d" + i, json(Map.of("body", text(i + 1) + " Rewritten " + k + ".")));
                            case 1 -> call("DELETE", "/" + source + "/_doc/d" + i);
                            default -> call("PUT", "/" + source + "/_doc/n" + k, json(Map.of("body", text(k))));
                        }
                    } catch (ResponseException e) {
                        int code = status(e);
                        if (code == 403 || code == 429 || code == 503) {
                            // the short write block of the swap: refused, and the client is told
                            assertTrue(e.getMessage(), e.getMessage().contains("block"));
                            refused.incrementAndGet();
                        } else if (code != 404) {
                            throw e;
                        }
                    }
                }
            } catch (Throwable e) {
                writerFailed.set(e);
            }
        });
        searcher.start();
        writer.start();
        Thread.sleep(300);
        long swapStart = System.nanoTime();
        Map<String, Object> swap = call("POST", "/_plugins/_strata/_swap?index=" + source + "&generation=2");
        long swapEnd = System.nanoTime();
        swapped.set(true);
        writer.join();
        // the searcher polls on after the swap: at least 5 whole polls begun after it answered
        int after = searcher.polls.get() + 1;
        long until = System.nanoTime() + 60_000_000_000L;
        while (searcher.polls.get() < after + 5 && System.nanoTime() < until && searcher.isAlive()) {
            Thread.sleep(50);
        }
        searcher.stop.set(true);
        searcher.join();
        assertNull(writerFailed.get());
        assertNull(searcher.failed.get());
        assertEquals(swap.toString(), chunks + "-g2", swap.get("serving"));
        assertEquals(swap.toString(), chunks + "-g1", swap.get("previous"));
        assertEquals("old, then new, never back: " + searcher.order + "; failed searches: " + searcher.errors.size() + " "
            + (searcher.errors.isEmpty() ? "" : searcher.errors.get(searcher.errors.size() - 1)), List.of("old", "new"), searcher.order);
        // the concrete name is deleted by the _aliases call that makes it the alias: a search in flight on it then fails
        // (an error the client sees), only while the swap runs
        for (long[] t : searcher.failedAt) {
            assertTrue("a search failed outside the swap: " + searcher.errors, t[0] <= swapEnd && t[1] >= swapStart);
        }

        // the name is an alias whose write index is the generation; the old chunk index is kept as generation 1
        assertEquals(Map.of(chunks + "-g2", Map.of("is_write_index", true)), aliasOf(chunks));
        assertChunksMatchChunkApi(source, "body", chunks, strategy(20), GRANULARITIES);
        assertEquals(count(chunks), count(chunks + "-g2"));
        Map<String, Object> generations = generationsOf(source);
        assertEquals(generations.toString(), true, ((Map<String, Object>) generations.get(chunks + "-g2")).get("serving"));
        assertEquals(generations.toString(), false, ((Map<String, Object>) generations.get(chunks + "-g1")).get("serving"));

        // after the swap: a custom-routing delete, an _update and a new document reach the serving generation
        call("DELETE", "/" + source + "/_doc/r2?routing=rr&refresh=true");
        assertEquals(List.of(), chunksOf(chunks + "-g2", "r2"));
        update("/" + source + "/_update/r3?routing=rr&refresh=true", json(Map.of("doc", Map.of("body", text(2) + " Updated."))));
        assertEquals(cutByChunkApi(text(2) + " Updated.", strategy(20), GRANULARITIES), chunkShape(chunksOf(chunks + "-g2", "r3")));
        call("PUT", "/" + source + "/_doc/after1?refresh=true", json(Map.of("body", text(5) + " After the swap.")));
        assertChunksMatchChunkApi(source, "body", chunks, strategy(20), GRANULARITIES);
        Map<String, Object> reconcile = call("POST", "/_plugins/_strata/_reconcile?index=" + source + "&dry_run=true");
        assertEquals(reconcile.toString(), 0, ((Number) reconcile.get("config_drift")).intValue());
        // the summaries name the alias and count the old cut: neither makes the generation's chunks orphans or duplicates
        for (String drift : List.of("orphans", "duplicates", "missing", "stale")) {
            assertEquals(drift + ": " + reconcile, 0, ((Number) reconcile.get(drift)).intValue());
        }

        // rollback: the pipeline's config back first, then generation 1 serves whole, with the writes made after the swap
        putPipeline("sw-live", pipelineJson(chunks, 40));
        Map<String, Object> back = call("POST", "/_plugins/_strata/_rollback?index=" + source);
        assertEquals(back.toString(), chunks + "-g1", back.get("serving"));
        assertEquals(Map.of(chunks + "-g1", Map.of("is_write_index", true)), aliasOf(chunks));
        assertChunksMatchChunkApi(source, "body", chunks, strategy(40), GRANULARITIES);
        generations = generationsOf(source);
        assertEquals(generations.toString(), true, ((Map<String, Object>) generations.get(chunks + "-g1")).get("serving"));
        assertEquals(generations.toString(), false, ((Map<String, Object>) generations.get(chunks + "-g2")).get("serving"));

        // the generation no longer served is deleted with a plain DELETE; the name keeps serving
        call("DELETE", "/" + chunks + "-g2");
        assertChunksMatchChunkApi(source, "body", chunks, strategy(40), GRANULARITIES);
        // the name of the serving alias is not an index: a DELETE of it deletes nothing
        ResponseException viaAlias = callFailing("DELETE", "/" + chunks, null);
        assertTrue(viaAlias.getMessage(), status(viaAlias) == 400 || status(viaAlias) == 404);
        assertChunksMatchChunkApi(source, "body", chunks, strategy(40), GRANULARITIES);
    }

    public void testSwap_badInput_isA400NamingTheParameter_andNothingChanges() throws Exception {
        String source = "sw-bad";
        putPipeline("sw-bad", pipelineJson(source + "-chunks", 20));
        call("PUT", "/" + source, "{\"settings\": {\"index.default_pipeline\": \"sw-bad\"}}");
        call("PUT", "/" + source + "/_doc/1?refresh=true", json(Map.of("body", text(1))));
        ResponseException none = callFailing("POST", "/_plugins/_strata/_swap?index=" + source, null);
        assertEquals(400, status(none));
        assertTrue(none.getMessage(), none.getMessage().contains("[generation]"));
        ResponseException missing = callFailing("POST", "/_plugins/_strata/_swap?index=" + source + "&generation=7", null);
        assertEquals(400, status(missing));
        assertTrue(missing.getMessage(), missing.getMessage().contains("[" + source + "-chunks-g7]"));
        ResponseException noPrevious = callFailing("POST", "/_plugins/_strata/_rollback?index=" + source, null);
        assertEquals(400, status(noPrevious));
        assertTrue(noPrevious.getMessage(), noPrevious.getMessage().contains("_rollback"));
        assertNothingChanged(source, source + "-chunks");
    }
}

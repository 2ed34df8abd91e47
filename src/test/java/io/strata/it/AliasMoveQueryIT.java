package io.strata.it;

import org.opensearch.client.ResponseException;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A {@code multi_granular} search of an alias that moves between two chunk indices — the same documents cut at two θ,
 * as two generations are — answers from one of them whole: its parents planned and looked up in the same index, each hit
 * that index's chunk document. Oracle: the chunk documents of both indices read first, and each question's answer from
 * each index searched by its own name (which no move changes); every answer through the moving alias must be one of the
 * two, or a 503 that names the move and says to retry.
 */
@SuppressWarnings("unchecked")
public class AliasMoveQueryIT extends StrataRestTestCase {
    private static final String ALIAS = "am-chunks";
    private static final String A = "am-chunks-a";
    private static final String B = "am-chunks-b";
    private static final List<String> QUESTIONS = List.of("Who taught Emma after her mother died?",
        "What did Mr. Knightley say about the match between Mr. Weston and Miss Taylor?", "Why was Mr. Woodhouse sad at the wedding?");
    private static final List<String> MODES = List.of("hybrid", "dense", "lexical");

    /** The first chapters of Emma through a pipeline cutting at {@code maxWords} into {@code chunks} (2 shards). */
    private static void ingest(String source, String chunks, int maxWords) throws IOException {
        call("PUT", "/" + chunks, "{\"settings\": {\"number_of_shards\": 2, \"number_of_replicas\": 0, \"index.knn\": true}}");
        putPipeline(source, "{\"field\": \"body\", \"target_index\": \"" + chunks + "\", \"strategy\": {\"type\": \"recursive\","
            + " \"max_words\": " + maxWords + "}, \"granularities\": [0.5]}");
        Map<String, Map<String, Object>> docs = new LinkedHashMap<>();
        int n = 0;
        for (String body : emmaChapters().values()) {
            if (++n > 3) {
                break;
            }
            docs.put("ch" + n, Map.of("body", body));
        }
        assertEquals(false, bulk(source, source, docs).get("errors"));
        refresh(chunks);
    }

    /** Every chunk document of {@code index}: id → [text, start, end]. */
    private static Map<String, List<Object>> chunkDocs(String index) throws IOException {
        Map<String, Object> r = call("POST", "/" + index + "/_search", "{\"size\": 1000, \"_source\": [\"text\", \"start\", \"end\"],"
            + " \"query\": {\"match_all\": {}}}");
        Map<String, List<Object>> out = new HashMap<>();
        for (Map<String, Object> hit : (List<Map<String, Object>>) ((Map<String, Object>) r.get("hits")).get("hits")) {
            Map<String, Object> s = (Map<String, Object>) hit.get("_source");
            out.put((String) hit.get("_id"), List.of(s.get("text"), s.get("start"), s.get("end")));
        }
        assertTrue(index + " holds chunks", out.size() > 10);
        return out;
    }

    private static String body(String question, String mode) {
        return "{\"size\": 5, \"_source\": [\"text\", \"start\", \"end\"], \"query\": {\"multi_granular\": {\"query_text\": "
            + json(Map.of("q", question)).substring(5).replaceFirst("}$", "") + ", \"mode\": \"" + mode + "\", \"k\": 5}}}";
    }

    /** A response's hits as [index, id, score, text, start, end]. */
    private static List<List<Object>> hits(Map<String, Object> response) {
        List<List<Object>> out = new ArrayList<>();
        for (Map<String, Object> hit : (List<Map<String, Object>>) ((Map<String, Object>) response.get("hits")).get("hits")) {
            Map<String, Object> s = (Map<String, Object>) hit.get("_source");
            out.add(List.of(hit.get("_index"), hit.get("_id"), ((Number) hit.get("_score")).doubleValue(), s.get("text"), s.get("start"),
                s.get("end")));
        }
        return out;
    }

    private static boolean same(List<List<Object>> expected, List<List<Object>> actual) {
        if (expected.size() != actual.size()) {
            return false;
        }
        for (int i = 0; i < expected.size(); i++) {
            List<Object> e = expected.get(i);
            List<Object> a = actual.get(i);
            for (int f = 0; f < e.size(); f++) {
                boolean equal = f == 2 ? Math.abs((Double) e.get(f) - (Double) a.get(f)) <= 1e-5 * Math.max(1, Math.abs((Double) e.get(f)))
                    : e.get(f).equals(a.get(f));
                if (!equal) {
                    return false;
                }
            }
        }
        return true;
    }

    public void testSearchesOfAMovingAlias_answerFromOneIndexWhole_neverAMix() throws Exception {
        ingest("am-src-a", A, 100);
        ingest("am-src-b", B, 45);
        Map<String, Map<String, List<Object>>> docs = Map.of(A, chunkDocs(A), B, chunkDocs(B));
        assertNotEquals("two different cuts", docs.get(A).keySet(), docs.get(B).keySet());
        // each question's answer from each index by its own name, in each mode; the index name in each hit is the index's
        Map<String, List<List<Object>>> expected = new HashMap<>();
        for (String index : List.of(A, B)) {
            for (String q : QUESTIONS) {
                for (String mode : MODES) {
                    List<List<Object>> answer = hits(call("POST", "/" + index + "/_search", body(q, mode)));
                    assertEquals(5, answer.size());
                    for (List<Object> hit : answer) {
                        assertEquals(index, hit.get(0));
                        assertEquals("the hit is its index's chunk document", docs.get(index).get(hit.get(1)), hit.subList(3, 6));
                    }
                    expected.put(index + "|" + q + "|" + mode, answer);
                }
            }
        }
        call("POST", "/_aliases", "{\"actions\": [{\"add\": {\"index\": \"" + A + "\", \"alias\": \"" + ALIAS + "\"}}]}");

        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<Throwable> failed = new AtomicReference<>();
        AtomicInteger answered = new AtomicInteger();
        AtomicInteger retryable = new AtomicInteger();
        Map<String, AtomicInteger> fromIndex = new ConcurrentHashMap<>();
        List<Thread> searchers = new ArrayList<>();
        for (int t = 0; t < 2; t++) {
            int offset = t;
            Thread searcher = new Thread(() -> {
                try {
                    for (int i = offset; !stop.get(); i++) {
                        String q = QUESTIONS.get(i % QUESTIONS.size());
                        String mode = MODES.get((i / QUESTIONS.size()) % MODES.size());
                        Map<String, Object> response;
                        try {
                            response = call("POST", "/" + ALIAS + "/_search", body(q, mode));
                        } catch (ResponseException e) {
                            String message = new String(e.getResponse().getEntity().getContent().readAllBytes(),
                                java.nio.charset.StandardCharsets.UTF_8);
                            assertEquals(message, 503, e.getResponse().getStatusLine().getStatusCode());
                            assertTrue(message, message.contains("moved during this search") && message.contains("retry"));
                            retryable.incrementAndGet();
                            continue;
                        }
                        Map<String, Object> shards = (Map<String, Object>) response.get("_shards");
                        List<List<Object>> actual = hits(response);
                        String from = actual.isEmpty() ? "none" : (String) actual.get(0).get(0);
                        List<List<Object>> want = expected.get(from + "|" + q + "|" + mode);
                        assertTrue(mode + " [" + q + "] answered neither index's answer (shards " + shards + "): " + actual
                            + "\nexpected one of " + expected.get(A + "|" + q + "|" + mode) + "\nor " + expected.get(B + "|" + q + "|" + mode),
                            want != null && same(want, actual));
                        fromIndex.computeIfAbsent(from, x -> new AtomicInteger()).incrementAndGet();
                        answered.incrementAndGet();
                    }
                } catch (Throwable e) {
                    failed.compareAndSet(null, e);
                }
            });
            searcher.start();
            searchers.add(searcher);
        }
        String from = A;
        String to = B;
        int moves = 0;
        long until = System.nanoTime() + 40_000_000_000L;
        while (failed.get() == null && (System.nanoTime() < until || moves < 40)) {
            call("POST", "/_aliases", "{\"actions\": [{\"remove\": {\"index\": \"" + from + "\", \"alias\": \"" + ALIAS + "\"}},"
                + " {\"add\": {\"index\": \"" + to + "\", \"alias\": \"" + ALIAS + "\"}}]}");
            moves++;
            String t = from;
            from = to;
            to = t;
            Thread.sleep(random().nextInt(40));
        }
        stop.set(true);
        for (Thread s : searchers) {
            s.join(60_000);
        }
        if (failed.get() != null) {
            throw new AssertionError("after " + moves + " moves and " + answered.get() + " answers (" + fromIndex + ", " + retryable.get()
                + " 503s): " + failed.get().getMessage(), failed.get());
        }
        logger.info("{} moves: {} answers ({}), {} retryable 503s", moves, answered.get(), fromIndex, retryable.get());
        assertTrue("answers from both indices: " + fromIndex, fromIndex.containsKey(A) && fromIndex.containsKey(B));
        assertTrue("most searches answer (" + answered.get() + " answers, " + retryable.get() + " 503s)",
            answered.get() >= 4 * retryable.get());
    }
}

package io.strata.it;

import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import org.opensearch.client.Request;
import org.opensearch.client.ResponseException;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code strata_context} on a real node, checked against oracles computed in the test: the source chapters (every passage
 * quotes them at its offsets), the chunk documents (every seed is the hit's matched chunk) and the model's own
 * tokenizer.json (the token count, and the budget).
 */
public class StrataContextIT extends StrataRestTestCase {
    private static final String QUESTION = "how did Mr. Woodhouse feel about Miss Taylor's marriage?";
    private static Map<String, String> chapters;
    private static HuggingFaceTokenizer tokenizer;

    /** The chunk index is built once for all tests of the class (ingest with the model takes a while). */
    @Override
    protected boolean preserveIndicesUponCompletion() {
        return true;
    }

    private static synchronized void ingest() throws Exception {
        if (tokenizer == null) {
            Map<String, String> all = emmaChapters();
            putPipeline("ctx-emma", """
                {"field": "body", "target_index": "ctx-emma-chunks", "strategy": {"type": "recursive", "max_words": 120}}""");
            int i = 0;
            for (String text : all.values()) { // one bulk per chapter: each well inside the client's time-out on a busy machine
                assertEquals(false, bulk("ctx-emma", "ctx-emma", Map.of("ch" + i++, Map.of("body", text))).get("errors"));
            }
            refresh("ctx-emma-chunks");
            chapters = all;
            tokenizer = modelTokenizer("e5-small-v2-q");
        }
        // every test: the framework's wipe between tests may remove search pipelines
        call("PUT", "/_search/pipeline/ctx", """
            {"response_processors": [{"strata_context": {"budget": 256}}]}""");
    }

    private static String chapter(String sourceId) {
        return new ArrayList<>(chapters.values()).get(Integer.parseInt(sourceId.substring(2)));
    }

    private static int tokens(String text) {
        return tokenizer.encode(text, false, false).getIds().length;
    }

    private static String squash(String s) {
        return s.strip().replaceAll("\\s+", " ");
    }

    private static String query(int k, String ext) {
        // Locale.ROOT: the test framework randomises the default locale, and some write digits JSON does not read
        return String.format(Locale.ROOT, """
            {"size": %d, "query": {"multi_granular": {"query_text": "%s", "k": %d, "explain_child": true}}%s}""",
            k, QUESTION, k, ext == null ? "" : ", \"ext\": {\"strata_context\": " + ext + "}");
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> hits(Map<String, Object> response) {
        return (List<Map<String, Object>>) ((Map<String, Object>) response.get("hits")).get("hits");
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> context(Map<String, Object> response) {
        return (Map<String, Object>) ((Map<String, Object>) response.get("ext")).get("strata_context");
    }

    @SuppressWarnings("unchecked")
    public void testContext_fillsTheBudgetWithQuotedCitedPassages_andLeavesTheHitsAsTheyWere() throws Exception {
        ingest();
        Map<String, Object> plain = call("POST", "/ctx-emma-chunks/_search", query(5, null));
        Map<String, Object> r = call("POST", "/ctx-emma-chunks/_search?search_pipeline=ctx", query(5, null));
        assertEquals(hits(plain).stream().map(h -> h.get("_id")).toList(), hits(r).stream().map(h -> h.get("_id")).toList());
        Map<String, Object> ctx = context(r);
        String text = (String) ctx.get("text");
        int tokens = (Integer) ctx.get("tokens");
        assertEquals(256, ctx.get("budget"));
        assertEquals("e5-small-v2-q", ctx.get("tokenizer"));
        assertEquals(tokens(text), tokens);
        assertTrue(tokens <= 256);
        assertTrue("the budget is used: " + tokens, tokens > 256 - 40);
        List<Map<String, Object>> passages = (List<Map<String, Object>>) ctx.get("passages");
        List<String> texts = new ArrayList<>();
        for (Map<String, Object> p : passages) {
            String source = chapter((String) p.get("source_id"));
            assertEquals("ctx-emma-chunks", p.get("index"));
            assertEquals("ctx-emma", p.get("source_index"));
            assertEquals(squash(source.substring((Integer) p.get("start"), (Integer) p.get("end"))), squash((String) p.get("text")));
            assertEquals(tokens((String) p.get("text")), p.get("tokens"));
            texts.add((String) p.get("text"));
        }
        assertEquals(String.join("\n\n", texts), text);
        // the best hit's matched chunk is in the context, cited by that hit
        Map<String, Object> best = hits(r).get(0);
        Map<String, Object> matched = (Map<String, Object>) ((List<Object>) ((Map<String, Object>) best.get("fields"))
            .get("strata_best_child")).get(0);
        Map<String, Object> first = passages.get(0);
        assertTrue(((List<String>) first.get("hits")).contains((String) best.get("_id")));
        assertTrue((Integer) first.get("start") <= (Integer) matched.get("start"));
        assertTrue((Integer) first.get("end") >= (Integer) matched.get("end"));
    }

    @SuppressWarnings("unchecked")
    public void testContext_requestExt_overridesTheProcessorsOptions() throws Exception {
        ingest();
        Map<String, Object> r = call("POST", "/ctx-emma-chunks/_search?search_pipeline=ctx", query(5, """
            {"budget": 64, "order": "document", "separator": "\\n---\\n", "neighbours": false}"""));
        Map<String, Object> ctx = context(r);
        assertEquals(64, ctx.get("budget"));
        assertTrue((Integer) ctx.get("tokens") <= 64);
        assertEquals(tokens((String) ctx.get("text")), ctx.get("tokens"));
        List<Map<String, Object>> passages = (List<Map<String, Object>>) ctx.get("passages");
        for (int i = 1; i < passages.size(); i++) {
            Map<String, Object> a = passages.get(i - 1);
            Map<String, Object> b = passages.get(i);
            if (a.get("source_id").equals(b.get("source_id"))) {
                assertTrue("document order", (Integer) a.get("end") < (Integer) b.get("start"));
            }
        }
    }

    @SuppressWarnings("unchecked")
    public void testContext_withoutNeighbours_staysInsideTheHitsParents() throws Exception {
        ingest();
        Map<String, Object> r = call("POST", "/ctx-emma-chunks/_search?search_pipeline=ctx", query(2, """
            {"budget": 5000, "neighbours": false}"""));
        List<Map<String, Object>> hits = hits(r);
        for (Map<String, Object> p : (List<Map<String, Object>>) context(r).get("passages")) {
            boolean inside = false;
            for (Map<String, Object> h : hits) {
                Map<String, Object> src = (Map<String, Object>) h.get("_source");
                inside |= src.get("source_id").equals(p.get("source_id")) && (Integer) src.get("start") <= (Integer) p.get("start")
                    && (Integer) src.get("end") >= (Integer) p.get("end");
            }
            assertTrue(p.toString(), inside);
        }
    }

    /** Hits sorted by a field carry no score: every hit weighs the same, and each one's matched chunk enters whole. */
    @SuppressWarnings("unchecked")
    public void testContext_hitsSortedByAField_withoutScores_holdEveryHitsMatchedChunk() throws Exception {
        ingest();
        Map<String, Object> r = call("POST", "/ctx-emma-chunks/_search?search_pipeline=ctx", String.format(Locale.ROOT, """
            {"size": 3, "sort": [{"ordinal": "asc"}], "query": {"multi_granular": {"query_text": "%s", "k": 3, "explain_child": true}},
             "ext": {"strata_context": {"budget": 1024}}}""", QUESTION));
        List<Map<String, Object>> hits = hits(r);
        assertEquals(3, hits.size());
        Map<String, Object> ctx = context(r);
        assertTrue((Integer) ctx.get("tokens") <= 1024);
        assertEquals(tokens((String) ctx.get("text")), ctx.get("tokens"));
        List<Map<String, Object>> passages = (List<Map<String, Object>>) ctx.get("passages");
        for (Map<String, Object> h : hits) {
            assertNull(h.get("_score"));
            Map<String, Object> matched = (Map<String, Object>) ((List<Object>) ((Map<String, Object>) h.get("fields"))
                .get("strata_best_child")).get(0);
            String sourceId = (String) ((Map<String, Object>) h.get("_source")).get("source_id");
            assertTrue(h.get("_id") + " is in the context", passages.stream().anyMatch(p -> p.get("source_id").equals(sourceId)
                && ((List<String>) p.get("hits")).contains((String) h.get("_id"))
                && (Integer) p.get("start") <= (Integer) matched.get("start") && (Integer) p.get("end") >= (Integer) matched.get("end")));
        }
        for (Map<String, Object> p : passages) {
            assertEquals(squash(chapter((String) p.get("source_id")).substring((Integer) p.get("start"), (Integer) p.get("end"))),
                squash((String) p.get("text")));
        }
    }

    /**
     * A budget below the best hit's matched chunk and every evidence chunk inside it: the best hit enters with the first of
     * its evidence sentences inside the chunk that fits (here, at a budget of exactly that sentence's tokens: the sentence
     * alone), not with the chunk's first words. The oracle: the response's own evidence and the model's tokenizer.json.
     */
    @SuppressWarnings("unchecked")
    public void testContext_theBestHitWhoseChunkDoesNotFit_entersWithItsBestSentenceInsideIt() throws Exception {
        ingest();
        int tried = 0;
        for (String question : List.of(QUESTION, "Who did Miss Taylor marry?", "What did Emma say about matchmaking?",
            "Why was Mr. Knightley visiting Hartfield?", "How old was Harriet Smith?")) {
            Map<String, Object> r = call("POST", "/ctx-emma-chunks/_search", String.format(Locale.ROOT, """
                {"size": 3, "query": {"multi_granular": {"query_text": "%s", "k": 3, "explain_child": true,
                 "evidence": {"chunks": 3, "sentences": 10}}}}""", question));
            Map<String, Object> fields = (Map<String, Object>) hits(r).get(0).get("fields");
            Map<String, Object> matched = (Map<String, Object>) ((List<Object>) fields.get("strata_best_child")).get(0);
            Map<String, Object> pack = (Map<String, Object>) ((List<Object>) fields.get("strata_evidence")).get(0);
            String source = chapter((String) ((Map<String, Object>) hits(r).get(0).get("_source")).get("source_id"));
            int ms = (Integer) matched.get("start");
            int me = (Integer) matched.get("end");
            int smallestChunk = tokens(source.substring(ms, me));
            for (String side : List.of("dense", "lexical")) {
                for (Map<String, Object> c : (List<Map<String, Object>>) pack.get(side)) {
                    if ((Integer) c.get("start") >= ms && (Integer) c.get("end") <= me) {
                        smallestChunk = Math.min(smallestChunk, tokens(source.substring((Integer) c.get("start"), (Integer) c.get("end"))));
                    }
                }
            }
            Map<String, Object> sentence = null;
            for (Map<String, Object> x : (List<Map<String, Object>>) pack.get("sentences")) {
                if ((Integer) x.get("start") >= ms && (Integer) x.get("end") <= me) {
                    sentence = x; // the first inside the match, best first
                    break;
                }
            }
            if (sentence == null) {
                continue;
            }
            String text = source.substring((Integer) sentence.get("start"), (Integer) sentence.get("end"));
            int budget = tokens(text);
            if (budget >= smallestChunk) {
                continue; // a chunk inside the match fits where the sentence does: not this case
            }
            tried++;
            Map<String, Object> c = context(call("POST", "/ctx-emma-chunks/_search?search_pipeline=ctx", String.format(Locale.ROOT, """
                {"size": 3, "query": {"multi_granular": {"query_text": "%s", "k": 3, "explain_child": true,
                 "evidence": {"chunks": 3, "sentences": 10}}}, "ext": {"strata_context": {"budget": %d}}}""", question, budget)));
            List<Map<String, Object>> passages = (List<Map<String, Object>>) c.get("passages");
            assertEquals(question + ": " + passages, 1, passages.size());
            Map<String, Object> p = passages.get(0);
            assertEquals(question, List.of(sentence.get("start"), sentence.get("end")), List.of(p.get("start"), p.get("end")));
            assertEquals(text, p.get("text"));
            assertNull(p.get("truncated"));
            assertEquals(budget, c.get("tokens"));
            assertEquals(List.of(hits(r).get(0).get("_id")), p.get("hits"));
        }
        assertTrue("a question whose best sentence fits where no chunk of its match does", tried > 0);
    }

    public void testContext_withABadOption_failsNamingItAndTheAllowedValues() throws Exception {
        ingest();
        ResponseException e = callFailing("POST", "/ctx-emma-chunks/_search?search_pipeline=ctx", query(5, "{\"budget\": 0}"));
        assertEquals(400, e.getResponse().getStatusLine().getStatusCode());
        assertTrue(e.getMessage(), e.getMessage().contains("[ext.strata_context] [budget]"));
        e = callFailing("POST", "/ctx-emma-chunks/_search?search_pipeline=ctx", query(5, "{\"order\": \"random\"}"));
        assertTrue(e.getMessage(), e.getMessage().contains("[order] must be one of [rank, document], got [random]"));
        // not an object: it used to be read as no options, and the search ran with the defaults
        for (String notAnObject : List.of("\"512\"", "null", "[512]", "512")) {
            e = callFailing("POST", "/ctx-emma-chunks/_search?search_pipeline=ctx", query(5, notAnObject));
            assertEquals(notAnObject, 400, e.getResponse().getStatusLine().getStatusCode());
            assertTrue(e.getMessage(), e.getMessage().contains("[ext.strata_context] must be an object of options"));
        }
        e = callFailing("PUT", "/_search/pipeline/bad-ctx", """
            {"response_processors": [{"strata_context": {"budgett": 10}}]}""");
        assertEquals(400, e.getResponse().getStatusLine().getStatusCode());
        assertTrue(e.getMessage(), e.getMessage().contains("unknown field [budgett]"));
        // a tokenizer that is no model of this node: refused when the pipeline is created (it used to be stored, and every
        // search through it failed naming [model]), and per request, naming [tokenizer] and the models there are
        e = callFailing("PUT", "/_search/pipeline/bad-ctx", """
            {"response_processors": [{"strata_context": {"tokenizer": "e5-large"}}]}""");
        assertEquals(400, e.getResponse().getStatusLine().getStatusCode());
        assertTrue(e.getMessage(), e.getMessage().contains("[strata_context] [tokenizer] unknown model [e5-large]"));
        assertTrue(e.getMessage(), e.getMessage().contains("available: ["));
        e = callFailing("POST", "/ctx-emma-chunks/_search?search_pipeline=ctx", query(5, "{\"tokenizer\": \"e5-large\"}"));
        assertEquals(400, e.getResponse().getStatusLine().getStatusCode());
        assertTrue(e.getMessage(), e.getMessage().contains("[ext.strata_context] [tokenizer] unknown model [e5-large]"));
    }

    /** As applications call it: the query inside a bool filter, through an alias, the pipeline as the index's default. */
    @SuppressWarnings("unchecked")
    /**
     * Options in {@code ext} ask for a context; a search whose pipeline has no {@code strata_context} used to answer its
     * hits alone, silently, and an application sent its LLM no context. Now a 400 that says what to add — and the same
     * search through a pipeline that has the processor (named, or the index's default) answers with the context.
     */
    public void testContextOptions_forASearchThatRunsNoStrataContext_are400_notIgnored() throws Exception {
        ingest();
        call("PUT", "/_search/pipeline/ctx-none", "{\"response_processors\": []}");
        for (String params : List.of("", "?search_pipeline=ctx-none", "?search_pipeline=_none")) {
            ResponseException e = callFailing("POST", "/ctx-emma-chunks/_search" + params, query(3, "{\"budget\": 64}"));
            assertEquals(params, 400, e.getResponse().getStatusLine().getStatusCode());
            assertTrue(e.getMessage(), e.getMessage().contains("[ext.strata_context] was given, but no [strata_context] response "
                + "processor ran for this search"));
        }
        Map<String, Object> named = call("POST", "/ctx-emma-chunks/_search?search_pipeline=ctx", query(3, "{\"budget\": 64}"));
        assertEquals(64, context(named).get("budget"));
        call("PUT", "/ctx-emma-chunks/_settings", "{\"index.search.default_pipeline\": \"ctx\"}");
        try {
            Map<String, Object> byDefault = call("POST", "/ctx-emma-chunks/_search", query(3, "{\"budget\": 64}"));
            assertEquals(64, context(byDefault).get("budget"));
            // the index's default pipeline turned off for this search: no processor, so the options are refused again
            ResponseException e = callFailing("POST", "/ctx-emma-chunks/_search?search_pipeline=_none", query(3, "{\"budget\": 64}"));
            assertEquals(400, e.getResponse().getStatusLine().getStatusCode());
        } finally {
            call("PUT", "/ctx-emma-chunks/_settings", "{\"index.search.default_pipeline\": null}");
        }
        // a search without the options runs as before, with or without the processor
        assertNull(((Map<String, Object>) call("POST", "/ctx-emma-chunks/_search", query(3, null))).get("ext"));
        // in an _msearch, the item that asks for a context without a processor fails, the others answer as they were
        Request multi = new Request("POST", "/ctx-emma-chunks/_msearch");
        multi.setJsonEntity("{}\n" + query(3, "{\"budget\": 64}") + "\n{}\n" + query(3, null) + "\n");
        List<Map<String, Object>> items = (List<Map<String, Object>>) entityAsMap(client().performRequest(multi)).get("responses");
        assertEquals(400, items.get(0).get("status"));
        assertTrue(items.get(0).toString(), items.get(0).toString().contains("no [strata_context] response processor ran"));
        assertEquals(200, items.get(1).get("status"));
        assertEquals(3, hits(items.get(1)).size());
    }

    public void testContext_asTheDefaultPipeline_throughAnAliasWithABoolQuery() throws Exception {
        ingest();
        call("POST", "/_aliases", """
            {"actions": [{"add": {"index": "ctx-emma-chunks", "alias": "ctx-emma-ch1", "filter": {"term": {"source_id": "ch1"}}}}]}""");
        call("PUT", "/ctx-emma-chunks/_settings", "{\"index.search.default_pipeline\": \"ctx\"}");
        try {
            Map<String, Object> r = call("POST", "/ctx-emma-ch1/_search", """
                {"size": 3, "query": {"bool": {"must": [{"multi_granular": {"query_text": "%s", "k": 3, "explain_child": true}}],
                 "filter": [{"range": {"ordinal": {"gte": 1}}}]}}}""".formatted(QUESTION));
            assertFalse(hits(r).isEmpty());
            for (Map<String, Object> p : (List<Map<String, Object>>) context(r).get("passages")) {
                assertEquals("ch1", p.get("source_id"));
            }
        } finally {
            call("PUT", "/ctx-emma-chunks/_settings", "{\"index.search.default_pipeline\": null}");
        }
    }
}

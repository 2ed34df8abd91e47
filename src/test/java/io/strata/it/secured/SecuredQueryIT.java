package io.strata.it.secured;

import io.strata.it.QueryOracle;
import org.opensearch.client.Response;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code multi_granular} under the real security plugin: a role that reads only the chunk index runs every mode;
 * document-level security on the chunk index (a tenant field copied with {@code copy_fields}) leaves exactly the permitted
 * parents — still k of them — and {@code explain_child} never shows another tenant's text; field-level security hiding
 * the text hides it from {@code explain_child} and from the lexical side.
 */
@SuppressWarnings("unchecked")
public class SecuredQueryIT extends SecuredRestTestCase {
    private static final String SOURCE = "sec-q-src";
    private static final String CHUNKS = "sec-q-chunks";
    private static final List<String> MODES = List.of("dense", "lexical", "hybrid");
    private static final int K = 4;
    private static boolean ingested;

    /** Red documents are about Hartfield, blue ones about Donwell Abbey: the query below prefers blue. */
    private static String text(String tenant, int doc) {
        String place = tenant.equals("red") ? "Hartfield, where Mr. Woodhouse sat by the fire" : "Donwell Abbey, where the strawberries grew";
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            b.append("Letter ").append(doc).append(", line ").append(i).append(": the ").append(tenant)
                .append(" party went to ").append(place).append(", and everyone spoke of the weather there. ");
        }
        return b.toString().strip();
    }

    private static void ingestOnce() throws IOException {
        if (ingested) {
            return;
        }
        putPipeline("sec-q", "{\"field\": \"body\", \"target_index\": \"" + CHUNKS + "\", \"copy_fields\": [\"tenant\"], "
            + "\"strategy\": {\"type\": \"recursive\", \"max_words\": 30}}");
        Map<String, Map<String, Object>> docs = new LinkedHashMap<>();
        for (String tenant : List.of("red", "blue")) {
            for (int d = 0; d < 3; d++) {
                docs.put(tenant + "-" + d, Map.of("body", text(tenant, d), "tenant", tenant));
            }
        }
        assertEquals(false, bulk(SOURCE, "sec-q", docs).get("errors"));
        refresh(CHUNKS);
        ingested = true;
    }

    private static String multiGranular(String mode) {
        return "{\"multi_granular\": {\"query_text\": \"the weather at Donwell Abbey with strawberries\", \"k\": " + K
            + ", \"mode\": \"" + mode + "\", \"explain_child\": true}}";
    }

    private static String query(String mode) {
        return "{\"size\": " + K + ", \"query\": " + multiGranular(mode) + "}";
    }

    private static List<Map<String, Object>> hits(Response response) throws IOException {
        assertEquals(bodyOf(response), 200, status(response));
        return (List<Map<String, Object>>) ((Map<String, Object>) entityAsMap(response).get("hits")).get("hits");
    }

    /** The matched child's text as explain_child reports it: the dense/hybrid field, or the lexical mode's inner hit. */
    private static List<Object> explainedTexts(Map<String, Object> hit) {
        List<Object> out = new ArrayList<>();
        Map<String, Object> fields = (Map<String, Object>) hit.get("fields");
        if (fields != null && fields.get("strata_best_child") != null) {
            for (Object child : (List<Object>) fields.get("strata_best_child")) {
                out.add(((Map<String, Object>) child).get("text"));
            }
        }
        Map<String, Object> inner = (Map<String, Object>) hit.get("inner_hits");
        if (inner != null) {
            Map<String, Object> best = (Map<String, Object>) ((Map<String, Object>) inner.get("strata_best_child")).get("hits");
            for (Object child : (List<Object>) best.get("hits")) {
                out.add(((Map<String, Object>) ((Map<String, Object>) child).get("_source")).get("text"));
            }
        }
        return out;
    }

    public void testChunkIndexReader_runsEveryMode_butCannotReadTheSourceIndex() throws Exception {
        ingestOnce();
        putRole("sec-q-reader", List.of(), List.of(indexPermission(List.of(CHUNKS), List.of("read"))));
        putUser("sec-q-reader", "sec-q-reader");
        for (String mode : MODES) {
            List<Map<String, Object>> hits = hits(as("sec-q-reader", "POST", "/" + CHUNKS + "/_search", query(mode)));
            assertEquals(mode + ": " + hits, K, hits.size());
            assertEquals(mode + ": the best parent is blue", "blue", ((Map<String, Object>) hits.get(0).get("_source")).get("tenant"));
        }
        assertEquals(403, status(as("sec-q-reader", "POST", "/" + SOURCE + "/_search", "{\"query\": {\"match_all\": {}}}")));
    }

    public void testDocumentLevelSecurity_leavesExactlyThePermittedParents_kOfThem_andNoOtherTenantsText() throws Exception {
        ingestOnce();
        putRole("sec-q-red", List.of(), List.of(Map.of("index_patterns", List.of(CHUNKS), "allowed_actions", List.of("read"),
            "dls", "{\"term\": {\"tenant\": \"red\"}}")));
        putUser("sec-q-red", "sec-q-red");
        int redParents = ((Number) call("POST", "/" + CHUNKS + "/_count", "{\"query\": {\"term\": {\"tenant\": \"red\"}}}")
            .get("count")).intValue();
        assertTrue("enough red parents for k: " + redParents, redParents > K);
        for (String mode : MODES) {
            List<Map<String, Object>> hits = hits(as("sec-q-red", "POST", "/" + CHUNKS + "/_search", query(mode)));
            // the query prefers blue, yet the red user gets k red parents: DLS applies before the top k, not after
            assertEquals(mode + ": " + hits, K, hits.size());
            for (Map<String, Object> hit : hits) {
                assertEquals(mode + ": " + hit, "red", ((Map<String, Object>) hit.get("_source")).get("tenant"));
                List<Object> texts = explainedTexts(hit);
                assertFalse(mode + ": explain_child present: " + hit, texts.isEmpty());
                for (Object text : texts) {
                    assertNotNull(mode + ": " + hit, text);
                    assertFalse(mode + ": another tenant's text: " + text, String.valueOf(text).contains("blue"));
                    assertFalse(mode + ": another tenant's text: " + text, String.valueOf(text).contains("Donwell"));
                }
            }
        }
        // the red user's dense hits are admin's under the same restriction as a bool filter: same parents, same scores
        // (DLS neither shortens the top k nor shifts the scores)
        List<Map<String, Object>> red = hits(as("sec-q-red", "POST", "/" + CHUNKS + "/_search", query("dense")));
        String filtered = "{\"size\": " + K + ", \"query\": {\"bool\": {\"must\": " + multiGranular("dense")
            + ", \"filter\": {\"term\": {\"tenant\": \"red\"}}}}}";
        List<Map<String, Object>> admin = (List<Map<String, Object>>) ((Map<String, Object>) call("POST", "/" + CHUNKS + "/_search",
            filtered).get("hits")).get("hits");
        assertEquals(red.stream().map(h -> h.get("_id")).toList(), admin.stream().map(h -> h.get("_id")).toList());
        for (int i = 0; i < red.size(); i++) {
            // float rounding only: the filter's place in the boolean query changes the summation order
            assertEquals(((Number) admin.get(i).get("_score")).doubleValue(), ((Number) red.get(i).get("_score")).doubleValue(), 1e-5);
        }
    }

    /**
     * A role's DLS query written as for the source index — a {@code term} on its {@code keyword} tenant, "Acme Corp" — keeps
     * that tenant's parents on the chunk index: the copied field is mapped there as in the source. (Mapped dynamically as
     * text, the term matched no chunk document and the role saw nothing.) Oracle, as admin: the chunk documents of the
     * source documents the same term selects in the source index.
     */
    public void testDocumentLevelSecurity_writtenForTheSourceIndex_keepsThatTenantsParents() throws Exception {
        call("PUT", "/sec-kw", "{\"mappings\": {\"properties\": {\"body\": {\"type\": \"text\"}, \"tenant\": {\"type\": \"keyword\"}}}}");
        putPipeline("sec-kw", "{\"field\": \"body\", \"target_index\": \"sec-kw-chunks\", \"copy_fields\": [\"tenant\"], "
            + "\"strategy\": {\"type\": \"recursive\", \"max_words\": 30}}");
        Map<String, Map<String, Object>> docs = new LinkedHashMap<>();
        for (String tenant : List.of("Acme Corp", "Beta Labs")) {
            for (int d = 0; d < 2; d++) {
                docs.put(tenant.charAt(0) + "-" + d, Map.of("body", text(tenant, d), "tenant", tenant));
            }
        }
        assertEquals(false, bulk("sec-kw", "sec-kw", docs).get("errors"));
        refresh("sec-kw-chunks");
        String dls = "{\"term\": {\"tenant\": \"Acme Corp\"}}";
        List<Object> sources = new ArrayList<>();
        for (Object h : (List<Object>) ((Map<String, Object>) call("POST", "/sec-kw/_search", "{\"query\": " + dls + "}").get("hits"))
            .get("hits")) {
            sources.add(((Map<String, Object>) h).get("_id"));
        }
        java.util.Set<Object> expected = new java.util.TreeSet<>();
        for (Object h : (List<Object>) ((Map<String, Object>) call("POST", "/sec-kw-chunks/_search", json(Map.of("size", 100, "query",
            Map.of("terms", Map.of("source_id", sources))))).get("hits")).get("hits")) {
            expected.add(((Map<String, Object>) h).get("_id"));
        }
        assertEquals(2, sources.size());
        assertFalse(expected.isEmpty());
        putRole("sec-kw-acme", List.of(), List.of(Map.of("index_patterns", List.of("sec-kw-chunks"), "allowed_actions", List.of("read"),
            "dls", dls)));
        putUser("sec-kw-acme", "sec-kw-acme");
        for (String mode : MODES) {
            java.util.Set<Object> got = new java.util.TreeSet<>();
            for (Map<String, Object> hit : hits(as("sec-kw-acme", "POST", "/sec-kw-chunks/_search", "{\"size\": 100, \"query\": "
                + "{\"multi_granular\": {\"query_text\": \"the weather\", \"k\": 100, \"mode\": \"" + mode + "\"}}}"))) {
                got.add(hit.get("_id"));
            }
            assertEquals(mode, expected, got);
        }
    }

    /**
     * Every mode under DLS with a bool filter around the query, against {@link QueryOracle} computed as admin with the DLS
     * query and the filter as the restriction: the k parents of the permitted and filtered ones, with their scores.
     */
    public void testDocumentLevelSecurity_andABoolFilter_everyModeReturnsTheOraclesParents() throws Exception {
        ingestOnce();
        String dls = "{\"term\": {\"tenant\": \"red\"}}";
        putRole("sec-q-red2", List.of(), List.of(Map.of("index_patterns", List.of(CHUNKS), "allowed_actions", List.of("read"),
            "dls", dls)));
        putUser("sec-q-red2", "sec-q-red2");
        String filter = "{\"terms\": {\"source_id\": [\"red-1\", \"red-2\", \"blue-1\"]}}";
        String question = "the weather at Donwell Abbey with strawberries";
        QueryOracle oracle = QueryOracle.load(CHUNKS);
        String restriction = "{\"bool\": {\"filter\": [" + dls + ", " + filter + "]}}";
        java.util.Set<String> allowed = oracle.matching(restriction);
        assertTrue("enough permitted, filtered parents for k: " + allowed.size(), allowed.size() > K);
        Map<String, Object> embedded = call("POST", "/_plugins/_strata/_embed", json(Map.of("texts", List.of(question), "purpose",
            "query")));
        float[] q = QueryOracle.floats((List<Number>) ((List<Object>) embedded.get("vectors")).get(0));
        List<QueryOracle.Scored> dense = oracle.dense(q, allowed, null);
        for (String mode : MODES) {
            // every permitted parent's expected score, and the k best (texts repeat, so scores may tie: ties may come in any order)
            List<QueryOracle.Scored> all = switch (mode) {
                case "dense" -> dense;
                case "lexical" -> oracle.lexical(question, restriction, 10000, false);
                default -> QueryOracle.minMax(QueryOracle.top(dense, 100), oracle.lexical(question, restriction, 100, true), 10000);
            };
            Map<String, Float> scores = new LinkedHashMap<>();
            all.forEach(s -> scores.put(s.id(), s.score()));
            String mg = "{\"multi_granular\": {\"query_text\": \"" + question + "\", \"k\": " + K + ", \"mode\": \"" + mode + "\""
                + (mode.equals("lexical") ? "" : ", \"num_candidates\": 10000") + "}}";
            List<Map<String, Object>> hits = hits(as("sec-q-red2", "POST", "/" + CHUNKS + "/_search", "{\"size\": 10, \"query\": "
                + "{\"bool\": {\"must\": " + mg + ", \"filter\": " + filter + "}}}"));
            assertEquals(mode + ": " + hits, K, hits.size());
            for (int i = 0; i < K; i++) {
                float score = ((Number) hits.get(i).get("_score")).floatValue();
                float tolerance = 2e-5f * Math.max(1f, score);
                assertEquals(mode + " rank " + i, all.get(i).score(), score, tolerance);
                Float own = scores.get((String) hits.get(i).get("_id"));
                assertNotNull(mode + ": not a permitted, filtered parent: " + hits.get(i), own);
                assertEquals(mode + " " + hits.get(i).get("_id"), own, score, tolerance);
            }
        }
    }

    public void testFieldLevelSecurity_hidingTheText_hidesItFromExplainChildAndTheLexicalSide() throws Exception {
        ingestOnce();
        putRole("sec-q-notext", List.of(), List.of(Map.of("index_patterns", List.of(CHUNKS), "allowed_actions", List.of("read"),
            "fls", List.of("~text", "~children.text"))));
        putUser("sec-q-notext", "sec-q-notext");
        List<Map<String, Object>> lexical = hits(as("sec-q-notext", "POST", "/" + CHUNKS + "/_search", query("lexical")));
        assertEquals("the lexical side sees no text: " + lexical, 0, lexical.size());
        for (String mode : List.of("dense", "hybrid")) {
            List<Map<String, Object>> hits = hits(as("sec-q-notext", "POST", "/" + CHUNKS + "/_search", query(mode)));
            assertEquals(mode + ": " + hits, K, hits.size());
            for (Map<String, Object> hit : hits) {
                assertFalse(mode + ": _source keeps no text: " + hit, ((Map<String, Object>) hit.get("_source")).containsKey("text"));
                for (Object text : explainedTexts(hit)) {
                    assertNull(mode + ": explain_child shows no text: " + hit, text);
                }
                if (mode.equals("hybrid")) {
                    Map<String, Object> child = (Map<String, Object>) ((List<Object>) ((Map<String, Object>) hit.get("fields"))
                        .get("strata_best_child")).get(0);
                    assertNull("no lexical side: " + child, child.get("lexical"));
                }
            }
        }
        // the same user and query without FLS (admin) see the text: the assertions above can fail
        List<Map<String, Object>> admin = (List<Map<String, Object>>) ((Map<String, Object>) call("POST", "/" + CHUNKS + "/_search",
            query("lexical")).get("hits")).get("hits");
        assertEquals(K, admin.size());
        assertNotNull(explainedTexts(admin.get(0)).get(0));
    }

    /**
     * A plain {@code highlight} (no {@code highlight_query}) under DLS marks what admin's marks with the role's query as a
     * bool filter: the same parents, the same fragments, none of another tenant's; under FLS hiding the text it marks nothing.
     */
    public void testHighlight_underDocumentAndFieldLevelSecurity_marksOnlyWhatTheUserMayRead() throws Exception {
        ingestOnce();
        putRole("sec-q-red", List.of(), List.of(Map.of("index_patterns", List.of(CHUNKS), "allowed_actions", List.of("read"),
            "dls", "{\"term\": {\"tenant\": \"red\"}}")));
        putUser("sec-q-red", "sec-q-red");
        putRole("sec-q-notext", List.of(), List.of(Map.of("index_patterns", List.of(CHUNKS), "allowed_actions", List.of("read"),
            "fls", List.of("~text", "~children.text"))));
        putUser("sec-q-notext", "sec-q-notext");
        String highlight = ", \"highlight\": {\"fields\": {\"text\": {}}}}";
        String mine = "{\"size\": " + K + ", \"query\": " + multiGranular("hybrid") + highlight;
        List<Map<String, Object>> red = hits(as("sec-q-red", "POST", "/" + CHUNKS + "/_search", mine));
        List<Map<String, Object>> admin = (List<Map<String, Object>>) ((Map<String, Object>) call("POST", "/" + CHUNKS + "/_search",
            "{\"size\": " + K + ", \"query\": {\"bool\": {\"must\": " + multiGranular("hybrid") + ", \"filter\": {\"term\":"
                + " {\"tenant\": \"red\"}}}}" + highlight).get("hits")).get("hits");
        assertEquals(K, red.size());
        assertEquals(admin.stream().map(h -> h.get("_id")).toList(), red.stream().map(h -> h.get("_id")).toList());
        int marked = 0;
        for (int i = 0; i < red.size(); i++) {
            Object fragments = red.get(i).get("highlight");
            assertEquals(red.get(i).get("_id").toString(), admin.get(i).get("highlight"), fragments);
            if (fragments != null) {
                marked++;
                assertTrue(String.valueOf(fragments), String.valueOf(fragments).contains("<em>weather</em>"));
                assertFalse(String.valueOf(fragments), String.valueOf(fragments).contains("blue"));
            }
        }
        assertEquals("every red parent speaks of the weather", K, marked);
        for (Map<String, Object> hit : hits(as("sec-q-notext", "POST", "/" + CHUNKS + "/_search", mine))) {
            assertNull("FLS hides the text: " + hit, hit.get("highlight"));
        }
    }

    private static String evidenceQuery(String mode) {
        return "{\"size\": " + K + ", \"query\": {\"multi_granular\": {\"query_text\": \"the weather at Donwell Abbey with "
            + "strawberries\", \"k\": " + K + ", \"mode\": \"" + mode + "\", \"evidence\": {\"chunks\": 3, \"sentences\": 2}}}}";
    }

    private static Map<String, Object> evidenceOf(Map<String, Object> hit) {
        return (Map<String, Object>) ((List<Object>) ((Map<String, Object>) hit.get("fields")).get("strata_evidence")).get(0);
    }

    private static List<Map<String, Object>> evidenceChunks(Map<String, Object> pack) {
        List<Map<String, Object>> out = new ArrayList<>((List<Map<String, Object>>) pack.get("dense"));
        out.addAll((List<Map<String, Object>>) pack.get("lexical"));
        return out;
    }

    /**
     * Evidence packs under DLS that leaves only red parents that are not a document's second: every chunk and sentence of a
     * pack lies inside its own, permitted parent and quotes that parent's text (oracle: the hit's own filtered _source).
     */
    public void testEvidence_underDocumentLevelSecurity_isEachPermittedParentsOwnText() throws Exception {
        ingestOnce();
        String dls = "{\"bool\": {\"filter\": {\"term\": {\"tenant\": \"red\"}}, \"must_not\": {\"term\": {\"ordinal\": 1}}}}";
        putRole("sec-ev-red", List.of(), List.of(Map.of("index_patterns", List.of(CHUNKS), "allowed_actions", List.of("read"),
            "dls", dls)));
        putUser("sec-ev-red", "sec-ev-red");
        for (String mode : MODES) {
            List<Map<String, Object>> hits = hits(as("sec-ev-red", "POST", "/" + CHUNKS + "/_search", evidenceQuery(mode)));
            assertFalse(mode + ": hits", hits.isEmpty());
            int quoted = 0;
            for (Map<String, Object> hit : hits) {
                Map<String, Object> source = (Map<String, Object>) hit.get("_source");
                assertEquals(mode + " " + hit.get("_id"), "red", source.get("tenant"));
                assertNotEquals(mode + " " + hit.get("_id"), 1, source.get("ordinal"));
                int start = (Integer) source.get("start");
                String text = (String) source.get("text");
                Map<String, Object> pack = evidenceOf(hit);
                List<Map<String, Object>> quotes = new ArrayList<>(evidenceChunks(pack));
                quotes.addAll((List<Map<String, Object>>) pack.get("sentences"));
                for (Map<String, Object> q : quotes) {
                    int s = (Integer) q.get("start");
                    int e = (Integer) q.get("end");
                    assertTrue(mode + ": " + q + " inside its parent " + source.get("start") + "-" + source.get("end"),
                        s >= start && e <= (Integer) source.get("end"));
                    assertEquals(mode + ": " + q, text.substring(s - start, e - start), q.get("text"));
                    assertFalse(mode + ": " + q, ((String) q.get("text")).contains("Donwell"));
                    quoted++;
                }
            }
            assertTrue(mode + ": the packs quote something", quoted > 0);
        }
    }

    /** FLS hiding the text: no evidence chunk carries text and no sentence is quoted; admin's same search quotes both. */
    public void testEvidence_underFieldLevelSecurityHidingTheText_quotesNoText() throws Exception {
        ingestOnce();
        putRole("sec-ev-notext", List.of(), List.of(Map.of("index_patterns", List.of(CHUNKS), "allowed_actions", List.of("read"),
            "fls", List.of("~text", "~children.text"))));
        putUser("sec-ev-notext", "sec-ev-notext");
        for (String mode : List.of("dense", "hybrid")) {
            List<Map<String, Object>> hits = hits(as("sec-ev-notext", "POST", "/" + CHUNKS + "/_search", evidenceQuery(mode)));
            assertEquals(mode + ": " + hits, K, hits.size());
            for (Map<String, Object> hit : hits) {
                Map<String, Object> pack = evidenceOf(hit);
                assertFalse(mode + ": dense evidence without text still lists chunks: " + pack,
                    ((List<Object>) pack.get("dense")).isEmpty());
                for (Map<String, Object> c : evidenceChunks(pack)) {
                    assertNull(mode + ": " + c, c.get("text"));
                }
                assertEquals(mode + ": " + pack, List.of(), pack.get("lexical"));
                assertEquals(mode + ": " + pack, List.of(), pack.get("sentences"));
            }
            // admin: the same search's packs quote chunk texts and sentences, so the assertions above can fail
            List<Map<String, Object>> admin = (List<Map<String, Object>>) ((Map<String, Object>) call("POST", "/" + CHUNKS
                + "/_search", evidenceQuery(mode)).get("hits")).get("hits");
            Map<String, Object> pack = evidenceOf(admin.get(0));
            assertNotNull(mode + ": " + pack, evidenceChunks(pack).get(0).get("text"));
            assertFalse(mode + ": " + pack, ((List<Object>) pack.get("sentences")).isEmpty());
        }
    }

    private static List<Object> ids(List<Map<String, Object>> hits) {
        return hits.stream().map(h -> h.get("_id")).toList();
    }

    /**
     * FLS hiding the vectors, checked against the k-NN plugin's own nested query as the oracle: the dense side finds for
     * that user exactly what k-NN finds for them (measured on 3.4: k-NN still searches a vector field FLS hides, so the
     * user's dense ranking equals admin's), while no vector-derived chunk is shown where the user cannot read the vectors
     * (explain_child and the evidence's dense chunks read them from the hit, as the user), and nothing fails.
     */
    public void testFieldLevelSecurity_hidingTheVectors_ranksAsKnnDoes_andShowsNoDenseChunk() throws Exception {
        ingestOnce();
        putRole("sec-q-novec", List.of(), List.of(Map.of("index_patterns", List.of(CHUNKS), "allowed_actions", List.of("read"),
            "fls", List.of("~embedding", "~children.embedding"))));
        putUser("sec-q-novec", "sec-q-novec");
        String question = "the weather at Donwell Abbey with strawberries";
        List<Number> vector = (List<Number>) ((List<Object>) call("POST", "/_plugins/_strata/_embed",
            json(Map.of("texts", List.of(question), "purpose", "query"))).get("vectors")).get(0);
        String knn = "{\"size\": " + K + ", \"_source\": false, \"query\": {\"nested\": {\"path\": \"children\", \"score_mode\": "
            + "\"max\", \"query\": {\"knn\": {\"children.embedding\": {\"vector\": " + vector + ", \"k\": 100}}}}}}";
        List<Object> knnAsUser = ids(hits(as("sec-q-novec", "POST", "/" + CHUNKS + "/_search", knn)));
        List<Object> knnAsAdmin = ids((List<Map<String, Object>>) ((Map<String, Object>) call("POST", "/" + CHUNKS + "/_search", knn)
            .get("hits")).get("hits"));
        List<Map<String, Object>> dense = hits(as("sec-q-novec", "POST", "/" + CHUNKS + "/_search", evidenceQuery("dense")));
        List<Map<String, Object>> denseAsAdmin = (List<Map<String, Object>>) ((Map<String, Object>) call("POST", "/" + CHUNKS
            + "/_search", evidenceQuery("dense")).get("hits")).get("hits");
        if (knnAsUser.isEmpty()) {
            assertEquals("k-NN finds nothing for this user, nor may the dense side", List.of(), ids(dense));
        } else {
            assertEquals("k-NN finds for this user what it finds for admin", knnAsAdmin, knnAsUser);
            assertEquals(ids(denseAsAdmin), ids(dense));
        }
        for (String mode : MODES) {
            for (Map<String, Object> hit : hits(as("sec-q-novec", "POST", "/" + CHUNKS + "/_search", evidenceQuery(mode)))) {
                assertEquals(mode + ": no dense chunk without readable vectors: " + hit, List.of(), evidenceOf(hit).get("dense"));
                assertFalse(mode + ": " + hit, mode.equals("lexical") && ((List<Object>) evidenceOf(hit).get("lexical")).isEmpty());
            }
            for (Map<String, Object> hit : hits(as("sec-q-novec", "POST", "/" + CHUNKS + "/_search", query(mode)))) {
                Map<String, Object> fields = (Map<String, Object>) hit.get("fields");
                Object explained = fields == null ? null : fields.get("strata_best_child");
                if (mode.equals("dense")) {
                    assertNull("dense: no chunk shown without readable vectors: " + hit, explained);
                } else if (mode.equals("hybrid")) {
                    Map<String, Object> best = (Map<String, Object>) ((List<Object>) explained).get(0);
                    assertNull("hybrid: no dense chunk: " + best, best.get("dense"));
                }
            }
        }
        // admin reads the vectors: its dense evidence is there, so the assertions above can fail
        assertFalse(((List<Object>) evidenceOf(denseAsAdmin.get(0)).get("dense")).isEmpty());
    }

    /** The context of a search through {@code strata_context} as {@code user}, with a budget large enough for everything. */
    private static Map<String, Object> context(String user, String mode) throws IOException {
        return context(user, query(mode), 20000);
    }

    private static Map<String, Object> context(String user, String search, int budget) throws IOException {
        call("PUT", "/_search/pipeline/sec-ctx", "{\"response_processors\": [{\"strata_context\": {\"budget\": " + budget + "}}]}");
        Response r = as(user, "POST", "/" + CHUNKS + "/_search?search_pipeline=sec-ctx", search);
        assertEquals(bodyOf(r), 200, status(r));
        return (Map<String, Object>) ((Map<String, Object>) entityAsMap(r).get("ext")).get("strata_context");
    }

    /** As the framework retrievers search: with the evidence chunks and sentences the processor's seeds fall back on. */
    private static String retrieverQuery(String mode) {
        return "{\"size\": " + K + ", \"query\": {\"multi_granular\": {\"query_text\": \"the weather at Donwell Abbey with "
            + "strawberries\", \"k\": " + K + ", \"mode\": \"" + mode + "\", \"explain_child\": true, \"evidence\": {\"chunks\": 3, "
            + "\"sentences\": 3}}}}";
    }

    /**
     * strata_context under DLS that hides every blue parent and each red document's second parent: its lookup of the hits'
     * neighbours runs as the caller, so no passage reaches into a hidden parent (oracle: the hidden parents' spans, read as
     * admin) and no other tenant's text enters.
     */
    public void testContext_underDocumentLevelSecurity_neverQuotesAHiddenParent() throws Exception {
        ingestOnce();
        String dls = "{\"bool\": {\"filter\": {\"term\": {\"tenant\": \"red\"}}, \"must_not\": {\"term\": {\"ordinal\": 1}}}}";
        putRole("sec-ctx-red", List.of(), List.of(Map.of("index_patterns", List.of(CHUNKS), "allowed_actions", List.of("read"),
            "dls", dls)));
        putUser("sec-ctx-red", "sec-ctx-red");
        Map<String, List<int[]>> hidden = new LinkedHashMap<>();
        for (int d = 0; d < 3; d++) {
            for (Map<String, Object> chunk : chunksOf(CHUNKS, "red-" + d)) {
                if (((Number) chunk.get("ordinal")).intValue() == 1) {
                    hidden.computeIfAbsent("red-" + d, k -> new ArrayList<>()).add(new int[] {(Integer) chunk.get("start"),
                        (Integer) chunk.get("end")});
                }
            }
        }
        assertEquals(3, hidden.size());
        List<Map<String, Object>> contexts = new ArrayList<>();
        for (String mode : MODES) {
            contexts.add(context("sec-ctx-red", mode));
            // as the retrievers search, at budgets where the best hit's chunk does not fit and its sentences seed it
            for (int budget : new int[] {16, 48}) {
                contexts.add(context("sec-ctx-red", retrieverQuery(mode), budget));
            }
        }
        for (int i = 0; i < contexts.size(); i++) {
            String mode = MODES.get(i / 3) + (i % 3 == 0 ? "" : " (with evidence, small budget)");
            List<Map<String, Object>> passages = (List<Map<String, Object>>) contexts.get(i).get("passages");
            assertFalse(mode + ": a context", passages.isEmpty());
            for (Map<String, Object> p : passages) {
                String doc = (String) p.get("source_id");
                assertTrue(mode + ": " + p, doc.startsWith("red-"));
                assertFalse(mode + ": " + p, ((String) p.get("text")).contains("Donwell"));
                for (int[] h : hidden.get(doc)) {
                    assertTrue(mode + ": passage " + p.get("start") + "-" + p.get("end") + " reaches into hidden parent " + h[0] + "-"
                        + h[1], (Integer) p.get("end") <= h[0] || (Integer) p.get("start") >= h[1]);
                }
            }
        }
        // as admin the same search's context does reach into those parents: the budget is not what stopped it
        call("PUT", "/_search/pipeline/sec-ctx", "{\"response_processors\": [{\"strata_context\": {\"budget\": 20000}}]}");
        String redOnly = "{\"size\": " + K + ", \"query\": {\"bool\": {\"must\": " + multiGranular("dense")
            + ", \"filter\": {\"term\": {\"tenant\": \"red\"}}}}}";
        Map<String, Object> admin = (Map<String, Object>) ((Map<String, Object>) call("POST", "/" + CHUNKS
            + "/_search?search_pipeline=sec-ctx", redOnly).get("ext")).get("strata_context");
        boolean reaches = false;
        for (Map<String, Object> p : (List<Map<String, Object>>) admin.get("passages")) {
            for (int[] h : hidden.getOrDefault((String) p.get("source_id"), List.of())) {
                reaches |= (Integer) p.get("end") > h[0] && (Integer) p.get("start") < h[1];
            }
        }
        assertTrue("admin's context covers a parent the red user may not read", reaches);
    }

    public void testContext_underFieldLevelSecurityHidingTheText_quotesNothing() throws Exception {
        ingestOnce();
        putRole("sec-ctx-notext", List.of(), List.of(Map.of("index_patterns", List.of(CHUNKS), "allowed_actions", List.of("read"),
            "fls", List.of("~text", "~children.text"))));
        putUser("sec-ctx-notext", "sec-ctx-notext");
        for (String mode : List.of("dense", "hybrid")) {
            for (Map<String, Object> ctx : List.of(context("sec-ctx-notext", mode), context("sec-ctx-notext", retrieverQuery(mode), 48))) {
                assertEquals(mode + ": " + ctx, List.of(), ctx.get("passages"));
                assertEquals("", ctx.get("text"));
                assertEquals(0, ctx.get("tokens"));
            }
        }
    }
}

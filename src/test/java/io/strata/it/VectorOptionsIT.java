package io.strata.it;

import org.opensearch.client.ResponseException;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The processor's {@code vectors} options on a real node with the k-NN 3.4.0.0 Lucene engine: the chunk index it creates
 * indexes both vector fields with them; values the engine refuses, and an existing chunk index indexed otherwise, are 400s
 * naming the option; and an {@code sq} chunk index answers {@code multi_granular} like the float one within recall. Oracle
 * for the results: the exact MAX over every parent's stored (full-precision) vectors, brute force ({@link QueryOracle}).
 */
@SuppressWarnings("unchecked")
public class VectorOptionsIT extends StrataRestTestCase {
    private static final String SQ = "{\"encoder\": {\"name\": \"sq\", \"bits\": 7}, \"m\": 24, \"ef_construction\": 128}";
    private static final String FLOAT = "{\"encoder\": {\"name\": \"none\"}}";
    private static final List<String> QUESTIONS = List.of("Who married Miss Taylor?", "What did Mr. Woodhouse think of marriage?",
        "Who is Harriet Smith?", "What happened at the Westons' dinner?", "Why did Emma want Harriet to refuse Mr. Martin?",
        "Who is Mr. Knightley?", "What is Highbury?", "Who painted Harriet's portrait?");

    private static String pipeline(String target, String vectors) {
        return "{\"field\": \"body\", \"target_index\": \"" + target + "\", \"strategy\": {\"type\": \"recursive\", \"max_words\": 150}"
            + (vectors == null ? "" : ", \"vectors\": " + vectors) + "}";
    }

    private static Map<String, Map<String, Object>> chapters(int n) {
        Map<String, Map<String, Object>> docs = new LinkedHashMap<>();
        Iterator<Map.Entry<String, String>> it = emmaChapters().entrySet().iterator();
        for (int i = 0; i < n && it.hasNext(); i++) {
            docs.put("ch" + i, Map.of("body", it.next().getValue()));
        }
        return docs;
    }

    private static Map<String, Object> vectorField(String index, boolean child) {
        Map<String, Object> props = (Map<String, Object>) ((Map<String, Object>) ((Map<String, Object>) call0("GET", "/" + index
            + "/_mapping").get(index)).get("mappings")).get("properties");
        if (child) {
            props = (Map<String, Object>) ((Map<String, Object>) props.get("children")).get("properties");
        }
        return (Map<String, Object>) props.get("embedding");
    }

    private static Map<String, Object> call0(String method, String path) {
        try {
            return call(method, path);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    public void testSqOptions_indexBothVectorFields_andSearchLikeFloatWithinRecall() throws Exception {
        putPipeline("vo-float", pipeline("vo-float-chunks", null));
        putPipeline("vo-sq", pipeline("vo-sq-chunks", SQ));
        Map<String, Map<String, Object>> docs = chapters(4);
        assertEquals(false, bulk("vo-float", "vo-float", docs).get("errors"));
        assertEquals(false, bulk("vo-sq", "vo-sq", docs).get("errors"));
        for (boolean child : new boolean[] { false, true }) {
            Map<String, Object> method = (Map<String, Object>) vectorField("vo-sq-chunks", child).get("method");
            assertEquals("lucene", method.get("engine"));
            assertEquals("cosinesimil", method.get("space_type"));
            Map<String, Object> parameters = (Map<String, Object>) method.get("parameters");
            assertEquals(24, parameters.get("m"));
            assertEquals(128, parameters.get("ef_construction"));
            assertEquals(Map.of("name", "sq", "parameters", Map.of("bits", 7)), parameters.get("encoder"));
            // without options: full-precision floats, k-NN's defaults (as encoder none gives)
            assertEquals(Map.of("engine", "lucene", "space_type", "cosinesimil", "name", "hnsw", "parameters", Map.of()),
                vectorField("vo-float-chunks", child).get("method"));
        }
        QueryOracle exact = QueryOracle.load("vo-sq-chunks");
        Set<String> all = exact.parents().keySet();
        assertTrue("parents: " + all.size(), all.size() > 10);
        int found = 0;
        int wanted = 0;
        int sameTop = 0;
        for (String question : QUESTIONS) {
            List<Number> v = ((List<List<Number>>) call("POST", "/_plugins/_strata/_embed", json(Map.of("texts", List.of(question),
                "purpose", "query"))).get("vectors")).get(0);
            List<String> truth = new ArrayList<>();
            QueryOracle.top(exact.dense(QueryOracle.floats(v), all, null), 10).forEach(s -> truth.add(s.id()));
            List<String> sq = ids("vo-sq-chunks", v);
            List<String> flt = ids("vo-float-chunks", v);
            for (String id : sq) {
                found += truth.contains(id) ? 1 : 0;
            }
            wanted += truth.size();
            sameTop += sq.get(0).equals(flt.get(0)) ? 1 : 0;
        }
        double recall = (double) found / wanted;
        logger.info("sq7 recall@10 against the exact MAX: {}; same first parent as float in {} of {}", recall, sameTop, QUESTIONS.size());
        assertTrue("recall@10 " + recall, recall >= 0.9);
        assertTrue("same first parent in " + sameTop, sameTop >= QUESTIONS.size() - 1);
    }

    private static List<String> ids(String index, List<Number> vector) throws Exception {
        Map<String, Object> r = call("POST", "/" + index + "/_search", json(Map.of("size", 10, "_source", false, "query",
            Map.of("multi_granular", Map.of("vector", vector, "k", 10)))));
        List<String> out = new ArrayList<>();
        for (Object h : QueryOracle.hits(r)) {
            out.add((String) ((Map<String, Object>) h).get("_id"));
        }
        return out;
    }

    /**
     * The sq chunk index's dense side is rescored by default (graph search over oversample_factor × the candidates, then
     * the exact MAX of the float vectors): on a chunk index this small the graph search sees nearly every parent, so the hits are
     * the brute-force MAX oracle's top 10, in its order, with its scores. {@code rescore: false} gives the quantized scores;
     * an explicit {@code rescore} on the float index gives the oracle's too.
     */
    public void testSqChunkIndex_rescoresByDefault_toTheExactMaxOracle() throws Exception {
        putPipeline("vr-float", pipeline("vr-float-chunks", FLOAT));
        putPipeline("vr-sq", pipeline("vr-sq-chunks", "{\"encoder\": {\"name\": \"sq\", \"bits\": 7}}"));
        Map<String, Map<String, Object>> docs = chapters(4);
        assertEquals(false, bulk("vr-float", "vr-float", docs).get("errors"));
        assertEquals(false, bulk("vr-sq", "vr-sq", docs).get("errors"));
        QueryOracle exact = QueryOracle.load("vr-sq-chunks");
        Set<String> all = exact.parents().keySet();
        // the graph search collects 60 parents (2k candidates × the default factor 3) of about 70: the top 10 are among them
        assertTrue("parents: " + all.size(), all.size() > 10);
        double quantizedOff = 0;
        for (String question : QUESTIONS) {
            List<Number> v = ((List<List<Number>>) call("POST", "/_plugins/_strata/_embed", json(Map.of("texts", List.of(question),
                "purpose", "query"))).get("vectors")).get(0);
            List<QueryOracle.Scored> truth = QueryOracle.top(exact.dense(QueryOracle.floats(v), all, null), 10);
            assertScores(question + " (sq, default)", truth, hits("vr-sq-chunks", v, null));
            assertScores(question + " (float, rescore on)", truth, hits("vr-float-chunks", v, Map.of("oversample_factor", 2)));
            List<QueryOracle.Scored> off = hits("vr-sq-chunks", v, false);
            for (int i = 0; i < off.size(); i++) {
                QueryOracle.Scored o = off.get(i);
                float oracle = exact.dense(QueryOracle.floats(v), Set.of(o.id()), null).get(0).score();
                quantizedOff = Math.max(quantizedOff, Math.abs(o.score() - oracle));
            }
        }
        logger.info("rescore false on sq: largest score difference to the exact MAX {}", quantizedOff);
        assertTrue("without rescoring, sq scores are the quantized ones: " + quantizedOff, quantizedOff > 1e-4);
    }

    private static void assertScores(String what, List<QueryOracle.Scored> truth, List<QueryOracle.Scored> got) {
        assertEquals(what + ": ids", truth.stream().map(QueryOracle.Scored::id).toList(), got.stream().map(QueryOracle.Scored::id).toList());
        for (int i = 0; i < truth.size(); i++) {
            assertEquals(what + ": score of " + truth.get(i).id(), truth.get(i).score(), got.get(i).score(), 1e-5f);
        }
    }

    /** The hits of {@code multi_granular} with {@code vector} (and {@code rescore} when not null), with their scores. */
    private static List<QueryOracle.Scored> hits(String index, List<Number> vector, Object rescore) throws Exception {
        Map<String, Object> query = new LinkedHashMap<>(Map.of("vector", vector, "k", 10));
        if (rescore != null) {
            query.put("rescore", rescore);
        }
        Map<String, Object> r = call("POST", "/" + index + "/_search", json(Map.of("size", 10, "_source", false, "query",
            Map.of("multi_granular", query))));
        List<QueryOracle.Scored> out = new ArrayList<>();
        for (Object h : QueryOracle.hits(r)) {
            Map<String, Object> hit = (Map<String, Object>) h;
            out.add(new QueryOracle.Scored((String) hit.get("_id"), ((Number) hit.get("_score")).floatValue()));
        }
        return out;
    }

    public void testBadRescoreOptions_are400sNamingTheFieldAndTheRange() throws Exception {
        putPipeline("vr-bad", pipeline("vr-bad-chunks", "{\"encoder\": {\"name\": \"sq\", \"bits\": 7}}"));
        assertEquals(false, bulk("vr-bad", "vr-bad", chapters(1)).get("errors"));
        String v = ((List<?>) ((List<?>) call("POST", "/_plugins/_strata/_embed", json(Map.of("texts", List.of("Emma"), "purpose",
            "query"))).get("vectors")).get(0)).toString();
        Map<String, List<String>> bad = new LinkedHashMap<>();
        bad.put("\"vector\": " + v + ", \"rescore\": {\"oversample_factor\": 0.5}",
            List.of("[rescore.oversample_factor]", "[1, 10]", "[0.5]"));
        bad.put("\"vector\": " + v + ", \"rescore\": {\"oversample_factor\": 11}", List.of("[rescore.oversample_factor]", "[1, 10]"));
        bad.put("\"vector\": " + v + ", \"rescore\": {\"factor\": 2}", List.of("[rescore]", "oversample_factor"));
        bad.put("\"vector\": " + v + ", \"rescore\": \"yes\"", List.of("[rescore]", "true, false"));
        bad.put("\"vector\": " + v + ", \"num_candidates\": 2000, \"rescore\": {\"oversample_factor\": 10}",
            List.of("[rescore.oversample_factor]", "20000", "[plugins.strata.query.max_candidates]"));
        bad.put("\"match\": \"Emma\", \"rescore\": true", List.of("[rescore]", "[match]"));
        bad.put("\"query_text\": \"Emma\", \"mode\": \"lexical\", \"rescore\": true", List.of("[rescore]", "[mode: lexical]"));
        for (Map.Entry<String, List<String>> e : bad.entrySet()) {
            ResponseException failure = callFailing("POST", "/vr-bad-chunks/_search", "{\"query\": {\"multi_granular\": {"
                + e.getKey() + "}}}");
            assertEquals(e.getKey(), 400, failure.getResponse().getStatusLine().getStatusCode());
            for (String part : e.getValue()) {
                assertTrue(e.getValue() + " → " + failure.getMessage(), failure.getMessage().contains(part));
            }
        }
    }

    public void testOptionsTheEngineRefuses_are400sNamingTheOptionAndWhatIsAllowed() throws Exception {
        Map<String, List<String>> bad = new LinkedHashMap<>();
        bad.put("{\"encoder\": {\"name\": \"sq\", \"bits\": 4}}", List.of("[vectors.encoder.bits]", "[7]", "[4]"));
        bad.put("{\"encoder\": {\"name\": \"binary\"}}", List.of("[vectors.encoder.name]", "[sq, none]", "[binary]"));
        bad.put("{\"encoder\": {\"name\": \"none\", \"bits\": 7}}", List.of("[vectors.encoder.bits]", "[sq]", "[none]"));
        bad.put("{\"m\": 1000}", List.of("[vectors.m]", "[2, 512]", "[1000]"));
        bad.put("{\"ef_construction\": 5000}", List.of("[vectors.ef_construction]", "[2, 3200]"));
        bad.put("{\"space_type\": \"l1\"}", List.of("[vectors.space_type]", "[cosinesimil, l2, innerproduct]", "[l1]"));
        bad.put("{\"mode\": \"on_disk\"}", List.of("[vectors.mode]", "supported"));
        bad.put("\"sq\"", List.of("[vectors]", "must be an object"));
        for (Map.Entry<String, List<String>> e : bad.entrySet()) {
            ResponseException failure = callFailing("PUT", "/_ingest/pipeline/vo-bad", "{\"processors\": [{\"multi_granular_chunking\": "
                + pipeline("x-chunks", e.getKey()) + "}]}");
            assertEquals(e.getKey(), 400, failure.getResponse().getStatusLine().getStatusCode());
            for (String part : e.getValue()) {
                assertTrue(e.getKey() + " → " + failure.getMessage(), failure.getMessage().contains(part));
            }
        }
        ResponseException noVectors = callFailing("PUT", "/_ingest/pipeline/vo-bad", "{\"processors\": [{\"multi_granular_chunking\": "
            + "{\"field\": \"body\", \"target_index\": \"x\", \"embed\": false, \"vectors\": {\"m\": 32}}}]}");
        assertEquals(400, noVectors.getResponse().getStatusLine().getStatusCode());
        assertTrue(noVectors.getMessage(), noVectors.getMessage().contains("[vectors]") && noVectors.getMessage().contains("[embed]"));
    }

    public void testAnExistingChunkIndexIndexedOtherwise_isA400NamingTheOption_andNothingIsWritten() throws Exception {
        putPipeline("vo-a", pipeline("vo-shared-chunks", FLOAT));
        Map<String, Map<String, Object>> docs = chapters(1);
        assertEquals(false, bulk("vo-shared", "vo-a", docs).get("errors"));
        int before = count("vo-shared-chunks");
        putPipeline("vo-b", pipeline("vo-shared-chunks", "{\"encoder\": {\"name\": \"sq\", \"bits\": 7}}"));
        ResponseException e = callFailing("PUT", "/vo-shared/_doc/other?pipeline=vo-b&refresh=true", json(Map.of("body",
            "Emma Woodhouse, handsome, clever, and rich, with a comfortable home.")));
        assertEquals(400, e.getResponse().getStatusLine().getStatusCode());
        assertTrue(e.getMessage(), e.getMessage().contains("[vectors.encoder]") && e.getMessage().contains("[vo-shared-chunks]")
            && e.getMessage().contains("none (full-precision floats)"));
        putPipeline("vo-c", pipeline("vo-shared-chunks", "{\"m\": 32}"));
        e = callFailing("PUT", "/vo-shared/_doc/other?pipeline=vo-c&refresh=true", json(Map.of("body", "Emma Woodhouse, handsome.")));
        assertEquals(400, e.getResponse().getStatusLine().getStatusCode());
        assertTrue(e.getMessage(), e.getMessage().contains("[vectors.m] is [32]") && e.getMessage().contains("[16]"));
        assertEquals(before, count("vo-shared-chunks"));
        assertEquals(1, count("vo-shared"));
        // the options it was created with (the defaults, spelled out) are no difference
        putPipeline("vo-d", pipeline("vo-shared-chunks", "{\"m\": 16, \"ef_construction\": 100, \"space_type\": \"cosinesimil\"}"));
        call("PUT", "/vo-shared/_doc/other?pipeline=vo-d&refresh=true", json(Map.of("body", "Emma Woodhouse, handsome.")));
        assertEquals(2, count("vo-shared"));
        // a pipeline without vectors keeps writing into the float chunk index, unchanged
        putPipeline("vo-e", pipeline("vo-shared-chunks", null));
        call("PUT", "/vo-shared/_doc/third?pipeline=vo-e&refresh=true", json(Map.of("body", "Mr. Knightley, a sensible man.")));
        assertEquals(3, count("vo-shared"));
        assertTrue(count("vo-shared-chunks") > before);
        for (boolean child : new boolean[] { false, true }) {
            assertEquals(Map.of("engine", "lucene", "space_type", "cosinesimil", "name", "hnsw", "parameters", Map.of()),
                vectorField("vo-shared-chunks", child).get("method"));
        }
        // a rebuild under a pipeline asking sq creates its generation with the pipeline's options: sq 7 bits (the way to
        // quantize an existing chunk index); swapped in, the name answers multi_granular rescored, as the exact MAX oracle
        // over the generation's stored vectors
        putPipeline("vo-f", pipeline("vo-shared-chunks", "{\"encoder\": {\"name\": \"sq\"}}"));
        Map<String, Object> report = call("POST", "/_plugins/_strata/_rebuild?index=vo-shared&pipeline=vo-f");
        String generation = (String) report.get("generation_index");
        assertEquals(report.toString(), "vo-shared-chunks-g2", generation);
        for (boolean child : new boolean[] { false, true }) {
            assertEquals(Map.of("engine", "lucene", "space_type", "cosinesimil", "name", "hnsw", "parameters",
                Map.of("encoder", Map.of("name", "sq", "parameters", Map.of("bits", 7)))), vectorField(generation, child).get("method"));
        }
        call("POST", "/_plugins/_strata/_swap?index=vo-shared&pipeline=vo-f&generation=2");
        QueryOracle exact = QueryOracle.load(generation);
        List<Number> v = ((List<List<Number>>) call("POST", "/_plugins/_strata/_embed", json(Map.of("texts", List.of(QUESTIONS.get(0)),
            "purpose", "query"))).get("vectors")).get(0);
        assertScores("served generation", QueryOracle.top(exact.dense(QueryOracle.floats(v), exact.parents().keySet(), null), 10),
            hits("vo-shared-chunks", v, null));
    }

    /**
     * {@code "encoder": {"name": "sq"}} creates an sq 7-bit chunk index (both vector fields), whose {@code multi_granular}
     * hits are the brute-force exact MAX oracle's top 10 with its scores (rescored by default), and whose {@code explain_child}
     * scores are those floats too; a pipeline asking floats of it is a 400 naming {@code [vectors.encoder]}, before anything
     * is written, and one without {@code vectors} writes into it.
     */
    public void testSqByName_searchedAsTheExactMaxOracle_explainChildFromTheFloats_andNoneOnItIsA400() throws Exception {
        putPipeline("vd", pipeline("vd-chunks", "{\"encoder\": {\"name\": \"sq\"}}"));
        Map<String, Map<String, Object>> docs = chapters(4);
        assertEquals(false, bulk("vd", "vd", docs).get("errors"));
        for (boolean child : new boolean[] { false, true }) {
            assertEquals(Map.of("engine", "lucene", "space_type", "cosinesimil", "name", "hnsw", "parameters",
                Map.of("encoder", Map.of("name", "sq", "parameters", Map.of("bits", 7)))), vectorField("vd-chunks", child).get("method"));
        }
        QueryOracle exact = QueryOracle.load("vd-chunks");
        Set<String> all = exact.parents().keySet();
        assertTrue("parents: " + all.size(), all.size() > 10);
        for (String question : QUESTIONS) {
            List<Number> v = ((List<List<Number>>) call("POST", "/_plugins/_strata/_embed", json(Map.of("texts", List.of(question),
                "purpose", "query"))).get("vectors")).get(0);
            assertScores(question + " (default)", QueryOracle.top(exact.dense(QueryOracle.floats(v), all, null), 10),
                hits("vd-chunks", v, null));
            // explain_child scores its chunk from the floats too: the rescored _score, not the quantized one
            Map<String, Object> r = call("POST", "/vd-chunks/_search", json(Map.of("size", 10, "_source", false, "query",
                Map.of("multi_granular", Map.of("vector", v, "k", 10, "explain_child", true)))));
            for (Object h : QueryOracle.hits(r)) {
                Map<String, Object> hit = (Map<String, Object>) h;
                Map<String, Object> best = ((List<Map<String, Object>>) ((Map<String, Object>) hit.get("fields")).get("strata_best_child"))
                    .get(0);
                assertEquals(question + " " + hit.get("_id") + " " + best, ((Number) hit.get("_score")).doubleValue(),
                    ((Number) best.get("score")).doubleValue(), 1e-6);
            }
        }
        int before = count("vd-chunks");
        putPipeline("vd-none", pipeline("vd-chunks", FLOAT));
        ResponseException e = callFailing("PUT", "/vd/_doc/other?pipeline=vd-none&refresh=true", json(Map.of("body",
            "Emma Woodhouse, handsome, clever, and rich, with a comfortable home.")));
        assertEquals(400, e.getResponse().getStatusLine().getStatusCode());
        assertTrue(e.getMessage(), e.getMessage().contains("[vectors.encoder] is [none (full-precision floats)] but chunk index [vd-chunks] "
            + "exists with [sq 7 bits]"));
        assertEquals(before, count("vd-chunks"));
        assertEquals(docs.size(), count("vd"));
        putPipeline("vd-unset", pipeline("vd-chunks", null));
        call("PUT", "/vd/_doc/other?pipeline=vd-unset&refresh=true", json(Map.of("body", "Emma Woodhouse, handsome, clever, and rich.")));
        assertTrue(count("vd-chunks") > before);
    }
}

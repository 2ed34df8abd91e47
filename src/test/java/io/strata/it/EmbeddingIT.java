package io.strata.it;

import org.opensearch.client.ResponseException;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Chunks embedded by the bundled model inside the real node. */
@SuppressWarnings("unchecked")
public class EmbeddingIT extends StrataRestTestCase {

    private static double dot(List<Number> a, List<Number> b) {
        double s = 0;
        for (int i = 0; i < a.size(); i++) {
            s += a.get(i).doubleValue() * b.get(i).doubleValue();
        }
        return s;
    }

    public void testDefaultModel_writesUnitVectorsOnParentsAndChildren_andRecordsTheModelInTheMapping() throws Exception {
        putPipeline("emb", "{\"field\": \"body\", \"target_index\": \"emb-chunks\", \"strategy\": {\"type\": \"recursive\", \"max_words\": 120}}");
        String chapter = emmaChapters().values().iterator().next();
        call("PUT", "/emb-src/_doc/1?pipeline=emb&refresh=true", json(Map.of("body", chapter)));
        Map<String, Object> mapping = call("GET", "/emb-chunks/_mapping");
        Map<String, Object> meta = (Map<String, Object>) ((Map<String, Object>) ((Map<String, Object>) ((Map<String, Object>) mapping
            .get("emb-chunks")).get("mappings")).get("_meta")).get("strata");
        assertEquals(Map.of("model", "e5-small-v2-q", "name", "e5-small-v2-q", "dimension", 384), meta.get("model"));
        List<Map<String, Object>> chunks = chunksOf("emb-chunks", "1");
        assertTrue(chunks.size() > 5);
        int vectors = 0;
        for (Map<String, Object> chunk : chunks) {
            List<Number> v = (List<Number>) chunk.get("embedding");
            assertEquals(384, v.size());
            assertEquals(1.0, Math.sqrt(dot(v, v)), 1e-3);
            vectors++;
            List<Map<String, Object>> children = (List<Map<String, Object>>) chunk.get("children");
            assertEquals("the parent is its own first, level-0 child, with the same vector", Map.of("level", 0, "embedding", v),
                children.get(0));
            for (Map<String, Object> child : children.subList(1, children.size())) {
                assertTrue("one level-0 entry", (Integer) child.get("level") > 0);
                List<Number> c = (List<Number>) child.get("embedding");
                assertEquals(384, c.size());
                assertEquals(1.0, Math.sqrt(dot(c, c)), 1e-3);
                vectors++;
            }
        }
        assertTrue(vectors > chunks.size() * 3);
    }

    public void testKnnOverStoredVectors_ranksTheRelatedSentenceAboveTheUnrelatedOne() throws Exception {
        putPipeline("flat", "{\"field\": \"body\", \"target_index\": \"s-chunks\", \"granularities\": []}");
        Map<String, Map<String, Object>> docs = new java.util.LinkedHashMap<>();
        docs.put("cat", Map.of("body", "The cat sat on the mat."));
        docs.put("kitten", Map.of("body", "A kitten was resting on the rug."));
        docs.put("revenue", Map.of("body", "Quarterly revenue grew by ten percent."));
        assertEquals(false, bulk("s-src", "flat", docs).get("errors"));
        refresh("s-chunks");
        List<Number> cat = (List<Number>) ((Map<String, Object>) call("GET", "/s-chunks/_doc/cat:0").get("_source")).get("embedding");
        Map<String, Object> r = call("POST", "/s-chunks/_search", json(Map.of("size", 3, "_source", List.of("source_id"),
            "query", Map.of("knn", Map.of("embedding", Map.of("vector", cat, "k", 3))))));
        List<String> order = new ArrayList<>();
        for (Object hit : (List<Object>) ((Map<String, Object>) r.get("hits")).get("hits")) {
            order.add((String) ((Map<String, Object>) ((Map<String, Object>) hit).get("_source")).get("source_id"));
        }
        assertEquals(List.of("cat", "kitten", "revenue"), order);
    }

    public void testReingest_keepsVectorsOfUnchangedParents_andReembedsChangedOnes() throws Exception {
        putPipeline("small", "{\"field\": \"body\", \"target_index\": \"r-chunks\", \"granularities\": [], "
            + "\"strategy\": {\"type\": \"paragraph\", \"max_words\": 50}}");
        String first = "Emma Woodhouse, handsome, clever, and rich, had lived nearly twenty-one years in the world.";
        String second = "Mr. Knightley was a sensible man about seven or eight-and-thirty.";
        call("PUT", "/r-src/_doc/d?pipeline=small&refresh=true", json(Map.of("body", first + "\n\n" + second)));
        assertEquals(2, chunksOf("r-chunks", "d").size());
        List<Number> secondBefore = (List<Number>) chunksOf("r-chunks", "d").get(1).get("embedding");
        // mark the stored vector of the first parent: a re-embedding would overwrite the mark
        List<Double> marker = new ArrayList<>();
        for (int i = 0; i < 384; i++) {
            marker.add(i % 2 == 0 ? 1 / Math.sqrt(384) : -1 / Math.sqrt(384));
        }
        update("/r-chunks/_update/d:0?refresh=true", json(Map.of("doc", Map.of("embedding", marker))));

        String changed = "Mr. Knightley, a sensible man, walked to Hartfield in the evening.";
        call("PUT", "/r-src/_doc/d?pipeline=small&refresh=true", json(Map.of("body", first + "\n\n" + changed)));
        List<Map<String, Object>> after = chunksOf("r-chunks", "d");
        assertEquals(2, after.size());
        assertEquals(first, after.get(0).get("text"));
        List<Number> kept = (List<Number>) after.get(0).get("embedding");
        assertEquals("the unchanged parent kept its stored vector", 1.0, dot(kept, (List) marker), 1e-4);
        List<Number> reembedded = (List<Number>) after.get(1).get("embedding");
        assertEquals(changed, after.get(1).get("text"));
        assertTrue("the changed parent was embedded again", dot(reembedded, secondBefore) < 0.999);
        assertEquals(1.0, Math.sqrt(dot(reembedded, reembedded)), 1e-3);
    }

    public void testPipelineWithoutVectors_intoAnIndexHoldingVectors_isRejected() throws Exception {
        putPipeline("vec", "{\"field\": \"body\", \"target_index\": \"m-chunks\", \"granularities\": []}");
        call("PUT", "/m-src/_doc/1?pipeline=vec&refresh=true", "{\"body\": \"Some text to embed.\"}");
        putPipeline("novec", "{\"field\": \"body\", \"target_index\": \"m-chunks\", \"embed\": false}");
        ResponseException e = callFailing("PUT", "/m-src/_doc/2?pipeline=novec", "{\"body\": \"Other text.\"}");
        assertEquals(400, e.getResponse().getStatusLine().getStatusCode());
        assertTrue(e.getMessage(), e.getMessage().contains("holds vectors of model [e5-small-v2-q] (384 dims); this pipeline embeds with no model"));
    }

    public void testMlCommonsModelId_embedsChunksThroughTheMlCommonsPredictAction() throws Exception {
        // standin-embed is served by the test-only ml-commons stand-in plugin, backed by the embedded model
        putPipeline("ml", "{\"field\": \"body\", \"target_index\": \"ml-chunks\", \"model_id\": \"standin-embed\"}");
        putPipeline("local", "{\"field\": \"body\", \"target_index\": \"local-chunks\"}");
        String body = emmaChapters().values().iterator().next().substring(0, 3000);
        call("PUT", "/ml-src/_doc/1?pipeline=ml&refresh=true", json(Map.of("body", body)));
        call("PUT", "/local-src/_doc/1?pipeline=local&refresh=true", json(Map.of("body", body)));
        Map<String, Object> meta = (Map<String, Object>) ((Map<String, Object>) ((Map<String, Object>) ((Map<String, Object>) call("GET",
            "/ml-chunks/_mapping").get("ml-chunks")).get("mappings")).get("_meta")).get("strata");
        assertEquals("standin-embed", ((Map<String, Object>) meta.get("model")).get("model_id"));
        List<Map<String, Object>> viaMl = chunksOf("ml-chunks", "1");
        List<Map<String, Object>> local = chunksOf("local-chunks", "1");
        assertEquals(local.size(), viaMl.size());
        for (int i = 0; i < local.size(); i++) {
            double cos = dot((List<Number>) viaMl.get(i).get("embedding"), (List<Number>) local.get(i).get("embedding"));
            assertTrue("parent " + i + " cos " + cos, cos > 0.99);
        }
        putPipeline("ml-missing", "{\"field\": \"body\", \"target_index\": \"x-chunks\", \"model_id\": \"no-such-model\"}");
        ResponseException e = callFailing("PUT", "/x-src/_doc/1?pipeline=ml-missing", "{\"body\": \"Some text.\"}");
        assertEquals(404, e.getResponse().getStatusLine().getStatusCode());
        assertTrue(e.getMessage(), e.getMessage().contains("[model_id] [no-such-model] unknown model"));
        assertFalse(indexExists("x-chunks"));
    }

    public void testUnknownOrEscapingModel_isRejectedAtPipelineCreation() {
        for (String model : List.of("no-such-model", "../../etc", "/etc/passwd")) {
            ResponseException e = callFailing("PUT", "/_ingest/pipeline/bad",
                "{\"processors\": [{\"multi_granular_chunking\": {\"field\": \"b\", \"target_index\": \"c\", \"model\": \"" + model + "\"}}]}");
            assertEquals(400, e.getResponse().getStatusLine().getStatusCode());
            assertTrue(e.getMessage(), e.getMessage().contains("unknown model [no-such-model]") || e.getMessage().contains(
                "must be the name of a model folder in the plugin's config directory"));
            if (model.equals("no-such-model")) {
                // the folder relative to the node, never the node's absolute path
                assertTrue(e.getMessage(), e.getMessage().contains("no folder [config/strata/models/no-such-model]"));
            }
        }
    }
}

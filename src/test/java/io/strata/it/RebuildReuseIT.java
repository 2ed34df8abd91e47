package io.strata.it;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A {@code _rebuild} after only the granularities changed reuses the vectors of chunks whose embedded text is unchanged, from
 * the chunk index the pipeline serves, and embeds only the texts that are new. Oracles: the bundled model's own count of
 * the texts it embedded ({@code inference.models.<name>.texts} of {@code _plugins/_strata/stats}, summed over the nodes)
 * against the texts of {@code _chunk}'s cut under the new granularities that its cut under the old ones lacks (per
 * document); every chunk of the generation is {@code _chunk}'s, and every vector in it is {@code _embed}'s for its text
 * (cosine ≥ 0.9999).
 */
@SuppressWarnings("unchecked")
public class RebuildReuseIT extends StrataRestTestCase {
    private static final String MODEL = "e5-small-v2-q";
    private static final Map<String, Object> STRATEGY = Map.of("type", "recursive", "max_words", 60);

    private static String pipelineJson(String target, List<Double> granularities) {
        return "{\"field\": \"body\", \"target_index\": \"" + target + "\", \"strategy\": {\"type\": \"recursive\", \"max_words\": 60}, "
            + "\"granularities\": " + granularities + "}";
    }

    /** Four documents: the openings of four chapters of Emma. */
    private static Map<String, String> documents() {
        Map<String, String> docs = new LinkedHashMap<>();
        int i = 0;
        for (String chapter : emmaChapters().values()) {
            if (chapter.length() < 3000) {
                continue;
            }
            docs.put("c" + i, chapter.substring(0, chapter.indexOf(' ', 2200)));
            if (++i == 4) {
                break;
            }
        }
        return docs;
    }

    /** Texts the bundled model embedded, on every node. */
    private static long modelTexts() throws IOException {
        long sum = 0;
        for (Object n : ((Map<String, Object>) call("GET", "/_plugins/_strata/stats").get("nodes")).values()) {
            Map<String, Object> models = (Map<String, Object>) ((Map<String, Object>) ((Map<String, Object>) n).get("inference")).get("models");
            if (models.get(MODEL) instanceof Map<?, ?> m) {
                sum += ((Number) m.get("texts")).longValue();
            }
        }
        return sum;
    }

    /** The texts of a cut of {@link #cutByChunkApi}: each parent's, then its children's. */
    private static List<String> textsOf(List<Object> cut) {
        List<String> out = new ArrayList<>();
        for (Object p : cut) {
            List<Object> parent = (List<Object>) p;
            out.add((String) parent.get(1));
            for (Object c : (List<Object>) parent.get(4)) {
                out.add((String) ((List<Object>) c).get(1));
            }
        }
        return out;
    }

    private static float[] floats(Object vector) {
        List<Number> v = (List<Number>) vector;
        float[] out = new float[v.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = v.get(i).floatValue();
        }
        return out;
    }

    private static double cosine(float[] a, float[] b) {
        double dot = 0, na = 0, nb = 0;
        for (int i = 0; i < a.length; i++) {
            dot += (double) a[i] * b[i];
            na += (double) a[i] * a[i];
            nb += (double) b[i] * b[i];
        }
        return dot / Math.sqrt(na * nb);
    }

    /** Every vector of {@code chunks} (parents and children, the level-0 entries repeating the parent's included) is {@code _embed}'s of its text. */
    private static void assertVectorsAreTheModels(String id, List<Map<String, Object>> chunks) throws IOException {
        List<String> texts = new ArrayList<>();
        List<Object> vectors = new ArrayList<>();
        for (Map<String, Object> c : chunks) {
            texts.add((String) c.get("text"));
            vectors.add(c.get("embedding"));
            for (Map<String, Object> child : (List<Map<String, Object>>) c.get("children")) {
                texts.add(((Number) child.get("level")).intValue() == 0 ? (String) c.get("text") : (String) child.get("text"));
                vectors.add(child.get("embedding"));
            }
        }
        List<Object> oracle = (List<Object>) call("POST", "/_plugins/_strata/_embed", json(Map.of("texts", texts, "purpose", "passage")))
            .get("vectors");
        for (int i = 0; i < texts.size(); i++) {
            assertNotNull(id + " chunk " + i + " has a vector", vectors.get(i));
            double cos = cosine(floats(oracle.get(i)), floats(vectors.get(i)));
            assertTrue(id + " chunk " + i + " [" + texts.get(i).substring(0, Math.min(40, texts.get(i).length())) + "…] cosine " + cos,
                cos >= 0.9999);
        }
    }

    /**
     * Ingests the documents under {@code before}, changes the pipeline to {@code after}, rebuilds, and checks the model
     * embedded exactly the texts that are new to each document, and the generation against {@code _chunk} and {@code _embed}.
     */
    private void rebuildAfterGranularitiesChange(String source, List<Double> before, List<Double> after) throws Exception {
        String chunks = source + "-chunks";
        putPipeline(source, pipelineJson(chunks, before));
        call("PUT", "/" + source, "{\"settings\": {\"index.number_of_shards\": 2, \"index.default_pipeline\": \"" + source + "\"}}");
        Map<String, String> docs = documents();
        Map<String, Map<String, Object>> bodies = new LinkedHashMap<>();
        docs.forEach((id, text) -> bodies.put(id, Map.of("body", text)));
        assertEquals(false, bulk(source, source, bodies).get("errors"));
        putPipeline(source, pipelineJson(chunks, after));

        // the oracle, computed before the rebuild: per document, the texts of the new cut the old cut lacks
        Map<String, List<Object>> expected = new LinkedHashMap<>();
        long newTexts = 0;
        long allTexts = 0;
        for (Map.Entry<String, String> d : docs.entrySet()) {
            Set<String> old = new HashSet<>(textsOf(cutByChunkApi(d.getValue(), STRATEGY, before)));
            List<Object> cut = cutByChunkApi(d.getValue(), STRATEGY, after);
            expected.put(d.getKey(), cut);
            for (String t : textsOf(cut)) {
                allTexts++;
                if (!old.contains(t)) {
                    newTexts++;
                }
            }
        }

        long textsBefore = modelTexts();
        Map<String, Object> report = call("POST", "/_plugins/_strata/_rebuild?index=" + source);
        long embedded = modelTexts() - textsBefore;
        assertEquals(report.toString(), chunks + "-g2", report.get("generation_index"));
        assertEquals("texts the model embedded during the rebuild (" + allTexts + " texts in all; report " + report + ")", newTexts,
            embedded);
        assertEquals(report.toString(), newTexts, ((Number) report.get("texts_embedded")).longValue());
        assertEquals(report.toString(), allTexts - newTexts, ((Number) report.get("vectors_reused")).longValue());

        int parents = 0;
        for (Map.Entry<String, List<Object>> e : expected.entrySet()) {
            List<Map<String, Object>> written = chunksOf(chunks + "-g2", e.getKey());
            assertEquals("chunks of " + e.getKey(), e.getValue(), chunkShape(written));
            assertVectorsAreTheModels(e.getKey(), written);
            parents += e.getValue().size();
        }
        assertEquals(parents, count(chunks + "-g2"));
    }

    public void testRebuild_withALevelDropped_reusesEveryVector_andEmbedsNothing() throws Exception {
        rebuildAfterGranularitiesChange("rr-drop", List.of(0.5, 0.25), List.of(0.5));
    }

    public void testRebuild_withALevelAdded_embedsOnlyTheNewLevelsTexts() throws Exception {
        rebuildAfterGranularitiesChange("rr-add", List.of(0.5, 0.25), List.of(0.5, 0.25, 0.125));
    }
}

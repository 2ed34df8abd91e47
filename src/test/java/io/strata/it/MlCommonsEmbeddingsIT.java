package io.strata.it;

import org.opensearch.client.ResponseException;

import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code model_id}: embeddings through ml-commons' predict action, against the cluster's ml-commons stand-in
 * (test-plugins/ml-standin, its own class loader and copy of ml-commons' classes), whose {@code standin-embed} model is
 * Strata's default embedded model: the same texts must give the same vectors either way.
 */
public class MlCommonsEmbeddingsIT extends StrataRestTestCase {
    private static final List<String> TEXTS = List.of(
        "Emma Woodhouse, handsome, clever, and rich, with a comfortable home and happy disposition.",
        "The cat sat on the mat.",
        "Quarterly revenue grew by twelve percent.");

    @SuppressWarnings("unchecked")
    private static List<List<Number>> embed(String modelKey, String model, String purpose) throws IOException {
        Map<String, Object> body = new HashMap<>(Map.of("texts", TEXTS, "purpose", purpose));
        if (modelKey != null) {
            body.put(modelKey, model);
        }
        Map<String, Object> r = call("POST", "/_plugins/_strata/_embed", json(body));
        assertEquals(384, r.get("dimension"));
        if (modelKey != null) {
            assertEquals(model, r.get(modelKey));
        }
        List<List<Number>> vectors = (List<List<Number>>) r.get("vectors");
        assertEquals(TEXTS.size(), vectors.size());
        return vectors;
    }

    private static double cosine(List<Number> a, List<Number> b) {
        double dot = 0, na = 0, nb = 0;
        for (int i = 0; i < a.size(); i++) {
            double x = a.get(i).doubleValue(), y = b.get(i).doubleValue();
            dot += x * y;
            na += x * x;
            nb += y * y;
        }
        return dot / Math.sqrt(na * nb);
    }

    private static void assertSameVectors(List<List<Number>> expected, List<List<Number>> actual) {
        for (int i = 0; i < expected.size(); i++) {
            double c = cosine(expected.get(i), actual.get(i));
            assertTrue("text " + i + ": cosine " + c, c > 0.999);
        }
    }

    public void testModelId_givesTheSameVectorsAsTheEmbeddedDefault() throws IOException {
        List<List<Number>> embeddedPassages = embed(null, null, "passage");
        List<List<Number>> embeddedQueries = embed(null, null, "query");
        assertSameVectors(embeddedPassages, embed("model_id", "standin-embed", "passage"));
        // an asymmetric ml-commons model gets the content type: queries carry BGE's query instruction, as embedded
        assertSameVectors(embeddedQueries, embed("model_id", "standin-embed", "query"));
        assertTrue("the query instruction changes the vector", cosine(embeddedPassages.get(1), embeddedQueries.get(1)) < 0.999);
        // a symmetric one does not: queries are embedded like passages
        assertSameVectors(embeddedPassages, embed("model_id", "standin-embed-symmetric", "query"));
    }

    private static void assertError(String modelId, int status, String... fragments) {
        ResponseException e = callFailing("POST", "/_plugins/_strata/_embed",
            "{\"texts\": [\"a cat\"], \"model_id\": \"" + modelId + "\"}");
        assertEquals(e.getMessage(), status, e.getResponse().getStatusLine().getStatusCode());
        for (String f : fragments) {
            assertTrue("expected [" + f + "] in " + e.getMessage(), e.getMessage().contains(f));
        }
    }

    public void testUnknownModelId_is404NamingTheId() {
        assertError("no-such-model", 404, "[model_id] [no-such-model] unknown model: ml-commons has no model with this id",
            "Failed to find model");
    }

    public void testUndeployedModelId_is503WithTheDeployCall() {
        assertError("standin-undeployed", 503, "[model_id] [standin-undeployed] is not deployed in ml-commons",
            "POST _plugins/_ml/models/standin-undeployed/_deploy", "Model not ready yet. Please deploy the model first.");
    }

    public void testModelWithoutSentenceEmbeddings_is400NamingTheId() {
        assertError("standin-raw-output", 400, "[model_id] [standin-raw-output] is not a text embedding model Strata can use",
            "no [sentence_embedding] tensor (tensors: [response])");
    }
}

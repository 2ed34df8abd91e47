package io.strata.inference.mlcommons;

import org.opensearch.OpenSearchStatusException;
import org.opensearch.core.rest.RestStatus;
import org.opensearch.ml.common.output.MLPredictionOutput;
import org.opensearch.ml.common.output.model.ModelTensorOutput;
import org.opensearch.ml.common.output.model.ModelTensors;
import org.opensearch.ml.common.transport.MLTaskResponse;
import org.junit.Test;

import java.util.List;
import java.util.Map;

import static io.strata.inference.mlcommons.MlTensors.tensor;
import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotSame;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

public class PredictResponsesTests {

    private static void assertWrongOutput(MLTaskResponse response, int expected, String... fragments) {
        OpenSearchStatusException e = assertThrows(OpenSearchStatusException.class,
            () -> PredictResponses.vectors("m-1", response, expected));
        assertEquals(RestStatus.BAD_REQUEST, e.status());
        assertTrue(e.getMessage(), e.getMessage().startsWith("[model_id] [m-1] is not a text embedding model Strata can use: "));
        for (String f : fragments) {
            assertTrue("expected [" + f + "] in " + e.getMessage(), e.getMessage().contains(f));
        }
    }

    @Test
    public void testVectors_localModel_oneTensorsPerText_inOrder() {
        List<float[]> v = PredictResponses.vectors("m-1", MlTensors.local(new float[] {1, 0}, new float[] {0, 1}, new float[] {0.6f, 0.8f}), 3);
        assertEquals(3, v.size());
        assertArrayEquals(new float[] {1, 0}, v.get(0), 0);
        assertArrayEquals(new float[] {0, 1}, v.get(1), 0);
        assertArrayEquals(new float[] {0.6f, 0.8f}, v.get(2), 0);
    }

    @Test
    public void testVectors_remoteModel_allTextsInOneTensors_readTheSame() {
        List<float[]> v = PredictResponses.vectors("m-1", MlTensors.remote(new float[] {1, 0}, new float[] {0, 1}), 2);
        assertArrayEquals(new float[] {1, 0}, v.get(0), 0);
        assertArrayEquals(new float[] {0, 1}, v.get(1), 0);
    }

    @Test
    public void testVectors_notUnitLength_areNormalised() {
        List<float[]> v = PredictResponses.vectors("m-1", MlTensors.local(new float[] {3, 4}, new float[] {0, -2}), 2);
        assertArrayEquals(new float[] {0.6f, 0.8f}, v.get(0), 1e-6f);
        assertArrayEquals(new float[] {0, -1}, v.get(1), 1e-6f);
    }

    @Test
    public void testVectors_otherTensorsAreIgnored() {
        MLTaskResponse response = new MLTaskResponse(new ModelTensorOutput(List.of(
            new ModelTensors(List.of(tensor("token_embeddings", 9, 9), tensor(PredictResponses.SENTENCE_EMBEDDING, 0, 1))))));
        assertArrayEquals(new float[] {0, 1}, PredictResponses.vectors("m-1", response, 1).get(0), 0);
    }

    @Test
    public void testVectors_fromAnotherClassLoadersResponse_afterConversion() {
        MLTaskResponse ours = MlTensors.local(new float[] {0.6f, 0.8f});
        MLTaskResponse converted = MLTaskResponse.fromActionResponse(MlTensors.foreign(ours));
        assertNotSame(ours, converted);
        assertArrayEquals(new float[] {0.6f, 0.8f}, PredictResponses.vectors("m-1", converted, 1).get(0), 1e-7f);
    }

    @Test
    public void testVectors_withoutSentenceEmbedding_namesTheTensorsItGot() {
        MLTaskResponse response = new MLTaskResponse(new ModelTensorOutput(List.of(new ModelTensors(List.of(
            org.opensearch.ml.common.output.model.ModelTensor.builder().name("response").dataAsMap(Map.of("data", List.of())).build())))));
        assertWrongOutput(response, 1, "no [sentence_embedding] tensor (tensors: [response])");
        // as it arrives from ml-commons' class loader (map tensors go through gson and org.json on the way)
        assertWrongOutput(MLTaskResponse.fromActionResponse(MlTensors.foreign(response)), 1, "no [sentence_embedding] tensor");
    }

    @Test
    public void testVectors_notModelTensors_isWrongOutput() {
        MLTaskResponse response = new MLTaskResponse(new MLPredictionOutput("task", "COMPLETED", Map.of("k", "v")));
        assertWrongOutput(response, 1, "answered [MLPredictionOutput] instead of model tensors");
        assertWrongOutput(new MLTaskResponse(new ModelTensorOutput(List.of())), 1, "no [sentence_embedding] tensor");
    }

    @Test
    public void testVectors_countOrDimensionMismatch_isWrongOutput() {
        assertWrongOutput(MlTensors.local(new float[] {1, 0}), 2, "answered 1 [sentence_embedding] tensors for 2 texts");
        assertWrongOutput(MlTensors.local(new float[] {1, 0}, new float[] {1, 0, 0}), 2, "vectors differ in length (2 for text 0, 3 for text 1)");
    }

    @Test
    public void testVectors_emptyZeroOrNonFinite_isWrongOutput() {
        assertWrongOutput(MlTensors.local(new float[0]), 1, "tensor of text 0 has no numbers");
        assertWrongOutput(MlTensors.local(new float[] {1, 0}, new float[] {0, 0}), 2, "vector of text 1 is all zeros");
        assertWrongOutput(MlTensors.local(new float[] {Float.NaN, 1}), 1, "non-finite value [NaN] at 0");
    }
}

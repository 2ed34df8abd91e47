package io.strata.inference.mlcommons;

import org.opensearch.ml.common.output.MLOutput;
import org.opensearch.ml.common.output.model.ModelTensor;
import org.opensearch.ml.common.output.model.ModelTensorOutput;
import org.opensearch.ml.common.output.model.ModelTensors;
import org.opensearch.ml.common.transport.MLTaskResponse;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Reads the vectors out of an ml-commons predict response: every tensor named {@code sentence_embedding}, in order.
 * Local TEXT_EMBEDDING models answer one {@link ModelTensors} per text; remote models whose connector
 * post-processes to embeddings answer one {@link ModelTensors} holding one tensor per text. Both read the same.
 */
public final class PredictResponses {
    public static final String SENTENCE_EMBEDDING = "sentence_embedding";
    /** A vector whose length is this close to 1 is taken as already normalised. */
    private static final double UNIT_TOLERANCE = 1e-4;

    private PredictResponses() {}

    /** One L2-normalised vector per text; {@code expected} is the number of texts sent. */
    public static List<float[]> vectors(String modelId, MLTaskResponse response, int expected) {
        MLOutput output = response == null ? null : response.getOutput();
        if (!(output instanceof ModelTensorOutput tensorOutput)) {
            throw MlCommonsErrors.wrongOutput(modelId, "it answered " + (output == null ? "no output"
                : "[" + output.getClass().getSimpleName() + "]") + " instead of model tensors");
        }
        List<float[]> vectors = new ArrayList<>(expected);
        Set<String> otherNames = new LinkedHashSet<>();
        List<ModelTensors> outputs = tensorOutput.getMlModelOutputs() == null ? List.of() : tensorOutput.getMlModelOutputs();
        for (ModelTensors tensors : outputs) {
            if (tensors == null || tensors.getMlModelTensors() == null) {
                continue;
            }
            for (ModelTensor tensor : tensors.getMlModelTensors()) {
                if (SENTENCE_EMBEDDING.equals(tensor.getName())) {
                    vectors.add(toVector(modelId, tensor, vectors.size()));
                } else {
                    otherNames.add(String.valueOf(tensor.getName()));
                }
            }
        }
        if (vectors.isEmpty()) {
            throw MlCommonsErrors.wrongOutput(modelId, "it answered no [" + SENTENCE_EMBEDDING + "] tensor (tensors: " + otherNames + ")");
        }
        if (vectors.size() != expected) {
            throw MlCommonsErrors.wrongOutput(modelId, String.format(Locale.ROOT, "it answered %d [%s] tensors for %d texts", vectors.size(),
                SENTENCE_EMBEDDING, expected));
        }
        int dimension = vectors.get(0).length;
        for (int i = 1; i < vectors.size(); i++) {
            if (vectors.get(i).length != dimension) {
                throw MlCommonsErrors.wrongOutput(modelId, String.format(Locale.ROOT, "its vectors differ in length (%d for text 0, %d for text %d)",
                    dimension, vectors.get(i).length, i));
            }
        }
        return vectors;
    }

    private static float[] toVector(String modelId, ModelTensor tensor, int index) {
        Number[] data = tensor.getData();
        if (data == null || data.length == 0) {
            throw MlCommonsErrors.wrongOutput(modelId, "the [" + SENTENCE_EMBEDDING + "] tensor of text " + index + " has no numbers");
        }
        float[] vector = new float[data.length];
        double sumOfSquares = 0;
        for (int i = 0; i < data.length; i++) {
            float v = data[i] == null ? Float.NaN : data[i].floatValue();
            if (!Float.isFinite(v)) {
                throw MlCommonsErrors.wrongOutput(modelId, String.format(Locale.ROOT, "the vector of text %d has a non-finite value [%s] at %d",
                    index, data[i], i));
            }
            vector[i] = v;
            sumOfSquares += (double) v * v;
        }
        if (sumOfSquares == 0) {
            throw MlCommonsErrors.wrongOutput(modelId, "the vector of text " + index + " is all zeros");
        }
        double norm = Math.sqrt(sumOfSquares);
        if (Math.abs(norm - 1) > UNIT_TOLERANCE) {
            for (int i = 0; i < vector.length; i++) {
                vector[i] = (float) (vector[i] / norm);
            }
        }
        return vector;
    }
}

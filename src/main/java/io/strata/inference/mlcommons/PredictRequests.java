package io.strata.inference.mlcommons;

import io.strata.chunking.Embedder;
import org.opensearch.ml.common.FunctionName;
import org.opensearch.ml.common.dataset.TextDocsInputDataSet;
import org.opensearch.ml.common.input.MLInput;
import org.opensearch.ml.common.input.parameter.textembedding.AsymmetricTextEmbeddingParameters;
import org.opensearch.ml.common.input.parameter.textembedding.AsymmetricTextEmbeddingParameters.EmbeddingContentType;
import org.opensearch.ml.common.output.model.ModelResultFilter;
import org.opensearch.ml.common.transport.prediction.MLPredictionTaskRequest;

import java.util.List;

/** Builds ml-commons predict requests for text embeddings. */
final class PredictRequests {
    private PredictRequests() {}

    /**
     * A TEXT_EMBEDDING predict request for {@code texts}, asking for the {@code sentence_embedding} tensors as numbers.
     *
     * @param contentType the purpose to declare (asymmetric models only: ml-commons rejects it for symmetric ones), or null
     */
    static MLPredictionTaskRequest textEmbedding(String modelId, List<String> texts, Embedder.Purpose contentType) {
        ModelResultFilter filter = ModelResultFilter.builder().returnNumber(true)
            .targetResponse(List.of(PredictResponses.SENTENCE_EMBEDDING)).build();
        MLInput.MLInputBuilder input = MLInput.builder().algorithm(FunctionName.TEXT_EMBEDDING)
            .inputDataset(TextDocsInputDataSet.builder().docs(texts).resultFilter(filter).build());
        if (contentType != null) {
            input.parameters(new AsymmetricTextEmbeddingParameters(
                contentType == Embedder.Purpose.QUERY ? EmbeddingContentType.QUERY : EmbeddingContentType.PASSAGE));
        }
        return new MLPredictionTaskRequest(modelId, input.build());
    }
}

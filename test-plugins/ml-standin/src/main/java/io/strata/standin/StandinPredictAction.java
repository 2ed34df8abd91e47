package io.strata.standin;

import org.opensearch.OpenSearchStatusException;
import org.opensearch.action.ActionRequest;
import org.opensearch.action.support.ActionFilters;
import org.opensearch.action.support.HandledTransportAction;
import org.opensearch.cluster.service.ClusterService;
import org.opensearch.common.inject.Inject;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.rest.RestStatus;
import org.opensearch.ml.common.dataset.TextDocsInputDataSet;
import org.opensearch.ml.common.exception.MLException;
import org.opensearch.ml.common.input.MLInput;
import org.opensearch.ml.common.input.parameter.textembedding.AsymmetricTextEmbeddingParameters;
import org.opensearch.ml.common.output.model.MLResultDataType;
import org.opensearch.ml.common.output.model.ModelTensor;
import org.opensearch.ml.common.output.model.ModelTensorOutput;
import org.opensearch.ml.common.output.model.ModelTensors;
import org.opensearch.ml.common.transport.MLTaskResponse;
import org.opensearch.ml.common.transport.prediction.MLPredictionTaskAction;
import org.opensearch.ml.common.transport.prediction.MLPredictionTaskRequest;
import org.opensearch.tasks.Task;
import org.opensearch.transport.TransportService;
import org.opensearch.transport.client.Client;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * ml-commons' predict action for fixed model ids, with ml-commons 3.4's answers:
 * <ul>
 * <li>{@code standin-embed}: a TEXT_EMBEDDING model registered with query/passage prefixes (asymmetric), computed by
 *     Strata's default embedded model through Strata's {@code cluster:admin/strata/embed} action. Without the content
 *     type it fails as ml-commons' {@code TextEmbeddingModel} does.</li>
 * <li>{@code standin-embed-symmetric}: the same model registered without prefixes (symmetric: always embedded as a
 *     passage); a content type is rejected as ml-commons does.</li>
 * <li>{@code standin-undeployed}: registered, deployed nowhere ({@code MLPredictTaskRunner}'s error).</li>
 * <li>{@code standin-raw-output}: a remote model whose connector has no post-processing (a {@code response} tensor).</li>
 * <li>{@code standin-llm}: a REMOTE model whose connector calls an OpenAI-compatible completions API, answered by
 *     {@link StandinLlm}'s deterministic rules (echo, logprobs, text_offset, top_logprobs, greedy text).</li>
 * <li>{@code standin-llm-no-eos}: the same model behind a server whose top alternatives never list the end-of-sequence
 * token (as an OpenAI-style API with {@code logprobs: 5} where EOS is rarely among the five);</li>
 * <li>{@code standin-llm-ctx64}: the same model served with a context of 64 tokens (longer prompts are refused);</li>
 * <li>{@code standin-llm-text-only}: the same model behind a connector whose template drops {@code echo} and
 *     {@code logprobs} (answers text only).</li>
 * <li>anything else: unknown ({@code MLModelManager.getModel}'s error).</li>
 * </ul>
 * TEST ONLY outage switch: a model id listed in {@link MlStandinPlugin#DOWN_MODELS} fails as ml-commons does when the model
 * is deployed on no node (undeployed, or its nodes left), until it is removed from the list. TEST ONLY hang switch: a
 * model id listed in {@link MlStandinPlugin#HANG_MODELS} is never answered while listed (a stuck remote connector).
 */
public class StandinPredictAction extends HandledTransportAction<ActionRequest, MLTaskResponse> {
    private final Client client;
    private final ClusterService clusterService;
    /** Calls held by {@link MlStandinPlugin#HANG_MODELS}, by model id. */
    private final Map<String, Queue<ActionListener<MLTaskResponse>>> hung = new ConcurrentHashMap<>();

    @Inject
    public StandinPredictAction(TransportService transportService, ActionFilters actionFilters, Client client,
                                ClusterService clusterService) {
        super(MLPredictionTaskAction.NAME, transportService, actionFilters, MLPredictionTaskRequest::new);
        this.client = client;
        this.clusterService = clusterService;
        clusterService.getClusterSettings().addSettingsUpdateConsumer(MlStandinPlugin.HANG_MODELS, this::releaseHung);
    }

    /** Fails the held calls of every model id no longer listed as hanging. */
    private void releaseHung(List<String> stillHanging) {
        for (Map.Entry<String, Queue<ActionListener<MLTaskResponse>>> e : hung.entrySet()) {
            if (!stillHanging.contains(e.getKey())) {
                for (ActionListener<MLTaskResponse> held; (held = e.getValue().poll()) != null; ) {
                    held.onFailure(new IllegalStateException("standin: hang of model [" + e.getKey() + "] released"));
                }
            }
        }
    }

    @Override
    protected void doExecute(Task task, ActionRequest request, ActionListener<MLTaskResponse> listener) {
        MLPredictionTaskRequest predict = MLPredictionTaskRequest.fromActionRequest(request); // as ml-commons does
        String modelId = predict.getModelId();
        MLInput input = predict.getMlInput();
        AsymmetricTextEmbeddingParameters contentType = input.getParameters() instanceof AsymmetricTextEmbeddingParameters p ? p : null;
        if (modelId != null && clusterService.getClusterSettings().get(MlStandinPlugin.DOWN_MODELS).contains(modelId)) {
            listener.onFailure(new IllegalArgumentException("Model not ready yet. Please deploy the model first."));
            return;
        }
        if (modelId != null && clusterService.getClusterSettings().get(MlStandinPlugin.HANG_MODELS).contains(modelId)) {
            hung.computeIfAbsent(modelId, id -> new ConcurrentLinkedQueue<>()).add(listener); // never answered while listed
            return;
        }
        switch (modelId == null ? "" : modelId) {
            case "standin-embed" -> {
                if (contentType == null) {
                    listener.onFailure(inferenceFailure(modelId, "The embedding model chosen is asymmetric. To use it, you must declare "
                        + "whether the input is of type `QUERY` or of type `PASSAGE`."));
                    return;
                }
                embed(modelId, docs(input), contentType.getEmbeddingContentType().name(), listener);
            }
            case "standin-embed-symmetric" -> {
                if (contentType != null) {
                    listener.onFailure(inferenceFailure(modelId, "When passing AsymmetricTextEmbeddingParameters, the model requires to "
                        + "be registered with at least one of `query_prefix` or `passage_prefix`."));
                    return;
                }
                embed(modelId, docs(input), "PASSAGE", listener);
            }
            case "standin-undeployed" -> listener.onFailure(new IllegalArgumentException("Model not ready yet. Please deploy the model first."));
            case "standin-raw-output" -> listener.onResponse(new MLTaskResponse(new ModelTensorOutput(List.of(new ModelTensors(List.of(
                ModelTensor.builder().name("response").dataAsMap(Map.of("object", "list", "data", List.of())).build()))))));
            case "standin-llm" -> listener.onResponse(StandinLlm.predict(input, true));
            case "standin-llm-text-only" -> listener.onResponse(StandinLlm.predict(input, false));
            case "standin-llm-no-eos" -> listener.onResponse(StandinLlm.predict(input, true, false));
            case "standin-llm-ctx64" -> {
                try {
                    listener.onResponse(StandinLlm.predict(input, true, true, 64));
                } catch (OpenSearchStatusException e) {
                    listener.onFailure(e);
                }
            }
            default -> listener.onFailure(new OpenSearchStatusException("Failed to find model", RestStatus.NOT_FOUND));
        }
    }

    private static List<String> docs(MLInput input) {
        return ((TextDocsInputDataSet) input.getInputDataset()).getDocs();
    }

    /** How ml-commons' {@code DLModel.predict} reports a failure inside the model. */
    private static MLException inferenceFailure(String modelId, String cause) {
        return new MLException("Failed to inference TEXT_EMBEDDING model: " + modelId, new IllegalArgumentException(cause));
    }

    private void embed(String modelId, List<String> texts, String purpose, ActionListener<MLTaskResponse> listener) {
        StrataEmbed.call(client, new StrataEmbed.Request(purpose, texts), ActionListener.wrap(response -> {
            List<ModelTensors> outputs = new ArrayList<>(response.vectors.size());
            for (float[] v : response.vectors) {
                Number[] data = new Number[v.length];
                for (int i = 0; i < v.length; i++) {
                    data[i] = v[i];
                }
                outputs.add(new ModelTensors(List.of(ModelTensor.builder().name("sentence_embedding").data(data)
                    .shape(new long[] {v.length}).dataType(MLResultDataType.FLOAT32).build())));
            }
            listener.onResponse(new MLTaskResponse(new ModelTensorOutput(outputs)));
        }, e -> listener.onFailure(new MLException("Failed to inference TEXT_EMBEDDING model: " + modelId, e))));
    }
}

package io.strata.inference.mlcommons;

import io.strata.model.ModelInfo;
import io.strata.model.ModelRef;
import io.strata.chunking.Embedder;
import io.strata.inference.RemoteEmbeddings;
import org.opensearch.action.support.ListenerTimeouts;
import org.opensearch.common.unit.TimeValue;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.action.ActionResponse;
import org.opensearch.ml.common.transport.MLTaskResponse;
import org.opensearch.ml.common.transport.prediction.MLPredictionTaskAction;
import org.opensearch.ml.common.transport.prediction.MLPredictionTaskRequest;
import org.opensearch.threadpool.ThreadPool;
import org.opensearch.transport.client.Client;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * Embeddings from ml-commons models ({@code "model_id"}), through ml-commons' predict transport action on the node
 * client. Non-blocking: the listener is called on the thread ml-commons answers on.
 *
 * <p><b>Two class loaders.</b> Strata bundles its own copy of ml-commons' request classes (it does not extend the
 * ml-commons plugin, which may be absent). ml-commons converts our request with {@code fromActionRequest}, and its
 * answer, an {@code MLTaskResponse} of its class loader, is converted here with {@link MLTaskResponse#fromActionResponse}
 * (a stream round trip) before anything reads it.
 *
 * <p><b>Query and passage.</b> ml-commons rejects the content type for symmetric models and requires it for models
 * registered with {@code query_prefix}/{@code passage_prefix}; which one a model is cannot be seen from its id. A
 * model is first called without it; if ml-commons answers that the model is asymmetric, the call is repeated with the
 * content type and that is remembered per model id (and the other way round, should a model be re-registered).
 *
 * <p><b>Timeout.</b> The predict request has no timeout of its own, and a model can hang (a remote connector, a
 * saturated predict pool). Every call fails after the timeout ({@code plugins.strata.inference.remote_timeout}, read
 * per call, so a change applies to the next call) with a 504 naming the model; a late answer is dropped. The
 * ml-commons task itself is not cancelled.
 */
public final class MlCommonsEmbeddings implements RemoteEmbeddings {
    static final String PROBE_TEXT = "Strata dimension probe";

    private final Client client;
    private final Supplier<TimeValue> timeout;
    private final Map<String, Boolean> asymmetric = new ConcurrentHashMap<>();
    private final Map<String, ModelInfo> described = new ConcurrentHashMap<>();

    public MlCommonsEmbeddings(Client client, Supplier<TimeValue> timeout) {
        this.client = client;
        this.timeout = timeout;
    }

    MlCommonsEmbeddings(Client client, TimeValue timeout) {
        this(client, () -> timeout);
    }

    @Override
    public void embed(String modelId, List<String> texts, Embedder.Purpose purpose, ActionListener<List<float[]>> listener) {
        if (texts.isEmpty()) {
            listener.onResponse(List.of());
            return;
        }
        TimeValue limit = timeout.get();
        ActionListener<List<float[]>> timed = ListenerTimeouts.wrapWithTimeout(client.threadPool(), limit, ThreadPool.Names.GENERIC,
            listener, wrapper -> listener.onFailure(MlCommonsErrors.timeout(modelId, limit))); // the wrapper is done by now
        predict(modelId, texts, purpose, asymmetric.getOrDefault(modelId, false), true, timed);
    }

    /** Name (the model id: ml-commons names are not unique) and dimension, from one probe embedding; cached per model id. */
    @Override
    public void describe(String modelId, ActionListener<ModelInfo> listener) {
        ModelInfo known = described.get(modelId);
        if (known != null) {
            listener.onResponse(known);
            return;
        }
        embed(modelId, List.of(PROBE_TEXT), Embedder.Purpose.PASSAGE, ActionListener.wrap(vectors -> {
            ModelInfo info = new ModelInfo(new ModelRef(null, modelId), modelId, vectors.get(0).length);
            described.put(modelId, info);
            listener.onResponse(info);
        }, listener::onFailure));
    }

    private void predict(String modelId, List<String> texts, Embedder.Purpose purpose, boolean withContentType, boolean mayRetry,
                         ActionListener<List<float[]>> listener) {
        ActionListener<MLTaskResponse> onAnswer = new ActionListener<>() {
            @Override
            public void onResponse(MLTaskResponse response) {
                List<float[]> vectors;
                try {
                    vectors = PredictResponses.vectors(modelId, response, texts.size());
                } catch (Exception e) {
                    listener.onFailure(e);
                    return;
                }
                listener.onResponse(vectors);
            }

            @Override
            public void onFailure(Exception e) {
                Boolean needsContentType = MlCommonsErrors.contentTypeHint(e);
                if (mayRetry && needsContentType != null && needsContentType != withContentType) {
                    asymmetric.put(modelId, needsContentType);
                    predict(modelId, texts, purpose, needsContentType, false, listener);
                } else {
                    listener.onFailure(MlCommonsErrors.translate(modelId, e));
                }
            }
        };
        try {
            MLPredictionTaskRequest request = PredictRequests.textEmbedding(modelId, texts, withContentType ? purpose : null);
            client.execute(MLPredictionTaskAction.INSTANCE, request, converting(onAnswer));
        } catch (Exception e) {
            // the node client throws at once when no plugin registered the action (ml-commons not installed)
            onAnswer.onFailure(e);
        }
    }

    /**
     * A listener for ml-commons' answer, an {@code MLTaskResponse} of ml-commons' class loader (or of ours, in tests).
     * {@code T} erases to {@link ActionResponse}, so nothing casts the foreign object before it is converted.
     */
    static <T extends ActionResponse> ActionListener<T> converting(ActionListener<MLTaskResponse> listener) {
        return new ActionListener<>() {
            @Override
            public void onResponse(T response) {
                MLTaskResponse converted;
                try {
                    converted = MLTaskResponse.fromActionResponse(response);
                } catch (Exception | LinkageError e) {
                    listener.onFailure(new IllegalStateException("cannot read ml-commons' predict response: " + e, e));
                    return;
                }
                listener.onResponse(converted);
            }

            @Override
            public void onFailure(Exception e) {
                listener.onFailure(e);
            }
        };
    }
}

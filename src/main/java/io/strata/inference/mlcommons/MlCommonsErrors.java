package io.strata.inference.mlcommons;

import io.strata.inference.InferenceSettings;
import org.opensearch.ExceptionsHelper;
import org.opensearch.OpenSearchStatusException;
import org.opensearch.common.unit.TimeValue;
import org.opensearch.core.rest.RestStatus;
import org.opensearch.ml.common.transport.prediction.MLPredictionTaskAction;
import org.opensearch.transport.ActionNotFoundTransportException;

import java.util.Locale;

/**
 * Turns what ml-commons (or the node, when ml-commons is missing) answers into one error per cause, each naming
 * the model id and what to do. ml-commons' own messages do not name the model ("Failed to find model", "Model not
 * ready yet. Please deploy the model first."), so they are kept only as the cause.
 *
 * <p>The messages matched here are ml-commons 3.4's: {@code MLModelManager.getModel} fails with
 * {@code OpenSearchStatusException("Failed to find model", NOT_FOUND)}, {@code MLPredictTaskRunner} with
 * {@code IllegalArgumentException("Model not ready yet. Please deploy the model first.")} when no node has the model
 * deployed (ml-commons answers 400; Strata answers 503: the request is valid, the model is not serving right now, and
 * the usual cause mid-ingest is transient, its nodes restarting or redeploying, so clients should back off and retry
 * rather than drop the document), and {@code TextEmbeddingModel} with the two asymmetric-model messages below (wrapped in an
 * {@code MLException}, whose class is ml-commons' own, so only messages are compared).
 */
public final class MlCommonsErrors {
    /** A model registered with {@code query_prefix}/{@code passage_prefix} that was called without the content type. */
    static final String NEEDS_CONTENT_TYPE = "The embedding model chosen is asymmetric";
    /** A symmetric model that was called with a content type. */
    static final String REJECTS_CONTENT_TYPE = "requires to be registered with at least one of `query_prefix` or `passage_prefix`";

    private MlCommonsErrors() {}

    /** The error for {@code e}, a failure of the predict call for {@code modelId}. */
    public static OpenSearchStatusException translate(String modelId, Throwable e) {
        Throwable cause = ExceptionsHelper.unwrapCause(e);
        if (cause instanceof OpenSearchStatusException own && own.getMessage() != null
            && own.getMessage().startsWith("[model_id] [" + modelId + "]")) {
            return own;
        }
        if (isMissingAction(cause)) {
            return new OpenSearchStatusException(String.format(Locale.ROOT,
                "[model_id] [%s] needs the ml-commons plugin (opensearch-ml), which is not installed on this cluster: install it, or "
                    + "use [model] with a model of Strata's embedded engine", modelId), RestStatus.BAD_REQUEST, cause);
        }
        String messages = messages(cause);
        if (ExceptionsHelper.status(cause) == RestStatus.NOT_FOUND || messages.contains("Failed to find model")
            || messages.contains("No model found")) {
            return new OpenSearchStatusException(String.format(Locale.ROOT,
                "[model_id] [%s] unknown model: ml-commons has no model with this id (%s)", modelId, messages), RestStatus.NOT_FOUND,
                cause);
        }
        if (messages.contains("Model not ready") || messages.contains("deploy model first") || messages.contains("deploy the model first")) {
            return new OpenSearchStatusException(String.format(Locale.ROOT,
                "[model_id] [%s] is not deployed in ml-commons: deploy it with POST _plugins/_ml/models/%s/_deploy (%s)", modelId,
                modelId, messages), RestStatus.SERVICE_UNAVAILABLE, cause);
        }
        RestStatus status = ExceptionsHelper.status(cause);
        return new OpenSearchStatusException(String.format(Locale.ROOT, "[model_id] [%s] ml-commons prediction failed: %s", modelId,
            messages), status, cause);
    }

    /** The model answered but not with one sentence embedding per text. */
    public static OpenSearchStatusException wrongOutput(String modelId, String what) {
        return new OpenSearchStatusException(String.format(Locale.ROOT,
            "[model_id] [%s] is not a text embedding model Strata can use: %s; expected one [%s] tensor of numbers per text (a local "
                + "TEXT_EMBEDDING model, or a remote model whose connector post-processes to sentence embeddings)", modelId, what,
            PredictResponses.SENTENCE_EMBEDDING), RestStatus.BAD_REQUEST);
    }

    public static OpenSearchStatusException timeout(String modelId, TimeValue timeout) {
        return new OpenSearchStatusException(String.format(Locale.ROOT,
            "[model_id] [%s] ml-commons did not answer within [%s] ([%s])", modelId, timeout, InferenceSettings.REMOTE_TIMEOUT.getKey()),
            RestStatus.GATEWAY_TIMEOUT);
    }

    /**
     * Whether the failure says how to call an asymmetric (query/passage) model: TRUE when the model needs the content
     * type, FALSE when it rejects it, null when the failure is about something else.
     */
    static Boolean contentTypeHint(Throwable e) {
        String messages = messages(ExceptionsHelper.unwrapCause(e));
        if (messages.contains(NEEDS_CONTENT_TYPE)) {
            return Boolean.TRUE;
        }
        if (messages.contains(REJECTS_CONTENT_TYPE)) {
            return Boolean.FALSE;
        }
        return null;
    }

    /**
     * No handler for the predict action: thrown by the node client when no plugin registered it on this node
     * ("failed to find action [...] to execute", with the action object's default toString, i.e. its class name), or
     * answered by a remote node that has none.
     */
    static boolean isMissingAction(Throwable e) {
        if (e instanceof ActionNotFoundTransportException) {
            return true;
        }
        String m = e instanceof IllegalStateException ? e.getMessage() : null;
        return m != null && m.startsWith("failed to find action [")
            && (m.contains(MLPredictionTaskAction.NAME) || m.contains(MLPredictionTaskAction.class.getName()));
    }

    /** The messages of {@code e} and its causes, outermost first, joined (ml-commons wraps the useful one). */
    static String messages(Throwable e) {
        StringBuilder out = new StringBuilder();
        for (Throwable t = e; t != null && out.length() < 2000; t = t.getCause() == t ? null : t.getCause()) {
            String m = t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
            if (out.indexOf(m) < 0) {
                out.append(out.length() == 0 ? "" : ": ").append(m);
            }
        }
        return out.toString();
    }
}

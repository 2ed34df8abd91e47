package io.strata.inference.mlcommons;

import io.strata.model.ModelInfo;
import io.strata.chunking.Embedder;
import org.opensearch.OpenSearchStatusException;
import org.opensearch.action.ActionRequest;
import org.opensearch.action.ActionType;
import org.opensearch.common.unit.TimeValue;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.action.ActionResponse;
import org.opensearch.core.rest.RestStatus;
import org.opensearch.ml.common.FunctionName;
import org.opensearch.ml.common.dataset.TextDocsInputDataSet;
import org.opensearch.ml.common.exception.MLException;
import org.opensearch.ml.common.input.parameter.textembedding.AsymmetricTextEmbeddingParameters;
import org.opensearch.ml.common.input.parameter.textembedding.AsymmetricTextEmbeddingParameters.EmbeddingContentType;
import org.opensearch.ml.common.transport.prediction.MLPredictionTaskAction;
import org.opensearch.ml.common.transport.prediction.MLPredictionTaskRequest;
import org.opensearch.test.client.NoOpClient;
import org.junit.After;
import org.junit.Test;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

public class MlCommonsEmbeddingsTests {

    /**
     * Stands in for the node client: answers the predict action with {@code model}'s answer (a response, an exception
     * to fail with, or null for no answer), delivering responses as another class loader's objects.
     */
    private static final class FakeMlCommons extends NoOpClient {
        final List<MLPredictionTaskRequest> requests = new CopyOnWriteArrayList<>();
        volatile Function<MLPredictionTaskRequest, Object> model;
        volatile boolean installed = true;

        FakeMlCommons() {
            super("ml-commons-fake");
        }

        @Override
        @SuppressWarnings("unchecked")
        protected <Req extends ActionRequest, Resp extends ActionResponse> void doExecute(ActionType<Resp> action, Req request,
                                                                                          ActionListener<Resp> listener) {
            if (!installed) {
                throw new IllegalStateException("failed to find action [" + action + "] to execute");
            }
            assertEquals(MLPredictionTaskAction.NAME, action.name());
            MLPredictionTaskRequest r = MLPredictionTaskRequest.fromActionRequest(request);
            requests.add(r);
            Object answer = model.apply(r);
            if (answer instanceof Exception e) {
                listener.onFailure(e);
            } else if (answer != null) {
                listener.onResponse((Resp) MlTensors.foreign((org.opensearch.ml.common.transport.MLTaskResponse) answer));
            }
        }
    }

    private final FakeMlCommons client = new FakeMlCommons();
    /** A time-out no answer of the fake comes near, even on a loaded machine (a 200 ms one failed a full run under load 11); the time-out tests make their own. */
    private final MlCommonsEmbeddings embeddings = new MlCommonsEmbeddings(client, TimeValue.timeValueSeconds(30));

    @After
    public void closeClient() {
        client.close();
    }

    private List<float[]> embed(String modelId, List<String> texts, Embedder.Purpose purpose) throws Exception {
        CompletableFuture<List<float[]>> result = new CompletableFuture<>();
        embeddings.embed(modelId, texts, purpose, ActionListener.wrap(result::complete, result::completeExceptionally));
        return result.get(10, TimeUnit.SECONDS);
    }

    private OpenSearchStatusException embedFailing(String modelId) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> embed(modelId, List.of("x"), Embedder.Purpose.PASSAGE));
        assertTrue(String.valueOf(e.getCause()), e.getCause() instanceof OpenSearchStatusException);
        return (OpenSearchStatusException) e.getCause();
    }

    private static EmbeddingContentType contentType(MLPredictionTaskRequest r) {
        return r.getMlInput().getParameters() instanceof AsymmetricTextEmbeddingParameters p ? p.getEmbeddingContentType() : null;
    }

    @Test
    public void testEmbed_sendsTextEmbeddingRequestAndReadsTheForeignResponse() throws Exception {
        client.model = r -> MlTensors.local(new float[] {3, 4}, new float[] {1, 0});
        List<float[]> vectors = embed("m-1", List.of("a cat", "a dog"), Embedder.Purpose.PASSAGE);
        assertArrayEquals(new float[] {0.6f, 0.8f}, vectors.get(0), 1e-6f);
        assertArrayEquals(new float[] {1, 0}, vectors.get(1), 0);

        MLPredictionTaskRequest sent = client.requests.get(0);
        assertEquals("m-1", sent.getModelId());
        assertEquals(FunctionName.TEXT_EMBEDDING, sent.getMlInput().getAlgorithm());
        TextDocsInputDataSet docs = (TextDocsInputDataSet) sent.getMlInput().getInputDataset();
        assertEquals(List.of("a cat", "a dog"), docs.getDocs());
        assertEquals(List.of("sentence_embedding"), docs.getResultFilter().getTargetResponse());
        assertTrue(docs.getResultFilter().isReturnNumber());
        assertNull("a model is first taken as symmetric", sent.getMlInput().getParameters());
    }

    @Test
    public void testEmbed_asymmetricModel_isRetriedWithTheContentTypeAndRemembered() throws Exception {
        client.model = r -> {
            if (contentType(r) == null) {
                return new MLException("Failed to inference TEXT_EMBEDDING model: m-asym", new IllegalArgumentException(
                    "The embedding model chosen is asymmetric. To use it, you must declare whether the input is of type `QUERY` or of "
                        + "type `PASSAGE`."));
            }
            return MlTensors.local(contentType(r) == EmbeddingContentType.QUERY ? new float[] {1, 0} : new float[] {0, 1});
        };
        assertArrayEquals(new float[] {1, 0}, embed("m-asym", List.of("q"), Embedder.Purpose.QUERY).get(0), 0);
        assertEquals(2, client.requests.size());
        assertNull(contentType(client.requests.get(0)));
        assertEquals(EmbeddingContentType.QUERY, contentType(client.requests.get(1)));

        assertArrayEquals(new float[] {0, 1}, embed("m-asym", List.of("p"), Embedder.Purpose.PASSAGE).get(0), 0);
        assertEquals("the next call declares the content type at once", 3, client.requests.size());
        assertEquals(EmbeddingContentType.PASSAGE, contentType(client.requests.get(2)));
    }

    @Test
    public void testEmbed_failuresNameTheModelId() {
        client.model = r -> switch (r.getModelId()) {
            case "gone" -> new OpenSearchStatusException("Failed to find model", RestStatus.NOT_FOUND);
            case "idle" -> new IllegalArgumentException("Model not ready yet. Please deploy the model first.");
            default -> MlTensors.remote(new float[] {1, 0}, new float[] {0, 1});
        };
        OpenSearchStatusException unknown = embedFailing("gone");
        assertEquals(RestStatus.NOT_FOUND, unknown.status());
        assertTrue(unknown.getMessage(), unknown.getMessage().startsWith("[model_id] [gone] unknown model"));

        OpenSearchStatusException undeployed = embedFailing("idle");
        assertEquals(RestStatus.SERVICE_UNAVAILABLE, undeployed.status());
        assertTrue(undeployed.getMessage(), undeployed.getMessage().startsWith("[model_id] [idle] is not deployed in ml-commons"));

        OpenSearchStatusException wrong = embedFailing("two-vectors-for-one-text");
        assertEquals(RestStatus.BAD_REQUEST, wrong.status());
        assertTrue(wrong.getMessage(), wrong.getMessage().contains("answered 2 [sentence_embedding] tensors for 1 texts"));
    }

    @Test
    public void testEmbed_withoutMlCommons_saysItIsNotInstalled() {
        client.installed = false;
        OpenSearchStatusException e = embedFailing("m-1");
        assertEquals(RestStatus.BAD_REQUEST, e.status());
        assertTrue(e.getMessage(), e.getMessage().contains("[model_id] [m-1] needs the ml-commons plugin (opensearch-ml)"));
    }

    @Test
    public void testEmbed_noAnswer_timesOut() {
        client.model = r -> null;
        long start = System.nanoTime();
        OpenSearchStatusException e = failing(new MlCommonsEmbeddings(client, TimeValue.timeValueMillis(200)), "m-slow");
        assertEquals(RestStatus.GATEWAY_TIMEOUT, e.status());
        assertEquals("[model_id] [m-slow] ml-commons did not answer within [200ms] ([plugins.strata.inference.remote_timeout])", e.getMessage());
        assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(200));
    }

    @Test
    public void testEmbed_timeoutChanged_appliesToTheNextCall() {
        client.model = r -> null;
        java.util.concurrent.atomic.AtomicReference<TimeValue> setting = new java.util.concurrent.atomic.AtomicReference<>(
            TimeValue.timeValueMillis(150));
        MlCommonsEmbeddings dynamic = new MlCommonsEmbeddings(client, setting::get);
        OpenSearchStatusException first = failing(dynamic, "m-hung");
        assertTrue(first.getMessage(), first.getMessage().contains("did not answer within [150ms]"));
        setting.set(TimeValue.timeValueMillis(50));
        OpenSearchStatusException second = failing(dynamic, "m-hung");
        assertEquals(RestStatus.GATEWAY_TIMEOUT, second.status());
        assertTrue(second.getMessage(), second.getMessage().startsWith("[model_id] [m-hung] ml-commons did not answer within [50ms]"));
    }

    private static OpenSearchStatusException failing(MlCommonsEmbeddings embeddings, String modelId) {
        CompletableFuture<List<float[]>> result = new CompletableFuture<>();
        embeddings.embed(modelId, List.of("a"), Embedder.Purpose.PASSAGE,
            ActionListener.wrap(result::complete, result::completeExceptionally));
        ExecutionException e = assertThrows(ExecutionException.class, () -> result.get(10, TimeUnit.SECONDS));
        return (OpenSearchStatusException) e.getCause();
    }

    @Test
    public void testEmbed_noTexts_answersAtOnce() throws Exception {
        assertEquals(0, embed("m-1", List.of(), Embedder.Purpose.QUERY).size());
        assertEquals(0, client.requests.size());
    }

    @Test
    public void testDescribe_probesOnceAndCaches() throws Exception {
        client.model = r -> MlTensors.local(new float[] {0.1f, 0.2f, 0.3f});
        for (int i = 0; i < 2; i++) {
            CompletableFuture<ModelInfo> info = new CompletableFuture<>();
            embeddings.describe("m-3d", ActionListener.wrap(info::complete, info::completeExceptionally));
            ModelInfo m = info.get(10, TimeUnit.SECONDS);
            assertEquals(3, m.dimension());
            assertEquals("m-3d", m.name());
            assertEquals("m-3d", m.ref().modelId());
        }
        assertEquals(1, client.requests.size());
        assertSame(MlCommonsEmbeddings.PROBE_TEXT, ((TextDocsInputDataSet) client.requests.get(0).getMlInput().getInputDataset()).getDocs().get(0));
    }
}

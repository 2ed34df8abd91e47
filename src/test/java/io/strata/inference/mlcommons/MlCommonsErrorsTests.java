package io.strata.inference.mlcommons;

import org.opensearch.OpenSearchStatusException;
import org.opensearch.common.unit.TimeValue;
import org.opensearch.core.rest.RestStatus;
import org.opensearch.ml.common.exception.MLException;
import org.opensearch.ml.common.transport.prediction.MLPredictionTaskAction;
import org.opensearch.transport.ActionNotFoundTransportException;
import org.opensearch.transport.RemoteTransportException;
import org.junit.Test;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;

/** ml-commons 3.4's messages (see {@link MlCommonsErrors}) become one clear error each, naming the model id. */
public class MlCommonsErrorsTests {

    private static void assertError(Exception cause, RestStatus status, String... fragments) {
        OpenSearchStatusException e = MlCommonsErrors.translate("abc123", cause);
        assertEquals(e.getMessage(), status, e.status());
        assertTrue(e.getMessage(), e.getMessage().startsWith("[model_id] [abc123] "));
        for (String f : fragments) {
            assertTrue("expected [" + f + "] in " + e.getMessage(), e.getMessage().contains(f));
        }
    }

    @Test
    public void testTranslate_unknownModel_is404() {
        assertError(new OpenSearchStatusException("Failed to find model", RestStatus.NOT_FOUND), RestStatus.NOT_FOUND,
            "unknown model: ml-commons has no model with this id (Failed to find model)");
        // from another node, wrapped by the transport layer
        assertError(new RemoteTransportException("[node-1][127.0.0.1:9800][cluster:admin/opensearch/ml/predict]",
            new OpenSearchStatusException("Failed to find model", RestStatus.NOT_FOUND)), RestStatus.NOT_FOUND, "unknown model");
    }

    @Test
    public void testTranslate_undeployedModel_is503WithTheDeployCall() {
        assertError(new IllegalArgumentException("Model not ready yet. Please deploy the model first."), RestStatus.SERVICE_UNAVAILABLE,
            "is not deployed in ml-commons: deploy it with POST _plugins/_ml/models/abc123/_deploy",
            "(Model not ready yet. Please deploy the model first.)");
        assertError(new IllegalArgumentException("Auto deployment disabled for this model, please deploy model first"),
            RestStatus.SERVICE_UNAVAILABLE, "is not deployed");
    }

    @Test
    public void testTranslate_noPredictAction_saysMlCommonsIsNotInstalled() {
        // the node client's message (ActionType has no toString)
        assertError(new IllegalStateException("failed to find action [" + MLPredictionTaskAction.INSTANCE + "] to execute"),
            RestStatus.BAD_REQUEST, "needs the ml-commons plugin (opensearch-ml), which is not installed");
        assertError(new ActionNotFoundTransportException("cluster:admin/opensearch/ml/predict"), RestStatus.BAD_REQUEST,
            "not installed");
    }

    @Test
    public void testTranslate_otherFailures_keepTheirStatusAndMessage() {
        assertError(new OpenSearchStatusException("Request is throttled.", RestStatus.TOO_MANY_REQUESTS), RestStatus.TOO_MANY_REQUESTS,
            "ml-commons prediction failed: Request is throttled.");
        assertError(new MLException("Failed to inference TEXT_EMBEDDING model: abc123", new RuntimeException("ORT session closed")),
            RestStatus.INTERNAL_SERVER_ERROR, "Failed to inference TEXT_EMBEDDING model: abc123: ORT session closed");
    }

    @Test
    public void testTranslate_ownErrorsPassThrough() {
        OpenSearchStatusException own = MlCommonsErrors.timeout("abc123", TimeValue.timeValueSeconds(30));
        assertSame(own, MlCommonsErrors.translate("abc123", own));
        assertEquals("[model_id] [abc123] ml-commons did not answer within [30s] ([plugins.strata.inference.remote_timeout])",
            own.getMessage());
        assertEquals(RestStatus.GATEWAY_TIMEOUT, own.status());
    }

    @Test
    public void testContentTypeHint_readsMlCommonsAsymmetricModelMessages() {
        assertEquals(Boolean.TRUE, MlCommonsErrors.contentTypeHint(new MLException("Failed to inference TEXT_EMBEDDING model: x",
            new IllegalArgumentException("The embedding model chosen is asymmetric. To use it, you must declare whether the input is of "
                + "type `QUERY` or of type `PASSAGE`."))));
        assertEquals(Boolean.FALSE, MlCommonsErrors.contentTypeHint(new MLException("Failed to inference TEXT_EMBEDDING model: x",
            new IllegalArgumentException("When passing AsymmetricTextEmbeddingParameters, the model requires to be registered with at "
                + "least one of `query_prefix` or `passage_prefix`."))));
        assertNull(MlCommonsErrors.contentTypeHint(new IllegalArgumentException("Model not ready yet. Please deploy the model first.")));
    }
}

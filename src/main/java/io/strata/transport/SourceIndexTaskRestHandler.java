package io.strata.transport;

import org.opensearch.action.ActionType;
import org.opensearch.core.rest.RestStatus;
import org.opensearch.core.xcontent.XContentBuilder;
import org.opensearch.rest.BaseRestHandler;
import org.opensearch.rest.BytesRestResponse;
import org.opensearch.rest.RestRequest;
import org.opensearch.rest.action.RestStatusToXContentListener;
import org.opensearch.tasks.LoggingTaskListener;
import org.opensearch.tasks.Task;
import org.opensearch.transport.client.node.NodeClient;

/**
 * A REST handler that runs a {@link SourceIndexTaskRequest}: by default the caller waits for the report; with
 * {@code wait_for_completion=false} the answer is {@code {"task": "<node>:<id>"}} at once, as {@code _reindex} does, and
 * the report is stored in {@code .tasks}. Either way the run is the same, in the caller's thread context.
 */
public abstract class SourceIndexTaskRestHandler extends BaseRestHandler {
    protected static RestChannelConsumer runTask(RestRequest rest, NodeClient client, ActionType<RenderedResponse> action,
                                                 SourceIndexTaskRequest request) {
        if (waitForCompletion(rest)) {
            return channel -> client.execute(action, request, new RestStatusToXContentListener<>(channel));
        }
        request.setShouldStoreResult(true);
        return channel -> {
            Task task = client.executeLocally(action, request, LoggingTaskListener.instance());
            XContentBuilder body = channel.newBuilder().startObject().field("task", client.getLocalNodeId() + ":" + task.getId())
                .endObject();
            channel.sendResponse(new BytesRestResponse(RestStatus.OK, body));
        };
    }

    /** {@code wait_for_completion}: {@code true} (absent or empty) or {@code false}; anything else is a 400 naming it. */
    private static boolean waitForCompletion(RestRequest rest) {
        String value = rest.param("wait_for_completion");
        if (value == null || value.isEmpty() || value.equals("true")) { // empty: as OpenSearch reads a flag
            return true;
        }
        if (value.equals("false")) {
            return false;
        }
        String endpoint = rest.path().substring(rest.path().lastIndexOf('/') + 1);
        throw new IllegalArgumentException(String.format(java.util.Locale.ROOT,
            "[%s] [wait_for_completion] must be true or false, got [%s]", endpoint, value));
    }
}

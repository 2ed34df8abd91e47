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
        if (rest.paramAsBoolean("wait_for_completion", true)) {
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
}

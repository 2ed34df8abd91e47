package io.strata.compare;

import io.strata.transport.RestBodies;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.opensearch.common.settings.ClusterSettings;
import org.opensearch.common.util.concurrent.AbstractRunnable;
import org.opensearch.core.common.bytes.BytesReference;
import org.opensearch.core.xcontent.MediaType;
import org.opensearch.rest.BaseRestHandler;
import org.opensearch.rest.BytesRestResponse;
import org.opensearch.rest.RestRequest;
import org.opensearch.rest.action.RestStatusToXContentListener;
import org.opensearch.threadpool.ThreadPool;
import org.opensearch.transport.client.node.NodeClient;

import java.io.IOException;
import java.util.List;

/**
 * {@code POST _plugins/_strata/_compare}: the REST face of {@link CompareAction} ({@value CompareAction#NAME}); see
 * {@link TransportCompareAction}. The body is parsed on a generic thread (up to
 * {@code plugins.strata.compare.max_questions} questions), and the action runs in the caller's thread context.
 */
public final class RestCompareAction extends BaseRestHandler {
    public static final String PATH = "/_plugins/_strata/_compare";
    private static final Logger LOGGER = LogManager.getLogger(RestCompareAction.class);
    private final ClusterSettings settings;

    public RestCompareAction(ClusterSettings settings) {
        this.settings = settings;
    }

    @Override
    public String getName() {
        return "strata_compare_action";
    }

    @Override
    public List<Route> routes() {
        return List.of(new Route(RestRequest.Method.POST, PATH));
    }

    @Override
    protected RestChannelConsumer prepareRequest(RestRequest request, NodeClient client) {
        BytesReference content = RestBodies.content(request, CompareRequest.USAGE);
        MediaType mediaType = request.getMediaType();
        return channel -> client.threadPool().executor(ThreadPool.Names.GENERIC).execute(new AbstractRunnable() {
            @Override
            protected void doRun() {
                CompareRequest compare = CompareRequest.parse(RestBodies.map(content, mediaType, CompareRequest.USAGE),
                    () -> settings.get(CompareLimits.MAX_QUESTIONS));
                client.execute(CompareAction.INSTANCE, compare, new RestStatusToXContentListener<>(channel));
            }

            @Override
            public void onFailure(Exception e) {
                try {
                    channel.sendResponse(new BytesRestResponse(channel, e));
                } catch (IOException inner) {
                    e.addSuppressed(inner);
                    LOGGER.warn("[_compare] could not send the error response", e);
                }
            }
        });
    }
}

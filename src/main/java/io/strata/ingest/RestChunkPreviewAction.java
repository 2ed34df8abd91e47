package io.strata.ingest;

import io.strata.transport.RestBodies;
import org.opensearch.rest.BaseRestHandler;
import org.opensearch.rest.RestRequest;
import org.opensearch.rest.action.RestStatusToXContentListener;
import org.opensearch.transport.client.node.NodeClient;

import java.io.IOException;
import java.util.List;

/**
 * {@code POST _plugins/_strata/_chunk}: the REST face of {@link ChunkPreviewAction} ({@value ChunkPreviewAction#NAME}); see
 * {@link TransportChunkPreviewAction} for the request and what it answers.
 */
public final class RestChunkPreviewAction extends BaseRestHandler {
    public static final String PATH = "/_plugins/_strata/_chunk";

    @Override
    public String getName() {
        return "strata_chunk_preview_action";
    }

    @Override
    public List<Route> routes() {
        return List.of(new Route(RestRequest.Method.POST, PATH));
    }

    @Override
    protected RestChannelConsumer prepareRequest(RestRequest request, NodeClient client) throws IOException {
        // parsed by the action on its pool: the body may hold a million characters
        ChunkPreviewRequest preview = new ChunkPreviewRequest(RestBodies.content(request, ChunkPreviewRequest.USAGE),
            request.getMediaType());
        return channel -> client.execute(ChunkPreviewAction.INSTANCE, preview, new RestStatusToXContentListener<>(channel));
    }
}

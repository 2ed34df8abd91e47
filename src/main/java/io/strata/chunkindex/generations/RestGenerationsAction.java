package io.strata.chunkindex.generations;

import org.opensearch.rest.BaseRestHandler;
import org.opensearch.rest.RestRequest;
import org.opensearch.rest.action.RestStatusToXContentListener;
import org.opensearch.transport.client.node.NodeClient;

import java.util.List;

/** {@code GET _plugins/_strata/generations?index=<source index>}: the generations of its chunk indices ({@link GenerationsAction}). */
public final class RestGenerationsAction extends BaseRestHandler {
    public static final String PATH = "/_plugins/_strata/generations";

    @Override
    public String getName() {
        return "strata_generations_action";
    }

    @Override
    public List<Route> routes() {
        return List.of(new Route(RestRequest.Method.GET, PATH));
    }

    @Override
    protected RestChannelConsumer prepareRequest(RestRequest request, NodeClient client) {
        String index = request.param("index");
        if (index == null || index.isBlank()) {
            throw new IllegalArgumentException("[generations] needs [index]: the source index, e.g. "
                + "GET _plugins/_strata/generations?index=books");
        }
        GenerationsAction.Request list = new GenerationsAction.Request(index);
        return channel -> client.execute(GenerationsAction.INSTANCE, list, new RestStatusToXContentListener<>(channel));
    }
}

package io.strata.chunkindex.generations;

import org.opensearch.rest.BaseRestHandler;
import org.opensearch.rest.RestRequest;
import org.opensearch.rest.action.RestStatusToXContentListener;
import org.opensearch.transport.client.node.NodeClient;

import java.util.List;

/**
 * {@code POST _plugins/_strata/_swap?index=<source>&generation=<k or index>[&pipeline=<id>]} serves generation {@code k} of
 * the source's chunk index under the chunk index's name; {@code POST _plugins/_strata/_rollback?index=<source>} serves the
 * one served before it again ({@link GenerationSwap}).
 */
public final class RestSwapAction extends BaseRestHandler {
    public static final String SWAP = "/_plugins/_strata/_swap";
    public static final String ROLLBACK = "/_plugins/_strata/_rollback";

    @Override
    public String getName() {
        return "strata_swap_action";
    }

    @Override
    public List<Route> routes() {
        return List.of(new Route(RestRequest.Method.POST, SWAP), new Route(RestRequest.Method.POST, ROLLBACK));
    }

    @Override
    protected RestChannelConsumer prepareRequest(RestRequest request, NodeClient client) {
        boolean rollback = request.path().endsWith("_rollback");
        String action = rollback ? "_rollback" : "_swap";
        String index = request.param("index");
        if (index == null || index.isBlank()) {
            throw new IllegalArgumentException("[" + action + "] needs [index]: the source index whose chunk index to serve from "
                + "another generation, e.g. POST _plugins/_strata/" + action + "?index=books" + (rollback ? "" : "&generation=2"));
        }
        String generation = rollback ? null : request.param("generation");
        if (!rollback && (generation == null || generation.isBlank())) {
            throw new IllegalArgumentException("[_swap] needs [generation]: the generation number (or index name) to serve, as GET "
                + "_plugins/_strata/generations?index=" + index + " lists them, e.g. POST _plugins/_strata/_swap?index=" + index
                + "&generation=2");
        }
        String pipeline = request.param("pipeline");
        SwapRequest swap = new SwapRequest(action, index, generation, pipeline == null || pipeline.isBlank() ? null : pipeline);
        return channel -> client.execute(rollback ? SwapAction.ROLLBACK : SwapAction.SWAP, swap, new RestStatusToXContentListener<>(channel));
    }
}

package io.strata.chunkindex.generations;

import io.strata.transport.SourceIndexTaskRestHandler;
import org.opensearch.rest.RestRequest;
import org.opensearch.transport.client.node.NodeClient;

import java.util.List;
import java.util.Locale;

/**
 * {@code POST _plugins/_strata/_rebuild?index=<source index>[&pipeline=<id>][&requests_per_second=<n>][&wait_for_completion=false]}:
 * builds every document's chunks under the pipeline's current config into the next generation of its chunk index
 * ({@link GenerationBuilder}). {@code wait_for_completion=false} answers {@code {"task": "<node>:<id>"}} at once, as
 * {@code _reindex} does; {@code GET _tasks/<id>} shows the progress, {@code POST _tasks/<id>/_cancel} stops it and deletes
 * the unfinished generation.
 */
public final class RestRebuildAction extends SourceIndexTaskRestHandler {
    public static final String PATH = "/_plugins/_strata/_rebuild";

    @Override
    public String getName() {
        return "strata_rebuild_action";
    }

    @Override
    public List<Route> routes() {
        return List.of(new Route(RestRequest.Method.POST, PATH));
    }

    @Override
    protected RestChannelConsumer prepareRequest(RestRequest request, NodeClient client) {
        String index = request.param("index");
        if (index == null || index.isBlank()) {
            throw new IllegalArgumentException("[_rebuild] needs [index]: the source index whose chunks to build, e.g. "
                + "POST _plugins/_strata/_rebuild?index=books");
        }
        String pipeline = request.param("pipeline");
        float rps = requestsPerSecond(request.param("requests_per_second"));
        RebuildRequest rebuild = new RebuildRequest(index, pipeline == null || pipeline.isBlank() ? null : pipeline, rps);
        return runTask(request, client, RebuildAction.INSTANCE, rebuild);
    }

    /** As {@code _reindex}: absent or {@code -1} is no limit, otherwise a positive number. */
    static float requestsPerSecond(String value) {
        if (value == null || value.equals("-1")) {
            return Float.POSITIVE_INFINITY;
        }
        try {
            float rps = Float.parseFloat(value);
            if (rps > 0 && Float.isFinite(rps)) {
                return rps;
            }
        } catch (NumberFormatException e) {
            // the message below
        }
        throw new IllegalArgumentException(String.format(Locale.ROOT,
            "[_rebuild] [requests_per_second] must be a positive number of source documents a second, or -1 for no limit; got [%s]",
            value));
    }
}

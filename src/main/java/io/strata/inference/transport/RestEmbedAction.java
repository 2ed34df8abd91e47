package io.strata.inference.transport;

import io.strata.model.ModelRef;
import io.strata.chunking.ConfigMap;
import io.strata.chunking.Embedder;
import io.strata.transport.RestBodies;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.opensearch.common.util.concurrent.AbstractRunnable;
import org.opensearch.core.common.bytes.BytesReference;
import org.opensearch.core.xcontent.MediaType;
import org.opensearch.rest.BytesRestResponse;
import org.opensearch.threadpool.ThreadPool;
import org.opensearch.rest.BaseRestHandler;
import org.opensearch.rest.RestRequest;
import org.opensearch.rest.action.RestToXContentListener;
import org.opensearch.transport.client.node.NodeClient;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * {@code POST _plugins/_strata/_embed}:
 * <pre>
 * {"texts": ["..."], "purpose": "query|passage", "model": "e5-small-v2-q" | "model_id": "&lt;ml-commons id&gt;"}
 * → {"model": "e5-small-v2-q" | "model_id": "...", "dimension": 384, "vectors": [[...]]}
 * </pre>
 * {@code purpose} defaults to {@code passage}; neither {@code model} nor {@code model_id} means the node's default model.
 */
public final class RestEmbedAction extends BaseRestHandler {
    public static final String PATH = "/_plugins/_strata/_embed";
    private static final Set<String> KEYS = new TreeSet<>(Set.of("texts", "purpose", "model", "model_id"));
    private static final String USAGE = "[_embed] needs a body: {\"texts\": [...], \"purpose\": \"query|passage\", \"model\" | \"model_id\": ...}";
    private static final Logger LOGGER = LogManager.getLogger(RestEmbedAction.class);

    @Override
    public String getName() {
        return "strata_embed_action";
    }

    @Override
    public List<Route> routes() {
        return List.of(new Route(RestRequest.Method.POST, PATH));
    }

    @Override
    protected RestChannelConsumer prepareRequest(RestRequest request, NodeClient client) {
        // parsed on a generic thread, not this network thread: up to 1,000 texts of any length
        BytesReference content = RestBodies.content(request, USAGE);
        MediaType mediaType = request.getMediaType();
        return channel -> client.threadPool().executor(ThreadPool.Names.GENERIC).execute(new AbstractRunnable() {
            @Override
            protected void doRun() {
                EmbedRequest embed = parse(RestBodies.map(content, mediaType, USAGE));
                client.execute(EmbedAction.INSTANCE, embed, new RestToXContentListener<>(channel));
            }

            @Override
            public void onFailure(Exception e) {
                try {
                    channel.sendResponse(new BytesRestResponse(channel, e));
                } catch (IOException inner) {
                    e.addSuppressed(inner);
                    LOGGER.warn("[_embed] could not send the error response", e);
                }
            }
        });
    }

    static EmbedRequest parse(Map<String, Object> body) {
        ConfigMap config = new ConfigMap("_embed", "", body).expect(KEYS);
        config.rejectUnknown();
        List<String> texts = config.stringList("texts", true, false, "a non-empty list of strings");
        if (texts == null) {
            throw config.error("texts", "must be a non-empty list of strings, got nothing");
        }
        Embedder.Purpose purpose = config.enumValue("purpose", List.of("query", "passage"), "passage").equals("query")
            ? Embedder.Purpose.QUERY : Embedder.Purpose.PASSAGE;
        return new EmbedRequest(ModelRef.parse("[_embed]", body), purpose, texts);
    }
}

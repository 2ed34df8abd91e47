package io.strata.inference.transport;

import io.strata.model.ModelRef;
import io.strata.chunking.Embedder;
import org.opensearch.core.xcontent.XContentParser;
import org.opensearch.rest.BaseRestHandler;
import org.opensearch.rest.RestRequest;
import org.opensearch.rest.action.RestToXContentListener;
import org.opensearch.transport.client.node.NodeClient;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
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

    @Override
    public String getName() {
        return "strata_embed_action";
    }

    @Override
    public List<Route> routes() {
        return List.of(new Route(RestRequest.Method.POST, PATH));
    }

    @Override
    protected RestChannelConsumer prepareRequest(RestRequest request, NodeClient client) throws IOException {
        if (!request.hasContent()) {
            throw new IllegalArgumentException("[_embed] needs a body: {\"texts\": [...], \"purpose\": \"query|passage\", \"model\" | \"model_id\": ...}");
        }
        Map<String, Object> body;
        try (XContentParser parser = request.contentParser()) {
            body = new HashMap<>(parser.map());
        }
        EmbedRequest embed = parse(body);
        return channel -> client.execute(EmbedAction.INSTANCE, embed, new RestToXContentListener<>(channel));
    }

    static EmbedRequest parse(Map<String, Object> body) {
        for (String key : body.keySet()) {
            if (!KEYS.contains(key)) {
                throw new IllegalArgumentException(String.format(Locale.ROOT, "[_embed] unknown field [%s]; supported: %s", key, KEYS));
            }
        }
        Object texts = body.remove("texts");
        if (!(texts instanceof List<?> list) || list.isEmpty()) {
            throw new IllegalArgumentException("[_embed] [texts] must be a non-empty list of strings, got [" + texts + "]");
        }
        List<String> strings = new ArrayList<>(list.size());
        for (Object t : list) {
            if (!(t instanceof String s)) {
                throw new IllegalArgumentException("[_embed] [texts] must contain strings only, got [" + t + "]");
            }
            strings.add(s);
        }
        Object purpose = body.remove("purpose");
        Embedder.Purpose p;
        if (purpose == null) {
            p = Embedder.Purpose.PASSAGE;
        } else if ("query".equals(purpose)) {
            p = Embedder.Purpose.QUERY;
        } else if ("passage".equals(purpose)) {
            p = Embedder.Purpose.PASSAGE;
        } else {
            throw new IllegalArgumentException("[_embed] [purpose] must be one of [query, passage], got [" + purpose + "]");
        }
        ModelRef ref = ModelRef.parse("[_embed]", body);
        return new EmbedRequest(ref, p, strings);
    }
}

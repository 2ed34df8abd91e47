package io.strata.ingest;

import io.strata.model.ModelRef;
import io.strata.chunking.Chunk;
import io.strata.chunking.ChunkedParent;
import io.strata.chunking.ConfigMap;
import io.strata.chunking.ConfigException;
import io.strata.chunking.MultiGranularChunker;
import io.strata.chunking.Segmentation;
import io.strata.chunking.TextIndex;
import io.strata.inference.Chunkers;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.rest.RestStatus;
import org.opensearch.core.xcontent.XContentBuilder;
import org.opensearch.core.xcontent.XContentParser;
import org.opensearch.rest.BaseRestHandler;
import org.opensearch.rest.BytesRestResponse;
import org.opensearch.rest.RestChannel;
import org.opensearch.rest.RestRequest;
import org.opensearch.transport.client.node.NodeClient;

import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;

/**
 * {@code POST _plugins/_strata/_chunk}: cuts a text the way a {@code multi_granular_chunking} processor with the same
 * {@code strategy} and {@code granularities} would, and answers with the parents, their children and the boundary
 * evidence (EOS probabilities, similarities, perplexities, margins) so users can tune θ and thresholds without indexing.
 * Nothing is written. Model-guided strategies run on the inference pool of the node that receives the request.
 * <pre>
 * {"text": "...", "strategy": {"type": "semantic", "max_words": 300}, "granularities": [0.5, 0.25],
 *  "model" | "model_id": the embedding model of embedding-based strategies (default: the node's default model)}
 * </pre>
 */
public final class RestChunkPreviewAction extends BaseRestHandler {
    public static final String PATH = "/_plugins/_strata/_chunk";
    /** Previews answer with every chunk's text: bound the response, not only the work. */
    static final int MAX_CHARS = 1_000_000;
    private static final Set<String> KEYS = new TreeSet<>(Set.of("text", "strategy", "granularities", "model", "model_id"));

    private final Supplier<Chunkers> chunkers;

    public RestChunkPreviewAction(Supplier<Chunkers> chunkers) {
        this.chunkers = chunkers;
    }

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
        if (!request.hasContent()) {
            throw new IllegalArgumentException("[_chunk] needs a body: {\"text\": \"...\", \"strategy\": {\"type\": ...}, \"granularities\": [...]}");
        }
        Map<String, Object> body;
        try (XContentParser parser = request.contentParser()) {
            body = new HashMap<>(parser.map());
        }
        Chunkers chunkers = this.chunkers.get();
        String text;
        MultiGranularChunker chunker;
        try {
            ConfigMap config = new ConfigMap("_chunk", "", body).expect(KEYS);
            config.rejectUnknown();
            text = config.stringValue("text", null);
            if (text == null) {
                throw config.error("text", "must be a non-empty string, got nothing");
            }
            if (text.length() > MAX_CHARS) {
                throw config.error("text", String.format(Locale.ROOT, "has %d characters, more than the preview limit of %d",
                    text.length(), MAX_CHARS));
            }
            ModelRef model = ModelRef.parse("[_chunk]", body);
            if (model != null) {
                chunkers.inference().validate("[_chunk]", model);
            }
            chunker = chunkers.parse(body, model);
        } catch (ConfigException e) {
            throw new IllegalArgumentException(e.getMessage().startsWith("[_chunk]") ? e.getMessage() : "[_chunk] " + e.getMessage(), e);
        }
        String s = text;
        return channel -> {
            long start = System.nanoTime();
            ActionListener<MultiGranularChunker.Result> respond = ActionListener.wrap(
                result -> channel.sendResponse(new BytesRestResponse(RestStatus.OK,
                    toXContent(channel, chunker, result, (System.nanoTime() - start) / 1_000_000))),
                e -> {
                    try {
                        channel.sendResponse(new BytesRestResponse(channel, e));
                    } catch (IOException io) {
                        e.addSuppressed(io);
                        channel.sendResponse(new BytesRestResponse(RestStatus.INTERNAL_SERVER_ERROR, e.toString()));
                    }
                });
            Chunkers.run(chunkers.inference(), chunker, c -> c.chunkWithEvidence(s), respond);
        };
    }

    private static XContentBuilder toXContent(RestChannel channel, MultiGranularChunker chunker, MultiGranularChunker.Result result,
                                              long tookMs) throws IOException {
        XContentBuilder b = channel.newBuilder();
        b.startObject();
        b.field("took_ms", tookMs);
        b.field("strategy", chunker.strategy().label());
        b.field("max_words", chunker.strategy().maxWords());
        b.field("granularities", chunker.granularities());
        b.startArray("parents");
        for (ChunkedParent p : result.parents()) {
            b.startObject();
            chunk(b, p.parent(), result.index());
            b.startArray("children");
            for (Chunk c : p.children()) {
                b.startObject();
                b.field("level", c.level());
                chunk(b, c, result.index());
                b.endObject();
            }
            b.endArray();
            b.endObject();
        }
        b.endArray();
        b.startArray("evidence");
        for (Segmentation.Evidence e : result.evidence()) {
            b.startObject();
            b.field("signal", e.signal());
            if (!Double.isNaN(e.threshold())) {
                b.field("threshold", e.threshold());
            }
            b.field("positions", e.positions());
            b.field("values", e.values());
            b.endObject();
        }
        b.endArray();
        b.endObject();
        return b;
    }

    private static void chunk(XContentBuilder b, Chunk c, TextIndex index) throws IOException {
        b.field("ordinal", c.ordinal());
        b.field("start", c.start());
        b.field("end", c.end());
        b.field("words", index.words(c.span()));
        b.field("text", c.text());
    }
}

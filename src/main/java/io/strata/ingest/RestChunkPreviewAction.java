package io.strata.ingest;

import io.strata.model.ModelRef;
import io.strata.chunking.Chunk;
import io.strata.chunking.ChunkedParent;
import io.strata.chunking.ChunkingConfig;
import io.strata.chunking.ConfigException;
import io.strata.chunking.MultiGranularChunker;
import io.strata.chunking.Segmentation;
import io.strata.chunking.SentenceSegmenter;
import io.strata.chunking.TextIndex;
import io.strata.inference.InferenceModels;
import io.strata.inference.InferenceService;
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

    private final Supplier<InferenceService> inference;
    private final SentenceSegmenter segmenter;

    public RestChunkPreviewAction(Supplier<InferenceService> inference, SentenceSegmenter segmenter) {
        this.inference = inference;
        this.segmenter = segmenter;
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
        for (String key : body.keySet()) {
            if (!KEYS.contains(key)) {
                throw new IllegalArgumentException(String.format(Locale.ROOT, "[_chunk] unknown field [%s]; supported: %s", key, KEYS));
            }
        }
        Object text = body.remove("text");
        if (!(text instanceof String s) || s.isBlank()) {
            throw new IllegalArgumentException("[_chunk] [text] must be a non-empty string, got [" + text + "]");
        }
        if (s.length() > MAX_CHARS) {
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                "[_chunk] [text] has %d characters, more than the preview limit of %d", s.length(), MAX_CHARS));
        }
        InferenceService service = inference.get();
        ModelRef model = ModelRef.parse("[_chunk]", body);
        MultiGranularChunker chunker;
        try {
            if (model != null) {
                service.validate("[_chunk]", model);
            }
            var strategy = ChunkingConfig.removeStrategy(body, new InferenceModels(service, model));
            var granularities = ChunkingConfig.parseGranularities("granularities", body.remove("granularities"), strategy.maxWords());
            chunker = new MultiGranularChunker(strategy, granularities, segmenter);
        } catch (ConfigException e) {
            throw new IllegalArgumentException("[_chunk] " + e.getMessage(), e);
        }
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
            if (chunker.strategy().usesModels()) {
                service.run(() -> chunker.chunkWithEvidence(s), respond);
            } else {
                MultiGranularChunker.Result result;
                try {
                    result = chunker.chunkWithEvidence(s);
                } catch (Exception e) {
                    respond.onFailure(e);
                    return;
                }
                respond.onResponse(result);
            }
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

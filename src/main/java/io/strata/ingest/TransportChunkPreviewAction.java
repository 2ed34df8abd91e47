package io.strata.ingest;

import io.strata.chunking.Chunk;
import io.strata.chunking.ChunkContext;
import io.strata.chunking.ChunkedParent;
import io.strata.chunking.ConfigException;
import io.strata.chunking.ConfigMap;
import io.strata.chunking.DocumentFormat;
import io.strata.chunking.ModelTokens;
import io.strata.chunking.MultiGranularChunker;
import io.strata.chunking.ParentSize;
import io.strata.chunking.Section;
import io.strata.chunking.Segmentation;
import io.strata.chunking.TextIndex;
import io.strata.inference.Chunkers;
import io.strata.inference.InferenceExecutor;
import io.strata.model.ModelRef;
import io.strata.transport.RenderedResponse;
import org.opensearch.action.ActionRunnable;
import org.opensearch.action.support.ActionFilters;
import org.opensearch.action.support.HandledTransportAction;
import org.opensearch.common.inject.Inject;
import org.opensearch.common.xcontent.XContentFactory;
import org.opensearch.common.xcontent.support.XContentMapValues;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.common.bytes.BytesReference;
import org.opensearch.core.rest.RestStatus;
import org.opensearch.core.xcontent.XContentBuilder;
import org.opensearch.tasks.Task;
import org.opensearch.threadpool.ThreadPool;
import org.opensearch.transport.TransportService;

import java.io.IOException;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * {@code POST _plugins/_strata/_chunk}: cuts a text the way a {@code multi_granular_chunking} processor with the same
 * {@code strategy} and {@code granularities} would, and answers with the parents, their children and the boundary
 * evidence (EOS probabilities, similarities, perplexities, margins) so users can tune θ and thresholds without indexing.
 * Nothing is written. The work (parsing the body, cutting up to {@value #MAX_CHARS} characters — {@value #MAX_MODEL_CHARS}
 * with a model-guided strategy —, rendering every chunk)
 * runs on the node's {@code analyze} pool, as {@code _analyze} does, never on the transport or HTTP thread that receives
 * the request; model-guided strategies then run on the inference pool of that node.
 * <pre>
 * {"text": "...", "format": "text" | "markdown" | "html", "strategy": {"type": "semantic", "max_words": 300},
 *  "granularities": [0.5, 0.25],
 *  "model" | "model_id": the embedding model of embedding-based strategies (default: the node's default model),
 *  "context": {"fields": ["title"], "section": true}, "document": {"title": "..."}: the processor's contextual headers,
 *  with the other fields of the source document they read,
 *  "children": {"embedding": "separate" | "late", "keep_redundant": true}, "vectors": true, "query_text": "...", "compare_embedding": true:
 *  the chunks' vectors, scores and best chunks per child embedding mode ({@link PreviewEmbeddings})}
 * </pre>
 * With an embedded embedding model every chunk carries its {@code tokens} as embedded (the model's passage prefix, special
 * tokens and its context header included; {@code truncated: true} above the model's limit), and the answer its
 * {@code tokens}: {@code model}, {@code limit}, {@code limit_splits} (cuts made so no chunk exceeds the limit) and
 * {@code truncated} (embedded chunks still above it) and {@code max_parent_tokens}; a parent above the limit kept whole
 * ({@code parents: {"max_tokens": N}}, {@link ParentSize}) says {@code embedded: false}: it has no vector of its own. With {@code max_tokens} the answer says {@code max_tokens} instead of
 * {@code max_words}.
 * With {@code context} every chunk carries its {@code context_header}: what is embedded is that header, a blank line, then
 * the chunk's {@code text}.
 * With {@code format: markdown | html} every chunk also carries its {@code section}, {@code section_level} and, when it
 * merged sub-sections, {@code merged_sections}; a table piece that repeats its table's header has {@code header_start} and
 * {@code header_end}; for {@code html} the answer holds the extracted text the offsets index ({@code document_text}).
 */
public final class TransportChunkPreviewAction extends HandledTransportAction<ChunkPreviewRequest, RenderedResponse> {
    /** Previews answer with every chunk's text: bound the response, not only the work. */
    static final int MAX_CHARS = 1_000_000;
    /**
     * A model-guided strategy's evidence is a model call per sentence or window (~5 ms each on 2 cores with the bundled
     * model): its previews cut at most this many characters (~1,000 sentences, seconds), checked before the work.
     */
    static final int MAX_MODEL_CHARS = 100_000;
    private static final Set<String> KEYS = new TreeSet<>(Set.of("text", "format", "strategy", "granularities", "model",
        "model_id", ChunkContext.FIELD, "document", ParentSize.FIELD));

    static {
        KEYS.addAll(PreviewEmbeddings.KEYS);
    }

    /** Where previews run: text analysis for a user to look at, like {@code _analyze} (a small fixed pool with a queue). */
    static final String EXECUTOR = ThreadPool.Names.ANALYZE;

    private final Chunkers chunkers;
    private final ThreadPool threadPool;

    @Inject
    public TransportChunkPreviewAction(TransportService transportService, ActionFilters actionFilters, Chunkers chunkers,
                                       ThreadPool threadPool) {
        super(ChunkPreviewAction.NAME, transportService, actionFilters, ChunkPreviewRequest::new);
        this.chunkers = chunkers;
        this.threadPool = threadPool;
    }

    @Override
    protected void doExecute(Task task, ChunkPreviewRequest request, ActionListener<RenderedResponse> listener) {
        // a full queue answers 429 (the pool's rejection) through the listener
        threadPool.executor(EXECUTOR).execute(ActionRunnable.wrap(listener, l -> {
            try {
                preview(request, l);
            } catch (StackOverflowError e) {
                l.onFailure(InferenceExecutor.contained(e)); // a task boundary of Strata's: the request fails, not the node
            }
        }));
    }

    private void preview(ChunkPreviewRequest request, ActionListener<RenderedResponse> listener) {
        Map<String, Object> body;
        try {
            body = request.body();
        } catch (Exception e) {
            listener.onFailure(e);
            return;
        }
        String text;
        MultiGranularChunker chunker;
        ChunkContext.Headers headers;
        PreviewEmbeddings.Options embedding;
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
            Object document = config.remove("document");
            if (document != null && !(document instanceof Map<?, ?>)) {
                throw config.error("document", "must be an object: the source fields [context.fields] reads, got [" + document + "]");
            }
            MultiGranularChunker parsed = chunkers.parse(body, model);
            if (parsed.strategy().usesModels() && text.length() > MAX_MODEL_CHARS) {
                throw config.error("text", String.format(Locale.ROOT, "has %d characters, more than the preview limit of %d for a "
                    + "model-guided strategy ([%s]: a model call per sentence or window); preview a part of it, or index it "
                    + "through a pipeline", text.length(), MAX_MODEL_CHARS, parsed.strategy().label()));
            }
            ChunkContext context = ChunkContext.parse(body.remove(ChunkContext.FIELD), parsed.format(), true);
            headers = context == null ? null : headers(context, document);
            embedding = PreviewEmbeddings.parse(config, model, chunkers.inference());
            chunker = embedding.keepRedundant() ? parsed.keepingRedundantChildren() : parsed;
        } catch (ConfigException e) {
            listener.onFailure(new IllegalArgumentException(
                e.getMessage().startsWith("[_chunk]") ? e.getMessage() : "[_chunk] " + e.getMessage(), e));
            return;
        } catch (Exception e) {
            listener.onFailure(e);
            return;
        }
        long start = System.nanoTime();
        Chunkers.run(chunkers.inference(), chunker, c -> counted(c, c.chunkWithEvidence(text), headers),
            ActionListener.wrap(preview -> {
                if (!embedding.embeds()) {
                    listener.onResponse(rendered(chunker, preview, headers, start));
                    return;
                }
                PreviewEmbeddings.compute(embedding, preview.result().parents(), headers == null ? ChunkContext.Headers.NONE : headers,
                    chunkers.inference(), ActionListener.wrap(vectors -> listener.onResponse(rendered(chunker,
                        new Preview(preview.result(), preview.tokens(), embedding, vectors), headers, start)), listener::onFailure));
            }, listener::onFailure));
    }

    private static RenderedResponse rendered(MultiGranularChunker chunker, Preview preview, ChunkContext.Headers headers,
                                             long start) throws IOException {
        return new RenderedResponse(BytesReference.bytes(toXContent(chunker, preview, headers, (System.nanoTime() - start) / 1_000_000)),
            RestStatus.OK);
    }

    /**
     * A preview's chunks with each chunk's tokens as it is embedded (the model's passage prefix, special tokens and, with
     * {@code context}, its header included), in the order of {@link ChunkedParent#all()}; no counts when the model's tokenizer
     * is not known here (an ml-commons model); with {@code vectors}, {@code query_text} or {@code compare_embedding}, the
     * chunks' vectors ({@link PreviewEmbeddings}).
     */
    record Preview(MultiGranularChunker.Result result, int[][] tokens, PreviewEmbeddings.Options embedding,
                   PreviewEmbeddings.Vectors vectors) {
        Preview(MultiGranularChunker.Result result, int[][] tokens) {
            this(result, tokens, null, null);
        }
    }

    private static Preview counted(MultiGranularChunker chunker, MultiGranularChunker.Result result, ChunkContext.Headers headers) {
        ModelTokens tokens = chunker.tokens();
        if (tokens == null) {
            return new Preview(result, null);
        }
        int[][] counts = new int[result.parents().size()][];
        for (int p = 0; p < counts.length; p++) {
            List<Chunk> all = result.parents().get(p).all();
            counts[p] = new int[all.size()];
            for (int c = 0; c < all.size(); c++) {
                Chunk chunk = all.get(c);
                counts[p][c] = tokens.embedded(headers == null ? chunk.text() : ChunkContext.embedded(headers.of(chunk), chunk.text()));
            }
        }
        return new Preview(result, counts);
    }

    @SuppressWarnings("unchecked")
    private static ChunkContext.Headers headers(ChunkContext context, Object document) {
        Map<String, Object> source = document == null ? Map.of() : (Map<String, Object>) document;
        try {
            return context.headers(path -> XContentMapValues.extractValue(path, source));
        } catch (IllegalArgumentException e) {
            throw new ConfigException("document", e.getMessage());
        }
    }

    private static XContentBuilder toXContent(MultiGranularChunker chunker, Preview preview, ChunkContext.Headers headers,
                                              long tookMs) throws IOException {
        MultiGranularChunker.Result result = preview.result();
        int[][] tokens = preview.tokens();
        XContentBuilder b = XContentFactory.jsonBuilder();
        b.startObject();
        b.field("took_ms", tookMs);
        b.field("strategy", chunker.strategy().label());
        b.field(chunker.thetaInTokens() ? "max_tokens" : "max_words", chunker.strategy().maxWords());
        if (tokens != null) {
            int limit = chunker.tokens().limit();
            int truncated = 0;
            for (int p = 0; p < tokens.length; p++) {
                // a parent without a vector of its own is above the limit by design, not truncated
                for (int c = result.parents().get(p).parentEmbedded() ? 0 : 1; c < tokens[p].length; c++) {
                    truncated += tokens[p][c] > limit ? 1 : 0;
                }
            }
            // the limit as embedded (prefix and special tokens included); cuts made to stay within it; chunks still above it
            b.startObject("tokens").field("model", chunker.tokens().model()).field("limit", limit)
                .field("limit_splits", result.limitSplits()).field("truncated", truncated)
                .field("max_parent_tokens", chunker.parentSize().maxTokens()).endObject();
        }
        b.field("granularities", chunker.granularities());
        b.field("format", chunker.format().value());
        if (chunker.format() == DocumentFormat.HTML) {
            b.field("document_text", result.index().text());
        }
        PreviewEmbeddings.Vectors vectors = preview.vectors();
        if (vectors != null) {
            PreviewEmbeddings.renderSummary(b, preview.embedding(), vectors, result.parents());
        }
        b.startArray("parents");
        for (int i = 0; i < result.parents().size(); i++) {
            ChunkedParent p = result.parents().get(i);
            int limit = tokens == null ? 0 : chunker.tokens().limit();
            b.startObject();
            chunk(b, p.parent(), result.index(), headers);
            if (p.parentEmbedded()) {
                tokens(b, tokens, i, 0, limit);
            } else {
                // above the window, kept whole: no vector of its own, scored through its children
                b.field("tokens", tokens[i][0]);
                b.field("embedded", false);
            }
            if (vectors != null) {
                PreviewEmbeddings.renderChunk(b, preview.embedding(), vectors, i, 0);
                PreviewEmbeddings.renderBest(b, preview.embedding(), vectors, p, i);
            }
            b.startArray("children");
            for (int c = 0; c < p.children().size(); c++) {
                Chunk child = p.children().get(c);
                b.startObject();
                b.field("level", child.level());
                chunk(b, child, result.index(), headers);
                tokens(b, tokens, i, c + 1, limit);
                if (vectors != null) {
                    PreviewEmbeddings.renderChunk(b, preview.embedding(), vectors, i, c + 1);
                }
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

    private static void tokens(XContentBuilder b, int[][] tokens, int parent, int chunk, int limit) throws IOException {
        if (tokens != null) {
            b.field("tokens", tokens[parent][chunk]);
            if (tokens[parent][chunk] > limit) {
                b.field("truncated", true);
            }
        }
    }

    private static void chunk(XContentBuilder b, Chunk c, TextIndex index, ChunkContext.Headers headers) throws IOException {
        b.field("ordinal", c.ordinal());
        b.field("start", c.start());
        b.field("end", c.end());
        b.field("words", index.words(c.span()));
        b.field("text", c.text());
        if (headers != null) {
            b.field("context_header", headers.of(c)); // embedded: this, a blank line, then the text (no line when empty)
        }
        Section section = c.section();
        if (section != null) {
            b.field("section", section.path());
            b.field("section_level", section.level());
            if (!section.merged().isEmpty()) {
                b.field("merged_sections", section.merged());
            }
        }
        if (c.header() != null) {
            b.field("header_start", c.header().start());
            b.field("header_end", c.header().end());
        }
    }
}

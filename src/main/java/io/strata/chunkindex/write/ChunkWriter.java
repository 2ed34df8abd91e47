package io.strata.chunkindex.write;

import io.strata.chunkindex.ChunkDocuments;
import io.strata.chunkindex.SourceSummary;
import io.strata.chunkindex.VectorOptions;
import io.strata.chunkindex.setup.ChunkIndexSetup;
import io.strata.chunkindex.setup.WriteChecks;
import io.strata.chunkindex.store.ChunkCommit;
import io.strata.chunkindex.store.ChunkStore;
import io.strata.chunkindex.store.Slicing;
import io.strata.chunking.ChildEmbedding;
import io.strata.chunking.ChunkContext;
import io.strata.chunking.ChunkedParent;
import io.strata.chunking.Embedder;
import io.strata.chunking.MultiGranularChunker;
import io.strata.inference.Chunkers;
import io.strata.inference.InferenceService;
import io.strata.model.ModelInfo;
import io.strata.model.ModelRef;
import io.strata.stats.StrataStats;
import org.opensearch.action.support.ContextPreservingActionListener;
import org.opensearch.common.util.concurrent.ThreadContext;
import org.opensearch.common.xcontent.support.XContentMapValues;
import org.opensearch.core.action.ActionListener;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * One chunking configuration (a {@code multi_granular_chunking} processor's): cuts a source text into parents and children
 * and embeds them (reusing stored vectors whose hash is unchanged) into {@link PreparedChunks}, which {@link ChunkCommit}
 * writes after the source write. The one preparer behind the ingest processor, the bulk filter's re-chunking of updated
 * documents and {@code _reconcile}, so all of them write exactly the same chunks for the same text.
 *
 * <p>Every call runs in the caller's thread context, and so with the caller's permissions: listeners coming back from the
 * inference layer are restored to it before the chunk index is touched.
 */
public final class ChunkWriter {
    /** In {@code target_index}: the concrete index a document is written to. */
    public static final String INDEX_PLACEHOLDER = "{{_index}}";

    /** The node components every writer uses, and how large documents are sliced. */
    public record Services(ChunkStore store, ChunkIndexSetup setup, InferenceService inference, ThreadContext threadContext,
                           StrataStats stats, Slicing slicing) {}

    private final String field;
    private final String targetIndex;
    private final MultiGranularChunker chunker;
    private final List<String> copyFields;
    /** The model that embeds every chunk; null when the pipeline writes no vectors. */
    private final ModelRef model;
    /** How children are embedded: one pass each, or pooled from their parent's pass (late chunking). */
    private final ChildEmbedding childEmbedding;
    /** The contextual headers of every chunk; null: none. */
    private final ChunkContext context;
    private final Services services;
    /** The identity of this writer's cutting and embedding config ({@link SourceSummary#CONFIG}); null when not known (tests). */
    private final String configHash;
    /** How the chunk index it creates indexes the vectors (the processor's {@code vectors}). */
    private final VectorOptions vectors;

    /** What a chunk document takes from its source besides the text: {@code copy_fields} and the context headers. */
    public record SourceFields(Map<String, Object> copied, ChunkContext.Headers headers) {
        public SourceFields {
            headers = headers == null ? ChunkContext.Headers.NONE : headers;
        }
    }

    public ChunkWriter(String field, String targetIndex, MultiGranularChunker chunker, List<String> copyFields, ModelRef model,
                       Services services) {
        this(field, targetIndex, chunker, copyFields, model, ChildEmbedding.SEPARATE, services);
    }

    public ChunkWriter(String field, String targetIndex, MultiGranularChunker chunker, List<String> copyFields, ModelRef model,
                       ChildEmbedding childEmbedding, Services services) {
        this(field, targetIndex, chunker, copyFields, model, childEmbedding, null, services);
    }

    public ChunkWriter(String field, String targetIndex, MultiGranularChunker chunker, List<String> copyFields, ModelRef model,
                       ChildEmbedding childEmbedding, ChunkContext context, Services services) {
        this(field, targetIndex, chunker, copyFields, model, childEmbedding, context, VectorOptions.DEFAULT, services, null);
    }

    public ChunkWriter(String field, String targetIndex, MultiGranularChunker chunker, List<String> copyFields, ModelRef model,
                       ChildEmbedding childEmbedding, ChunkContext context, VectorOptions vectors, Services services,
                       String configHash) {
        this.configHash = configHash;
        this.vectors = vectors;
        this.childEmbedding = childEmbedding;
        this.context = context;
        this.field = field;
        this.targetIndex = targetIndex;
        this.chunker = chunker;
        this.copyFields = List.copyOf(copyFields);
        this.model = model;
        this.services = services;
    }

    /** The source fields the chunk index serves for this writer: the chunked text and the copied fields. */
    public ChunkIndexSetup.Fields indexFields() {
        return new ChunkIndexSetup.Fields(field, copyFields, vectors);
    }

    /** The source fields copied into every chunk document ({@code copy_fields}), as configured. */
    public List<String> copyFields() {
        return copyFields;
    }

    /** The source field holding the text (a path: {@code doc.body} reads an object's field or a dotted key). */
    public String field() {
        return field;
    }

    /** {@code target_index} as configured, perhaps with {@value #INDEX_PLACEHOLDER}. */
    public String targetTemplate() {
        return targetIndex;
    }

    /** The chunk index of documents written to concrete index {@code sourceIndex}. */
    public String targetFor(String sourceIndex) {
        return targetIndex.replace(INDEX_PLACEHOLDER, sourceIndex);
    }

    /**
     * The hash of this writer's cutting and embedding config (the summary's {@value SourceSummary#CONFIG}), or null when not known: what
     * tells documents chunked under another config ({@code config_drift}).
     */
    public String configHash() {
        return configHash;
    }

    /**
     * Whether a document with {@code summary} was chunked under another config than this writer's: the summary records
     * another config hash, or none (chunked before configs were recorded, so under an unknown one).
     */
    public boolean configDrifted(Map<?, ?> summary) {
        return configHash != null && summary != null && !configHash.equals(summary.get(SourceSummary.CONFIG));
    }

    public MultiGranularChunker chunker() {
        return chunker;
    }

    /** The embedding model, or null when no vectors are written. */
    public ModelRef model() {
        return model;
    }

    public Services services() {
        return services;
    }

    public ChildEmbedding childEmbedding() {
        return childEmbedding;
    }

    /** The contextual headers, or null when chunks have none. */
    public ChunkContext context() {
        return context;
    }

    /** The text of {@code source} at {@link #field} (objects and dotted keys alike), or null when absent. */
    public Object valueIn(Map<String, Object> source) {
        return XContentMapValues.extractValue(field, source);
    }

    /** The text of a stored document, or null when it has none (absent, not a string, or blank). */
    public String textIn(Map<String, Object> source) {
        return valueIn(source) instanceof String s && !s.isBlank() ? s : null;
    }

    /** A chunk document as {@code _simulate} shows it: no vectors, nothing written. */
    public Map<String, Object> preview(String sourceIndex, String sourceId, ChunkedParent parent, SourceFields fields) {
        return ChunkDocuments.toSource(sourceIndex, sourceId, chunker.strategy().label(), parent, fields.copied(), null, null,
            lexicalHeaders(fields));
    }

    /** The headers BM25 indexes with the chunks ({@code context.lexical}), or null. */
    ChunkContext.Headers lexicalHeaders(SourceFields fields) {
        return context != null && context.lexical() ? fields.headers() : null;
    }

    /**
     * Cuts a text into parents and children: on this thread for rule-based strategies without a token limit (microseconds
     * per kilobyte), on the inference pool otherwise (model-guided ones block on their models, the limit on the tokenizer);
     * the cuts the token limit took are counted ({@code ingest.limit_splits}).
     */
    public void chunk(String text, ActionListener<List<ChunkedParent>> listener) {
        Chunkers.run(services.inference(), chunker, c -> {
            MultiGranularChunker.Result result = c.chunkWithEvidence(text);
            services.stats().ingest().limitSplits(result.limitSplits());
            return result.parents();
        }, callerContext(listener));
    }

    /**
     * Gets the chunks of one text ready to write into {@code target}: checks, as the caller, that {@code target} is (or
     * becomes) a chunk index of this model serving {@code sourceIndex} and that the caller may write it ({@code writable},
     * one check per request and chunk index), then embeds (reusing the stored vectors of parents whose {@code text_hash} is
     * unchanged; not realtime) in slices (see {@link Slicing}). Nothing is written. Failures of the inference layer go to
     * {@code modelFailed}, all others to the listener.
     */
    public void prepare(String target, String sourceIndex, String sourceId, List<ChunkedParent> parents, SourceFields fields,
                        String sourceHash, WriteChecks writable, StrataStats.Progress progress, ActionListener<PreparedChunks> listener,
                        java.util.function.Consumer<Exception> modelFailed) {
        prepare(target, sourceIndex, sourceId, parents, fields, sourceHash, writable, progress, null, listener, modelFailed);
    }

    /**
     * {@link #prepare(String, String, String, List, SourceFields, String, WriteChecks, StrataStats.Progress, ActionListener,
     * java.util.function.Consumer) prepare}, also reusing per chunk the vectors {@code reusable} holds under a chunk's
     * {@link ChunkDocuments#VECTOR_KEY} (null: none), where a parent's {@code text_hash} finds none.
     */
    public void prepare(String target, String sourceIndex, String sourceId, List<ChunkedParent> parents, SourceFields fields,
                        String sourceHash, WriteChecks writable, StrataStats.Progress progress, Function<String, float[]> reusable,
                        ActionListener<PreparedChunks> listener, java.util.function.Consumer<Exception> modelFailed) {
        if (model == null) {
            progress.planned(parents.size(), 0, 0);
            ready(target, sourceIndex, null, writable, ActionListener.wrap(
                v -> listener.onResponse(new PreparedChunks(this, parents, null, null, null, fields, sourceHash, null, progress)),
                listener::onFailure));
            return;
        }
        progress.stage(StrataStats.Stage.EMBEDDING);
        services.inference().describe(model, callerContext(ActionListener.wrap(info -> {
            List<String> hashes = new ArrayList<>(parents.size());
            List<List<String>> keys = new ArrayList<>(parents.size());
            for (ChunkedParent p : parents) {
                hashes.add(textHash(info, p, fields.headers()));
                keys.add(VectorKeys.of(info, childEmbedding, p, fields.headers()));
            }
            List<List<float[]>> byKey = reusable == null ? null
                : keys.stream().map(k -> k.stream().map(key -> key == null ? null : reusable.apply(key)).toList()).toList();
            // a caller with reusable vectors read the target's chunks already (a rebuild: the generation's, by key, per chunk)
            java.util.function.Consumer<ActionListener<Map<String, List<float[]>>>> storedVectors = reusable != null
                ? l -> l.onResponse(Map.of())
                : l -> services.store().storedVectors(target, sourceId, parents.size() + REUSE_WINDOW, new HashSet<>(hashes), l);
            ready(target, sourceIndex, info, writable, ActionListener.wrap(
                v -> storedVectors.accept(
                    ActionListener.wrap(stored -> {
                        List<List<float[]>> reused = new ArrayList<>(parents.size());
                        hashes.forEach(h -> reused.add(stored.get(h)));
                        DocumentVectors vectors = new DocumentVectors(parents, reused, byKey, fields.headers(),
                            chunker.parentSize().meanVector(), childEmbedding == ChildEmbedding.LATE);
                        progress.planned(parents.size(), vectors.texts(), vectors.textsReused());
                        embedSlices(vectors, vectors.slices(services.slicing().embedTexts()), 0, progress, ActionListener.wrap(done -> {
                            services.stats().ingest().vectors(vectors.textsToEmbed(), vectors.textsReused());
                            listener.onResponse(new PreparedChunks(this, parents, vectors, hashes, keys, fields, sourceHash, info, progress));
                        }, modelFailed::accept));
                    }, listener::onFailure)),
                listener::onFailure));
        }, modelFailed::accept)));
    }

    /**
     * The {@link ChunkDocuments#VECTOR_KEY vector keys} of every chunk with a vector of its own of several documents (each
     * its parents and its fields); none without a model.
     */
    public void vectorKeys(List<List<ChunkedParent>> documents, List<SourceFields> fields, ActionListener<java.util.Set<String>> listener) {
        if (model == null) {
            listener.onResponse(java.util.Set.of());
            return;
        }
        services.inference().describe(model, callerContext(ActionListener.map(listener, info -> {
            java.util.Set<String> keys = new HashSet<>();
            for (int d = 0; d < documents.size(); d++) {
                for (ChunkedParent p : documents.get(d)) {
                    VectorKeys.of(info, childEmbedding, p, fields.get(d).headers()).stream().filter(java.util.Objects::nonNull)
                        .forEach(keys::add);
                }
            }
            return keys;
        })));
    }

    /**
     * {@code target} made ready for this processor's chunks of {@code sourceIndex} (created when absent) and the caller's
     * right to write it checked, as {@link #prepare} does before its first write.
     */
    public void ready(String target, String sourceIndex, WriteChecks writable, ActionListener<Void> listener) {
        if (model == null) {
            ready(target, sourceIndex, null, writable, listener);
            return;
        }
        services.inference().describe(model, callerContext(ActionListener.wrap(info -> ready(target, sourceIndex, info, writable,
            listener), listener::onFailure)));
    }

    /** The chunk index made ready for this model and source index, and the caller's right to write it checked. */
    private void ready(String target, String sourceIndex, ModelInfo info, WriteChecks writable, ActionListener<Void> listener) {
        services.setup().ensureIndex(target, sourceIndex, indexFields(), info, callerContext(ActionListener.wrap(
            v -> writable.check(target, callerContext(listener)), listener::onFailure)));
    }

    /**
     * The listener, called in the caller's thread context whatever thread (and context) the inference layer answers
     * on: the chunk writes that follow must carry the caller's permissions, never a model layer's or the system's.
     */
    public <T> ActionListener<T> callerContext(ActionListener<T> listener) {
        return ContextPreservingActionListener.wrapPreservingContext(listener, services.threadContext());
    }

    /** Previous chunks looked at for reusable vectors beyond the new count (parents shifted by edits). */
    static final int REUSE_WINDOW = 8;

    /**
     * Embeds slice {@code k} and, when it is done, submits the next: one document occupies at most one inference task at a
     * time, and the tasks other documents queued meanwhile run in between.
     */
    private void embedSlices(DocumentVectors vectors, List<DocumentVectors.Slice> slices, int k, StrataStats.Progress progress,
                             ActionListener<Void> listener) {
        if (k == slices.size()) {
            listener.onResponse(null);
            return;
        }
        DocumentVectors.Slice slice = slices.get(k);
        if (childEmbedding == ChildEmbedding.LATE) {
            services.inference().embedSpans(model, vectors.spannedTexts(slice), Embedder.Purpose.PASSAGE,
                callerContext(ActionListener.wrap(embedded -> {
                    vectors.fillSpans(slice, embedded);
                    progress.embedded(slice.texts());
                    embedSlices(vectors, slices, k + 1, progress, listener);
                }, listener::onFailure)));
            return;
        }
        services.inference().embed(model, vectors.texts(slice), Embedder.Purpose.PASSAGE, callerContext(ActionListener.wrap(embedded -> {
            vectors.fill(slice, embedded);
            progress.embedded(embedded.size());
            embedSlices(vectors, slices, k + 1, progress, listener);
        }, listener::onFailure)));
    }

    /**
     * Whether this writer can have written a document with {@code summary}: the same field and strategy where the summary
     * records them (summaries before the field was recorded match on the strategy alone). Tells apart pipelines whose
     * targets coincide (e.g. two with {@code "{{_index}}-chunks"}) when the summary names no pipeline.
     */
    public boolean agreesWith(Map<?, ?> summary) {
        Object f = summary == null ? null : summary.get("field");
        Object s = summary == null ? null : summary.get("strategy");
        return (f == null || f.equals(field)) && (s == null || s.equals(chunker.strategy().label()));
    }

    /**
     * The summary of a document whose text was accepted but whose chunks could not be cut, embedded or prepared (a model
     * down or timing out, a rejection, the chunk index refusing writes), stored only when an {@code on_failure} handler or
     * {@code ignore_failure} lets the write go on without chunks. Before it, such a document carried no summary, so
     * {@code _reconcile} (which follows summaries) never counted it: its chunks were missing and nothing said so. With it,
     * {@code _reconcile} counts the document as {@code missing} and cuts its chunks; the bulk filter leaves it without
     * chunks until then ({@code Rechunker}). No {@code source_hash}: no chunks carry one.
     */
    public Map<String, Object> failedSummary(String target, String pipeline, String reason) {
        Map<String, Object> summary = summary(target, List.of(), null, pipeline);
        summary.remove(ChunkDocuments.SOURCE_HASH);
        String why = reason == null ? "unknown" : reason;
        summary.put(SourceSummary.FAILURE, why.length() > SourceSummary.FAILURE_CHARS ? why.substring(0, SourceSummary.FAILURE_CHARS) + "…" : why);
        return summary;
    }

    /** The summary the source document carries under {@value SourceSummary#FIELD}. */
    public Map<String, Object> summary(String target, List<ChunkedParent> parents, String sourceHash, String pipeline) {
        Map<String, Object> summary = new LinkedHashMap<>();
        summary.put("parents", parents.size());
        summary.put("children", parents.stream().mapToInt(p -> p.children().size()).sum());
        summary.put("strategy", chunker.strategy().label());
        summary.put("target_index", target);
        summary.put("field", field);
        summary.put(ChunkDocuments.SOURCE_HASH, sourceHash);
        if (configHash != null) {
            summary.put(SourceSummary.CONFIG, configHash);
        }
        if (pipeline != null) {
            summary.put("pipeline", pipeline);
        }
        return summary;
    }

    /** What a parent's stored vectors are reused by on re-ingest ({@link VectorKeys#textHash}). */
    String textHash(ModelInfo info, ChunkedParent parent, ChunkContext.Headers headers) {
        return VectorKeys.textHash(info, chunker, childEmbedding, parent, headers);
    }

    /**
     * What the chunk documents of {@code source} take from it: its {@code copy_fields} and the values of the context's
     * fields. Fails, naming the field, on a context value that is not text.
     */
    public SourceFields sourceFields(Map<String, Object> source) {
        return new SourceFields(copiedFields(source),
            context == null ? ChunkContext.Headers.NONE : context.headers(path -> XContentMapValues.extractValue(path, source)));
    }

    /** The {@code copy_fields} of a document (paths, as for the text field), deep-copied: they go into every chunk document. */
    public Map<String, Object> copiedFields(Map<String, Object> source) {
        Map<String, Object> copied = new LinkedHashMap<>();
        for (String name : copyFields) {
            Object value = XContentMapValues.extractValue(name, source);
            if (value != null) {
                copied.put(name, deepCopy(value));
            }
        }
        return copied;
    }

    @SuppressWarnings("unchecked")
    private static Object deepCopy(Object value) {
        if (value instanceof Map<?, ?> m) {
            Map<String, Object> out = new LinkedHashMap<>();
            ((Map<String, Object>) m).forEach((k, v) -> out.put(k, deepCopy(v)));
            return out;
        }
        if (value instanceof List<?> l) {
            List<Object> out = new ArrayList<>(l.size());
            l.forEach(v -> out.add(deepCopy(v)));
            return out;
        }
        return value;
    }

    /** Whether {@code template} is a valid {@code target_index}: {@value #INDEX_PLACEHOLDER} is its only placeholder. */
    public static String templateProblem(String template) {
        String rest = template.replace(INDEX_PLACEHOLDER, "");
        if (rest.contains("{{") || rest.contains("}}")) {
            return String.format(Locale.ROOT, "[%s] may only contain the placeholder %s (the index a document is written to)", template,
                INDEX_PLACEHOLDER);
        }
        return null;
    }
}

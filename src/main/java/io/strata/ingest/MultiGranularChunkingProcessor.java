package io.strata.ingest;

import io.strata.model.ModelInfo;
import io.strata.model.ModelRef;
import io.strata.chunkindex.ChunkDocuments;
import io.strata.chunking.ChunkedParent;
import io.strata.chunking.ChunkingConfig;
import io.strata.chunking.ConfigException;
import io.strata.chunking.Embedder;
import io.strata.inference.InferenceModels;
import io.strata.inference.InferenceService;
import io.strata.chunking.MultiGranularChunker;
import io.strata.chunking.SentenceSegmenter;
import io.strata.stats.StrataStats;
import org.opensearch.action.support.ContextPreservingActionListener;
import org.opensearch.cluster.metadata.MetadataCreateIndexService;
import org.opensearch.common.UUIDs;
import org.opensearch.common.util.concurrent.ThreadContext;
import org.opensearch.core.action.ActionListener;
import org.opensearch.ingest.AbstractProcessor;
import org.opensearch.ingest.ConfigurationUtils;
import org.opensearch.ingest.IngestDocument;
import org.opensearch.ingest.Processor;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * {@code multi_granular_chunking}: splits a text field into parent chunks and their multi-granular
 * children (LGMGC §3.2) and writes one chunk document per parent into {@code target_index}, before the
 * source document itself is written. The source document gains a summary under {@code strata}.
 *
 * <p>Runs asynchronously and never blocks the write thread on I/O. Chunk writes use the caller's thread
 * context (and so its permissions). In {@code _simulate} nothing is written: the chunk documents are shown
 * under {@code strata.chunks} instead.
 */
public final class MultiGranularChunkingProcessor extends AbstractProcessor {
    public static final String TYPE = "multi_granular_chunking";
    public static final String SUMMARY_FIELD = "strata";
    /** Default limit of the text length, in characters. */
    public static final int DEFAULT_MAX_CHARS = 10_000_000;

    private final String field;
    private final String targetIndex;
    private final MultiGranularChunker chunker;
    private final List<String> copyFields;
    private final boolean ignoreMissing;
    private final int maxChars;
    /** The model that embeds every chunk; null when the pipeline writes no vectors. */
    private final ModelRef model;
    private final ChunkStore store;
    private final InferenceService inference;
    private final ThreadContext threadContext;
    private final StrataStats stats;
    private final Slicing slicing;

    /** The node components every processor of this type uses, and how large documents are sliced. */
    public record Services(ChunkStore store, InferenceService inference, ThreadContext threadContext, StrataStats stats,
                           Slicing slicing) {}

    MultiGranularChunkingProcessor(String tag, String description, String field, String targetIndex, MultiGranularChunker chunker,
                                   List<String> copyFields, boolean ignoreMissing, int maxChars, ModelRef model, Services services) {
        super(tag, description);
        this.field = field;
        this.targetIndex = targetIndex;
        this.chunker = chunker;
        this.copyFields = List.copyOf(copyFields);
        this.ignoreMissing = ignoreMissing;
        this.maxChars = maxChars;
        this.model = model;
        this.store = services.store();
        this.inference = services.inference();
        this.threadContext = services.threadContext();
        this.stats = services.stats();
        this.slicing = services.slicing();
    }

    @Override
    public String getType() {
        return TYPE;
    }

    public String field() {
        return field;
    }

    public String targetIndex() {
        return targetIndex;
    }

    public MultiGranularChunker chunker() {
        return chunker;
    }

    public ModelRef model() {
        return model;
    }

    @Override
    public IngestDocument execute(IngestDocument document) {
        throw new UnsupportedOperationException("[" + TYPE + "] runs asynchronously only");
    }

    @Override
    public void execute(IngestDocument document, BiConsumer<IngestDocument, Exception> handler) {
        final String text;
        final String sourceIndex;
        try {
            Object value = document.hasField(field) ? document.getFieldValue(field, Object.class) : null;
            if (value == null) {
                if (ignoreMissing) {
                    handler.accept(document, null);
                    return;
                }
                throw new IllegalArgumentException(String.format(Locale.ROOT,
                    "[%s] field [%s] is missing from the document; set [ignore_missing] to skip such documents", TYPE, field));
            }
            text = validText(value);
            sourceIndex = (String) document.getSourceAndMetadata().get(IngestDocument.Metadata.INDEX.getFieldName());
            if (targetIndex.equals(sourceIndex)) {
                throw new IllegalArgumentException(String.format(Locale.ROOT,
                    "[%s] [target_index] [%s] is the index being written; chunks need an index of their own", TYPE, targetIndex));
            }
        } catch (Exception e) {
            failed(handler, IngestFailures.of(e), e);
            return;
        }
        // every path below ends in the handler exactly once: that is where a tracked document leaves the report
        StrataStats.Progress progress = stats.track(sourceIndex,
            (String) document.getSourceAndMetadata().get(IngestDocument.Metadata.ID.getFieldName()), text.length());
        BiConsumer<IngestDocument, Exception> done = (d, e) -> {
            progress.done();
            handler.accept(d, e);
        };
        chunk(text, ActionListener.wrap(parents -> chunked(document, sourceIndex, text, parents, progress, done),
            e -> failed(done, IngestFailures.ofModel(e), e)));
    }

    /**
     * Cuts a text into parents and children: on this thread for rule-based strategies (microseconds per kilobyte), on
     * the inference pool for model-guided ones, which block on their models.
     */
    private void chunk(String text, ActionListener<List<ChunkedParent>> listener) {
        if (chunker.strategy().usesModels()) {
            inference.run(() -> chunker.chunk(text), callerContext(listener));
            return;
        }
        List<ChunkedParent> parents;
        try {
            parents = chunker.chunk(text);
        } catch (Exception e) {
            listener.onFailure(e);
            return;
        }
        listener.onResponse(parents);
    }

    private void chunked(IngestDocument document, String sourceIndex, String text, List<ChunkedParent> parents,
                         StrataStats.Progress progress, BiConsumer<IngestDocument, Exception> handler) {
        final String sourceId;
        final Map<String, Object> copied;
        final String sourceHash = sourceHash(text); // one pass over the text, for the summary and every chunk document
        try {
            String id = (String) document.getSourceAndMetadata().get(IngestDocument.Metadata.ID.getFieldName());
            if (id == null) {
                // chunk ids derive from the source id, so the id is fixed here instead of at write time
                id = UUIDs.base64UUID();
                document.setFieldValue(IngestDocument.Metadata.ID.getFieldName(), id);
            }
            sourceId = id;
            progress.id(id);
            copied = copiedFields(document);
            Object pipeline = document.getIngestMetadata().get("pipeline");
            Map<String, Object> summary = summary(parents, sourceHash, pipeline instanceof String s ? s : null);
            ChunkLedger ledger = threadContext.getTransient(ChunkLedger.TRANSIENT);
            if (ledger == null) {
                // _simulate: show what would be written (without vectors), write nothing
                List<Map<String, Object>> preview = new ArrayList<>(parents.size());
                for (ChunkedParent p : parents) {
                    preview.add(ChunkDocuments.toSource(sourceIndex, sourceId, chunker.strategy().label(), p, copied));
                }
                summary.put("chunks", preview);
                document.setFieldValue(SUMMARY_FIELD, summary);
                handler.accept(document, null);
                return;
            }
            document.setFieldValue(SUMMARY_FIELD, summary);
            ledger.record(this, sourceIndex, sourceId, sourceHash, parents.size());
        } catch (Exception e) {
            failed(handler, IngestFailures.of(e), e);
            return;
        }
        write(sourceIndex, sourceId, parents, copied, sourceHash, progress, ActionListener.wrap(v -> {
            stats.ingest().chunked(parents);
            handler.accept(document, null);
        }, e -> failed(handler, IngestFailures.of(e), e)), e -> failed(handler, IngestFailures.ofModel(e), e));
    }

    private void failed(BiConsumer<IngestDocument, Exception> handler, StrataStats.Failure reason, Exception e) {
        stats.ingest().failed(reason);
        handler.accept(null, e);
    }

    /**
     * Embeds (reusing the stored vectors of parents whose {@code text_hash} is unchanged) and writes the chunk documents of
     * one source document, replacing its earlier chunks. Bounded whatever the document's size (see {@link Slicing}): the
     * texts go to the model in slices, one inference task after another, and only their {@code float[]} vectors are kept;
     * the chunk documents are then built and written bulk slice by bulk slice. Every vector is computed before the first
     * write, so a model failure leaves the earlier chunks as they were. Failures of the inference layer go to
     * {@code modelFailed}, all others to the listener.
     */
    private void write(String sourceIndex, String sourceId, List<ChunkedParent> parents, Map<String, Object> copied,
                       String sourceHash, StrataStats.Progress progress, ActionListener<Void> listener,
                       Consumer<Exception> modelFailed) {
        if (model == null) {
            progress.planned(parents.size(), 0, 0);
            progress.stage(StrataStats.Stage.WRITING);
            store.ensureIndex(targetIndex, sourceIndex, null, ActionListener.wrap(
                ready -> store.replace(targetIndex, sourceId, parents.size(),
                    i -> chunkDoc(sourceIndex, sourceId, parents.get(i), copied, null, null, sourceHash), slicing, progress, listener),
                listener::onFailure));
            return;
        }
        progress.stage(StrataStats.Stage.EMBEDDING);
        inference.describe(model, callerContext(ActionListener.wrap(info -> {
            List<String> hashes = new ArrayList<>(parents.size());
            for (ChunkedParent p : parents) {
                hashes.add(textHash(info, p.parent().text()));
            }
            store.ensureIndex(targetIndex, sourceIndex, info, ActionListener.wrap(
                ready -> store.storedVectors(targetIndex, sourceId, parents.size() + REUSE_WINDOW, new HashSet<>(hashes),
                    ActionListener.wrap(stored -> {
                        List<List<float[]>> reused = new ArrayList<>(parents.size());
                        hashes.forEach(h -> reused.add(stored.get(h)));
                        embedAndReplace(sourceIndex, sourceId, parents, copied, sourceHash, hashes, new DocumentVectors(parents, reused),
                            progress, listener, modelFailed);
                    }, listener::onFailure)),
                listener::onFailure));
        }, modelFailed)));
    }

    /**
     * The listener, called in the caller's thread context whatever thread (and context) the inference layer answers
     * on: the chunk writes that follow must carry the caller's permissions, never a model layer's or the system's.
     */
    private <T> ActionListener<T> callerContext(ActionListener<T> listener) {
        return ContextPreservingActionListener.wrapPreservingContext(listener, threadContext);
    }

    /** Previous chunks looked at for reusable vectors beyond the new count (parents shifted by edits). */
    static final int REUSE_WINDOW = 8;

    private void embedAndReplace(String sourceIndex, String sourceId, List<ChunkedParent> parents, Map<String, Object> copied,
                                 String sourceHash, List<String> hashes, DocumentVectors vectors, StrataStats.Progress progress,
                                 ActionListener<Void> listener, Consumer<Exception> modelFailed) {
        progress.planned(parents.size(), vectors.texts(), vectors.textsReused());
        embedSlices(vectors, vectors.slices(slicing.embedTexts()), 0, progress, ActionListener.wrap(v -> {
            stats.ingest().vectors(vectors.textsToEmbed(), vectors.textsReused());
            progress.stage(StrataStats.Stage.WRITING);
            store.replace(targetIndex, sourceId, parents.size(),
                i -> chunkDoc(sourceIndex, sourceId, parents.get(i), copied, vectors.take(i), hashes.get(i), sourceHash), slicing,
                progress, listener);
        }, modelFailed::accept));
    }

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
        inference.embed(model, vectors.texts(slice), Embedder.Purpose.PASSAGE, callerContext(ActionListener.wrap(embedded -> {
            vectors.fill(slice, embedded);
            progress.embedded(embedded.size());
            embedSlices(vectors, slices, k + 1, progress, listener);
        }, listener::onFailure)));
    }

    private Map<String, Object> chunkDoc(String sourceIndex, String sourceId, ChunkedParent parent, Map<String, Object> copied,
                                         List<float[]> vectors, String hash, String sourceHash) {
        Map<String, Object> doc = ChunkDocuments.toSource(sourceIndex, sourceId, chunker.strategy().label(), parent, copied, vectors,
            hash);
        doc.put(ChunkDocuments.SOURCE_HASH, sourceHash);
        return doc;
    }

    /** The summary the source document carries under {@value #SUMMARY_FIELD}. */
    private Map<String, Object> summary(List<ChunkedParent> parents, String sourceHash, String pipeline) {
        Map<String, Object> summary = new LinkedHashMap<>();
        summary.put("parents", parents.size());
        summary.put("children", parents.stream().mapToInt(p -> p.children().size()).sum());
        summary.put("strategy", chunker.strategy().label());
        summary.put("target_index", targetIndex);
        summary.put(ChunkDocuments.SOURCE_HASH, sourceHash);
        if (pipeline != null) {
            summary.put("pipeline", pipeline);
        }
        return summary;
    }

    /**
     * What reconciling compares: a hash of the source text the chunks were cut from, kept in the summary and in every
     * chunk document. One pass of SHA-256 over the text tells whether the chunks still match it, exactly (up to a
     * collision) and without re-chunking or embedding.
     */
    public static String sourceHash(String text) {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            return HexFormat.of().formatHex(digest.digest(text.getBytes(StandardCharsets.UTF_8)), 0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** What a parent's vectors depend on: the model, the child sizes and the parent text. */
    private String textHash(ModelInfo info, String parentText) {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            digest.update(ChunkDocuments.modelMeta(info).toString().getBytes(StandardCharsets.UTF_8));
            digest.update(chunker.granularities().toString().getBytes(StandardCharsets.UTF_8));
            digest.update(Integer.toString(chunker.strategy().maxWords()).getBytes(StandardCharsets.UTF_8));
            digest.update((byte) 0);
            digest.update(parentText.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest.digest(), 0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Makes the chunks of {@code index/id} match the document as it is now stored (realtime get): rewrites
     * them from its current text, or deletes them when the document or its field is gone. Used when a
     * source write failed after its chunks were written.
     */
    public void repair(String index, String id, ActionListener<Void> listener) {
        store.sourceOf(index, id, ActionListener.wrap(source -> {
            if (source == null) {
                store.deleteFrom(targetIndex, id, 0, listener);
            } else {
                rewrite(index, id, source, ActionListener.map(listener, summary -> null));
            }
        }, listener::onFailure));
    }

    /**
     * Rewrites the chunks of {@code index/id} from {@code source} (the document as stored) with this processor's
     * configuration, and answers with the summary the document should carry ({@code null}, after deleting its chunks,
     * when it has no text in {@code field}). Used by repairs and by {@code _reconcile}.
     */
    public void rewrite(String index, String id, Map<String, Object> source, ActionListener<Map<String, Object>> listener) {
        Object value = source.get(field);
        if (!(value instanceof String text) || text.isBlank()) {
            store.deleteFrom(targetIndex, id, 0, ActionListener.wrap(v -> listener.onResponse(null), listener::onFailure));
            return;
        }
        Object previous = source.get(SUMMARY_FIELD) instanceof Map<?, ?> m ? m.get("pipeline") : null;
        IngestDocument current = new IngestDocument(index, id, null, null, null, source);
        String hash = sourceHash(text);
        StrataStats.Progress progress = stats.track(index, id, text.length());
        ActionListener<Map<String, Object>> done = ActionListener.runBefore(listener, progress::done);
        chunk(text, ActionListener.wrap(parents -> write(index, id, parents, copiedFields(current), hash, progress,
            ActionListener.wrap(v -> done.onResponse(summary(parents, hash, previous instanceof String s ? s : null)),
                done::onFailure), done::onFailure), done::onFailure));
    }

    private String validText(Object value) {
        if (!(value instanceof String text)) {
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                "[%s] field [%s] must be a string, got [%s]", TYPE, field, value instanceof List ? "array" : value.getClass().getSimpleName()));
        }
        if (text.isBlank()) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] field [%s] is empty", TYPE, field));
        }
        if (text.length() > maxChars) {
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                "[%s] field [%s] has %d characters, more than [max_chars] = %d", TYPE, field, text.length(), maxChars));
        }
        return text;
    }

    private Map<String, Object> copiedFields(IngestDocument document) {
        Map<String, Object> copied = new LinkedHashMap<>();
        for (String name : copyFields) {
            if (document.hasField(name)) {
                copied.put(name, IngestDocument.deepCopy(document.getFieldValue(name, Object.class)));
            }
        }
        return copied;
    }

    /** Reads and validates the processor configuration once, at pipeline creation. */
    public static final class Factory implements Processor.Factory {
        static final Set<String> KEYS = Set.of("field", "target_index", "strategy", "granularities", "copy_fields",
            "ignore_missing", "max_chars", "model", "model_id", "embed");

        private final Services services;
        private final SentenceSegmenter segmenter;

        public Factory(Services services, SentenceSegmenter segmenter) {
            this.services = services;
            this.segmenter = segmenter;
        }

        @Override
        public MultiGranularChunkingProcessor create(Map<String, Processor.Factory> factories, String tag, String description,
                                                     Map<String, Object> config) {
            for (String key : config.keySet()) {
                if (!KEYS.contains(key)) {
                    throw ConfigurationUtils.newConfigurationException(TYPE, tag, key, String.format(Locale.ROOT,
                        "unknown option [%s]; supported: %s", key, KEYS.stream().sorted().toList()));
                }
            }
            String field = ConfigurationUtils.readStringProperty(TYPE, tag, config, "field");
            if (field.isBlank()) {
                throw ConfigurationUtils.newConfigurationException(TYPE, tag, "field",
                    "must name the source field holding the text, got an empty string");
            }
            String targetIndex = ConfigurationUtils.readStringProperty(TYPE, tag, config, "target_index");
            validateIndexName(tag, targetIndex);
            boolean ignoreMissing = ConfigurationUtils.readBooleanProperty(TYPE, tag, config, "ignore_missing", false);
            Object maxCharsValue = config.remove("max_chars");
            int maxChars = DEFAULT_MAX_CHARS;
            if (maxCharsValue != null) {
                if (!(maxCharsValue instanceof Integer n) || n < 1) {
                    throw ConfigurationUtils.newConfigurationException(TYPE, tag, "max_chars",
                        "must be a positive integer (characters), got [" + maxCharsValue + "]");
                }
                maxChars = n;
            }
            List<String> copyFields = readCopyFields(tag, config.remove("copy_fields"));
            boolean embed = ConfigurationUtils.readBooleanProperty(TYPE, tag, config, "embed", true);
            String modelField = config.containsKey("model_id") ? "model_id" : "model";
            ModelRef model;
            try {
                model = ModelRef.parse("[" + TYPE + "]", config);
                if (!embed && model != null) {
                    throw new IllegalArgumentException("[" + TYPE + "] [embed] is false but a model is configured; remove one of them");
                }
                if (embed) {
                    model = model == null ? services.inference().defaultRef() : model;
                    services.inference().validate("[" + TYPE + "]", model);
                }
            } catch (IllegalArgumentException e) {
                throw ConfigurationUtils.newConfigurationException(TYPE, tag, modelField, e.getMessage());
            }
            MultiGranularChunker chunker;
            try {
                var strategy = ChunkingConfig.removeStrategy(config, new InferenceModels(services.inference(), embed ? model : null));
                var granularities = ChunkingConfig.parseGranularities("granularities", config.remove("granularities"),
                    strategy.maxWords());
                chunker = new MultiGranularChunker(strategy, granularities, segmenter);
            } catch (ConfigException e) {
                throw ConfigurationUtils.newConfigurationException(TYPE, tag, e.field(), e.getMessage());
            }
            return new MultiGranularChunkingProcessor(tag, description, field, targetIndex, chunker, copyFields, ignoreMissing,
                maxChars, embed ? model : null, services);
        }

        private static void validateIndexName(String tag, String name) {
            String problem = null;
            if (!name.toLowerCase(Locale.ROOT).equals(name)) {
                problem = "must be lowercase";
            } else if (name.startsWith("_") || name.startsWith("-") || name.startsWith("+")) {
                problem = "must not start with '_', '-' or '+'";
            } else if (name.equals(".") || name.equals("..")) {
                problem = "must not be '.' or '..'";
            } else {
                try {
                    MetadataCreateIndexService.validateIndexOrAliasName(name, (n, msg) -> new IllegalArgumentException(msg));
                } catch (IllegalArgumentException e) {
                    problem = e.getMessage();
                }
            }
            if (problem != null) {
                throw ConfigurationUtils.newConfigurationException(TYPE, tag, "target_index",
                    "[" + name + "] is not a valid index name: " + problem);
            }
        }

        private static List<String> readCopyFields(String tag, Object value) {
            if (value == null) {
                return List.of();
            }
            if (!(value instanceof List<?> list) || list.stream().anyMatch(v -> !(v instanceof String s) || s.isBlank())) {
                throw ConfigurationUtils.newConfigurationException(TYPE, tag, "copy_fields",
                    "must be a list of source field names, e.g. [\"title\"]");
            }
            List<String> names = list.stream().map(String.class::cast).toList();
            for (String name : names) {
                String root = name.contains(".") ? name.substring(0, name.indexOf('.')) : name;
                if (ChunkDocuments.RESERVED.contains(root)) {
                    throw ConfigurationUtils.newConfigurationException(TYPE, tag, "copy_fields", String.format(Locale.ROOT,
                        "[%s] would overwrite a chunk field; reserved: %s", name, ChunkDocuments.RESERVED.stream().sorted().toList()));
                }
            }
            return names;
        }
    }
}

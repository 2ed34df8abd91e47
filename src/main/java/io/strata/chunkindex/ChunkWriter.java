package io.strata.chunkindex;

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
import org.opensearch.core.action.ActionListener;
import org.opensearch.ingest.IngestDocument;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Writes one chunking configuration's chunk documents into its chunk index: cuts a source text into parents and children,
 * embeds them (reusing stored vectors whose hash is unchanged) and replaces the document's earlier chunks. The one writer
 * behind the ingest processor, the write/delete repairs of {@link ChunkLifecycleFilter} and {@code _reconcile}
 * ({@link Reconciler}), so all three write exactly the same chunks for the same text.
 *
 * <p>Every write runs in the caller's thread context, and so with the caller's permissions: listeners coming back from
 * the inference layer are restored to it before the chunk index is touched.
 */
public final class ChunkWriter {
    /** The field of a source document that holds its chunking summary. */
    public static final String SUMMARY_FIELD = "strata";

    /** The node components every writer uses, and how large documents are sliced. */
    public record Services(ChunkStore store, InferenceService inference, ThreadContext threadContext, StrataStats stats,
                           Slicing slicing) {}

    private final String field;
    private final String targetIndex;
    private final MultiGranularChunker chunker;
    private final List<String> copyFields;
    /** The model that embeds every chunk; null when the pipeline writes no vectors. */
    private final ModelRef model;
    private final ChunkStore store;
    private final InferenceService inference;
    private final ThreadContext threadContext;
    private final StrataStats stats;
    private final Slicing slicing;

    public ChunkWriter(String field, String targetIndex, MultiGranularChunker chunker, List<String> copyFields, ModelRef model,
                       Services services) {
        this.field = field;
        this.targetIndex = targetIndex;
        this.chunker = chunker;
        this.copyFields = List.copyOf(copyFields);
        this.model = model;
        this.store = services.store();
        this.inference = services.inference();
        this.threadContext = services.threadContext();
        this.stats = services.stats();
        this.slicing = services.slicing();
    }

    /** The source field holding the text. */
    public String field() {
        return field;
    }

    public String targetIndex() {
        return targetIndex;
    }

    public MultiGranularChunker chunker() {
        return chunker;
    }

    /** The embedding model, or null when no vectors are written. */
    public ModelRef model() {
        return model;
    }

    /** A chunk document as {@code _simulate} shows it: no vectors, nothing written. */
    public Map<String, Object> preview(String sourceIndex, String sourceId, ChunkedParent parent, Map<String, Object> copied) {
        return ChunkDocuments.toSource(sourceIndex, sourceId, chunker.strategy().label(), parent, copied);
    }

    /**
     * Cuts a text into parents and children: on this thread for rule-based strategies (microseconds per kilobyte), on
     * the inference pool for model-guided ones, which block on their models.
     */
    public void chunk(String text, ActionListener<List<ChunkedParent>> listener) {
        Chunkers.run(inference, chunker, c -> c.chunk(text), callerContext(listener));
    }

    /**
     * Embeds (reusing the stored vectors of parents whose {@code text_hash} is unchanged) and writes the chunk documents of
     * one source document, replacing its earlier chunks. Bounded whatever the document's size (see {@link Slicing}): the
     * texts go to the model in slices, one inference task after another, and only their {@code float[]} vectors are kept;
     * the chunk documents are then built and written bulk slice by bulk slice. Every vector is computed before the first
     * write, so a model failure leaves the earlier chunks as they were. Failures of the inference layer go to
     * {@code modelFailed}, all others to the listener.
     */
    public void write(String sourceIndex, String sourceId, List<ChunkedParent> parents, Map<String, Object> copied,
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
    <T> ActionListener<T> callerContext(ActionListener<T> listener) {
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
    public Map<String, Object> summary(List<ChunkedParent> parents, String sourceHash, String pipeline) {
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

    /** The {@code copy_fields} of a document, deep-copied: they go into every chunk document. */
    public Map<String, Object> copiedFields(IngestDocument document) {
        Map<String, Object> copied = new LinkedHashMap<>();
        for (String name : copyFields) {
            if (document.hasField(name)) {
                copied.put(name, IngestDocument.deepCopy(document.getFieldValue(name, Object.class)));
            }
        }
        return copied;
    }

}

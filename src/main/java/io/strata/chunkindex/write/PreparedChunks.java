package io.strata.chunkindex.write;

import io.strata.chunkindex.ChunkDocuments;
import io.strata.chunkindex.store.ChunkCommit;
import io.strata.chunking.ChunkedParent;
import io.strata.model.ModelInfo;
import io.strata.stats.StrataStats;

import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;

/**
 * The chunks of one source text, cut and embedded but not written: what the pipeline prepares and the bulk filter writes
 * once the source write succeeded ({@link ChunkCommit}). Holds the vectors as {@code float[]} only; each chunk document is
 * built once, as its bulk slice is sent, and its vectors are released then.
 *
 * @param writer     the configuration that cut them
 * @param parents    the parents with their children
 * @param vectors    their vectors (null when the pipeline writes none)
 * @param textHashes per parent, the hash its vectors depend on (null without vectors)
 * @param vectorKeys per parent, per chunk the key of its vector ({@link VectorKeys}; null without vectors)
 * @param fields     the document's {@code copy_fields} and contextual headers
 * @param sourceHash the hash of the source text
 * @param model      the embedding model (null without vectors)
 * @param progress   the document's entry in the stats' in-progress report, until its chunks are written
 */
public record PreparedChunks(ChunkWriter writer, List<ChunkedParent> parents, DocumentVectors vectors, List<String> textHashes,
                             List<List<String>> vectorKeys, ChunkWriter.SourceFields fields, String sourceHash, ModelInfo model, StrataStats.Progress progress) {

    public int count() {
        return parents.size();
    }

    /** Vectors taken from stored chunks rather than computed. */
    public int vectorsReused() {
        return vectors == null ? 0 : vectors.textsReused();
    }

    /** Vectors the model computed. */
    public int textsEmbedded() {
        return vectors == null ? 0 : vectors.textsToEmbed();
    }

    /**
     * Chunk document {@code i} of {@code sourceId}, as stored for source index {@code sourceIndex} (the concrete index) and
     * the source's custom {@code routing} (null: none).
     */
    public IntFunction<Map<String, Object>> documents(String sourceIndex, String sourceId, String routing) {
        return i -> {
            Map<String, Object> doc = ChunkDocuments.toSource(sourceIndex, sourceId, writer.chunker().strategy().label(), parents.get(i),
                fields.copied(), vectors == null ? null : vectors.take(i), textHashes == null ? null : textHashes.get(i),
                writer.lexicalHeaders(fields), vectorKeys == null ? null : vectorKeys.get(i));
            doc.put(ChunkDocuments.SOURCE_HASH, sourceHash);
            if (routing != null) {
                doc.put(ChunkDocuments.SOURCE_ROUTING, routing);
            }
            return doc;
        };
    }
}

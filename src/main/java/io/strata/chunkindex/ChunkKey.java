package io.strata.chunkindex;

import org.opensearch.cluster.metadata.IndexMetadata;
import org.opensearch.cluster.routing.OperationRouting;

/**
 * Which source document a set of chunks belongs to, inside one concrete source index: its {@code _id} and its shard. With
 * custom routing one {@code _id} can be stored on several shards at once, as different documents with sequence numbers of
 * their own; chunk versions ({@code 2 × _seq_no}, {@code ChunkCommit}) compare operations of one shard only. So a document
 * on the shard its {@code _id} alone routes to (every document without custom routing, and a routed one that lands there)
 * has the chunk ids {@code <_id>:<ordinal>} of every chunk index written so far, and one on another shard {@code s} has
 * {@code <_id>:<ordinal>@<s>}: a write, update or delete acts on the chunks of the document it touched only. Both forms
 * end in {@code :<ordinal>} or {@code :<ordinal>@<shard>} after the last colon, so an id names one key whatever the
 * {@code _id} holds ({@link ChunkDocuments#ordinalOf}).
 *
 * @param shard the source shard, or {@link #HOME} for the shard the {@code _id} alone routes to
 */
public record ChunkKey(String sourceId, int shard) {
    public static final int HOME = -1;

    public static ChunkKey home(String sourceId) {
        return new ChunkKey(sourceId, HOME);
    }

    /**
     * The key of {@code id} stored on {@code shard} of {@code index} (null metadata: the index is gone, and so are the chunk
     * indices it would route into; the home form).
     */
    public static ChunkKey of(IndexMetadata index, String id, int shard) {
        if (index == null || shard == OperationRouting.generateShardId(index, id, null)) {
            return home(id);
        }
        return new ChunkKey(id, shard);
    }

    /** The key of {@code id} written with {@code routing} (null: none) into {@code index}. */
    public static ChunkKey routed(IndexMetadata index, String id, String routing) {
        return index == null ? home(id) : of(index, id, OperationRouting.generateShardId(index, id, routing));
    }

    public String chunkId(int ordinal) {
        return shard == HOME ? ChunkDocuments.chunkId(sourceId, ordinal) : ChunkDocuments.chunkId(sourceId, ordinal) + "@" + shard;
    }
}

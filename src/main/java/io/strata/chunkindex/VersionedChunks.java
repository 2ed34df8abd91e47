package io.strata.chunkindex;

import org.opensearch.core.action.ActionListener;

import java.util.List;
import java.util.Map;

/**
 * The operations on chunk documents that {@link ChunkCommit} needs: versioned writes and deletes ({@code version_type:
 * external_gte}: applied where the stored version, live or a delete's tombstone, is not higher) and realtime look-ups of
 * which ids exist and at which version. {@link ChunkStore} implements it over the node client in the caller's thread context.
 */
public interface VersionedChunks {
    /** How one versioned write or delete ended. */
    enum Outcome {
        /** Applied (a delete of an absent id is applied too: it leaves a tombstone with the version). */
        APPLIED,
        /** A higher version is stored: a newer writer got there first. */
        CONFLICT,
        /** Any other failure (see {@link ItemResult#failure}). */
        FAILED
    }

    /** The outcome for one id. */
    record ItemResult(String id, Outcome outcome, Exception failure) {
        public static ItemResult applied(String id) {
            return new ItemResult(id, Outcome.APPLIED, null);
        }
    }

    /** Writes {@code docs} (id → source) at {@code version}; one result per document, in order. */
    void index(String index, List<Map.Entry<String, Map<String, Object>>> docs, long version, ActionListener<List<ItemResult>> listener);

    /** Deletes {@code ids} at {@code version}; one result per id, in order. A missing index: every id applied. */
    void delete(String index, List<String> ids, long version, ActionListener<List<ItemResult>> listener);

    /** Which of {@code ids} exist now (realtime). A missing index: none. */
    void existing(String index, List<String> ids, ActionListener<List<String>> listener);

    /** The version of {@code id} in each of {@code indices} where it exists now (realtime). A missing index: absent. */
    void versions(List<String> indices, String id, ActionListener<Map<String, Long>> listener);
}

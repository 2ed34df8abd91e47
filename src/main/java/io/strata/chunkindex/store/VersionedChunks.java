package io.strata.chunkindex.store;

import org.opensearch.core.action.ActionListener;

import java.util.List;
import java.util.Map;

/**
 * The operations on chunk documents that {@link ChunkCommit} needs: versioned writes and deletes ({@code version_type:
 * external_gte}: applied where the stored version, live or a delete's tombstone, is not higher), each answering whether
 * a document was there, and a realtime look-up of an id's version. {@link ChunkStore} implements it over the node client in the caller's thread context.
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

    /**
     * The outcome for one id; {@code found}: a document was there (a write, a delete that deleted one, or a conflict with a
     * newer version), false for a delete of an absent id.
     */
    record ItemResult(String id, Outcome outcome, Exception failure, boolean found) {
        public ItemResult(String id, Outcome outcome, Exception failure) {
            this(id, outcome, failure, outcome != Outcome.FAILED);
        }

        public static ItemResult applied(String id) {
            return new ItemResult(id, Outcome.APPLIED, null);
        }

        /** A delete of an id that held no document: applied, it leaves a tombstone. */
        public static ItemResult absent(String id) {
            return new ItemResult(id, Outcome.APPLIED, null, false);
        }
    }

    /** Writes {@code docs} (id → source) at {@code version}; one result per document, in order. */
    void index(String index, List<Map.Entry<String, Map<String, Object>>> docs, long version, ActionListener<List<ItemResult>> listener);

    /** Deletes {@code ids} at {@code version}; one result per id, in order. A missing index: every id absent. */
    void delete(String index, List<String> ids, long version, ActionListener<List<ItemResult>> listener);

    /** The version of {@code id} in each of {@code indices} where it exists now (realtime). A missing index: absent. */
    void versions(List<String> indices, String id, ActionListener<Map<String, Long>> listener);
}

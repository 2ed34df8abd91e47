package io.strata.chunkindex.registry;

import org.opensearch.action.ActionType;
import org.opensearch.action.support.clustermanager.AcknowledgedResponse;

/**
 * Records in a chunk index's metadata which concrete source index it serves ({@link ChunkIndexRegistry}). An
 * {@code internal:} action: the node sends it as itself after a caller's authorised chunk write, never on a user's
 * request (no REST endpoint), and the security plugin lets a node's own internal actions through.
 */
public final class RegisterChunkIndexAction extends ActionType<AcknowledgedResponse> {
    public static final String NAME = "internal:strata/chunk_index/register";
    public static final RegisterChunkIndexAction INSTANCE = new RegisterChunkIndexAction();

    private RegisterChunkIndexAction() {
        super(NAME, AcknowledgedResponse::new);
    }
}

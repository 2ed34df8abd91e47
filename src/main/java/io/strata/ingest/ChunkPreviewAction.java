package io.strata.ingest;

import io.strata.transport.RenderedResponse;
import org.opensearch.action.ActionType;

/**
 * {@code _chunk} as a named cluster action, so a security plugin can grant or deny it: it reads no index and writes
 * nothing, but runs the node's models on the caller's text.
 */
public final class ChunkPreviewAction extends ActionType<RenderedResponse> {
    public static final String NAME = "cluster:admin/strata/chunk";
    public static final ChunkPreviewAction INSTANCE = new ChunkPreviewAction();

    private ChunkPreviewAction() {
        super(NAME, RenderedResponse::new);
    }
}

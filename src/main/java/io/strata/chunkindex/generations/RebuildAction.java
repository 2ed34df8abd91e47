package io.strata.chunkindex.generations;

import io.strata.transport.RenderedResponse;
import org.opensearch.action.ActionType;

/**
 * {@code _rebuild} as a named action, checked by a security plugin against the source index (an index-level admin action,
 * as {@code _reconcile}). The build reads the source and creates and writes the new generation with the caller's own
 * permissions, so a role also needs read on the source and create_index and write on the generation's name.
 */
public final class RebuildAction extends ActionType<RenderedResponse> {
    public static final String NAME = "indices:admin/strata/rebuild";
    public static final RebuildAction INSTANCE = new RebuildAction();

    private RebuildAction() {
        super(NAME, RenderedResponse::new);
    }
}

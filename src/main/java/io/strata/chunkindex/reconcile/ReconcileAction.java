package io.strata.chunkindex.reconcile;

import io.strata.transport.RenderedResponse;
import org.opensearch.action.ActionType;

/**
 * {@code _reconcile} as a named action, so a security plugin can grant or deny it per source index: an index-level admin
 * action on the source index. It repairs with the caller's own permissions, so a role also needs write on the chunk index.
 */
public final class ReconcileAction extends ActionType<RenderedResponse> {
    public static final String NAME = "indices:admin/strata/reconcile";
    public static final ReconcileAction INSTANCE = new ReconcileAction();

    private ReconcileAction() {
        super(NAME, RenderedResponse::new);
    }
}

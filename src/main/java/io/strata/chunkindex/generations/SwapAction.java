package io.strata.chunkindex.generations;

import io.strata.transport.RenderedResponse;
import org.opensearch.action.ActionType;

/**
 * {@code _swap} and {@code _rollback} as named actions, checked by a security plugin against the source index (index-level
 * admin actions, as {@code _rebuild}). The block, catch-up, clone and alias change run with the caller's own permissions,
 * so a role also needs, on the source, {@code indices:admin/block/add} and {@code indices:admin/settings/update}, and on the
 * generations and the name the write, create, aliases (and, for a concrete name, delete) rights ({@link GenerationSwap}).
 */
public final class SwapAction extends ActionType<RenderedResponse> {
    public static final SwapAction SWAP = new SwapAction("indices:admin/strata/swap");
    public static final SwapAction ROLLBACK = new SwapAction("indices:admin/strata/rollback");

    private SwapAction(String name) {
        super(name, RenderedResponse::new);
    }
}

package io.strata.compare;

import io.strata.transport.RenderedResponse;
import org.opensearch.action.ActionType;

/**
 * {@code _compare} as a named action: a read of both chunk indices ({@code indices:data/read/*} grants it), so a security
 * plugin refuses it, before any search, to a caller who may not read either one.
 */
public final class CompareAction extends ActionType<RenderedResponse> {
    public static final String NAME = "indices:data/read/strata/compare";
    public static final CompareAction INSTANCE = new CompareAction();

    private CompareAction() {
        super(NAME, RenderedResponse::new);
    }
}

package io.strata.search;

import org.opensearch.action.ActionRequest;
import org.opensearch.action.search.SearchAction;
import org.opensearch.action.search.SearchRequest;
import org.opensearch.action.search.SearchResponse;
import org.opensearch.action.support.ActionFilter;
import org.opensearch.action.support.ActionFilterChain;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.action.ActionResponse;
import org.opensearch.search.SearchExtBuilder;
import org.opensearch.tasks.Task;

import java.util.List;
import java.util.Locale;

/**
 * A search that asks for a context ({@code ext.strata_context}) gets one, or a 400 that says why not. Those options are read
 * by the {@code strata_context} response processor alone; a search whose pipeline has none (no {@code search_pipeline}, a
 * pipeline without it, {@code search_pipeline=_none}) used to answer its hits without a context and without a word, and
 * an application then sent its LLM no context at all. Checked on the response: which pipeline a search runs is OpenSearch's
 * to resolve (request parameter, inline pipeline, the index's default), and the processor answers every search it runs on,
 * an empty one included.
 */
public final class ContextExtFilter implements ActionFilter {
    @Override
    public int order() {
        return Integer.MAX_VALUE; // after the security filters: only a search that may run gets here
    }

    @Override
    @SuppressWarnings("unchecked")
    public <Request extends ActionRequest, Response extends ActionResponse> void apply(Task task, String action, Request request,
                                                                                       ActionListener<Response> listener,
                                                                                       ActionFilterChain<Request, Response> chain) {
        if (!SearchAction.NAME.equals(action) || !asksForContext((SearchRequest) request)) {
            chain.proceed(task, action, request, listener);
            return;
        }
        chain.proceed(task, action, request, ActionListener.wrap(response -> {
            if (hasContext((SearchResponse) response)) {
                listener.onResponse(response);
            } else {
                listener.onFailure(new IllegalArgumentException(String.format(Locale.ROOT, "[ext.%s] was given, but no [%s] "
                    + "response processor ran for this search, so there is no context to answer with: add one to the search's "
                    + "pipeline (inline \"search_pipeline\": {\"response_processors\": [{\"%s\": {}}]}, a named pipeline in "
                    + "?search_pipeline=, or the index's index.search.default_pipeline); one with ignore_failure that failed "
                    + "leaves no context either", ContextExt.NAME, ContextExt.NAME, ContextExt.NAME)));
            }
        }, listener::onFailure));
    }

    private static boolean asksForContext(SearchRequest request) {
        return request.source() != null && request.source().ext() != null
            && request.source().ext().stream().anyMatch(e -> e instanceof ContextExt c && !c.isResponse());
    }

    private static boolean hasContext(SearchResponse response) {
        List<SearchExtBuilder> exts = response.getInternalResponse() == null ? null
            : response.getInternalResponse().getSearchExtBuilders();
        return exts != null && exts.stream().anyMatch(e -> e instanceof ContextExt c && c.isResponse());
    }
}

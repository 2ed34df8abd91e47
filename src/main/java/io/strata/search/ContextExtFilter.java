package io.strata.search;

import org.apache.logging.log4j.LogManager;
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

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.reflect.Method;
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
    public <Request extends ActionRequest, Response extends ActionResponse> void apply(Task task, String action, Request request,
                                                                                       ActionListener<Response> listener,
                                                                                       ActionFilterChain<Request, Response> chain) {
        // an _msearch runs each item as a search of its own, checked here: that item fails, the others answer
        if (!SearchAction.NAME.equals(action) || ContextExt.requestOf((SearchRequest) request) == null
            || toARemoteCluster((SearchRequest) request)) {
            chain.proceed(task, action, request, listener);
            return;
        }
        chain.proceed(task, action, request, ActionListener.wrap(response -> {
            if (hasContext((SearchResponse) response)) {
                listener.onResponse(response);
            } else {
                listener.onFailure(noContext());
            }
        }, listener::onFailure));
    }

    private static IllegalArgumentException noContext() {
        return new IllegalArgumentException(String.format(Locale.ROOT, "[ext.%s] was given, but no [%s] response processor ran "
            + "for this search, so there is no context to answer with: add one to the search's pipeline (inline "
            + "\"search_pipeline\": {\"response_processors\": [{\"%s\": {}}]}, a named pipeline in ?search_pipeline=, or the "
            + "index's index.search.default_pipeline); one with ignore_failure that failed leaves no context either",
            ContextExt.NAME, ContextExt.NAME, ContextExt.NAME));
    }

    /**
     * {@code SearchRequest#getLocalClusterAlias}, package-private in OpenSearch 3.4: set on the request a cross-cluster search
     * sends to a remote cluster (and on nothing else), which is how that remote tells it from a user's search. Null when it
     * cannot be read (another OpenSearch): then no search is checked, rather than a remote one refused.
     */
    static final MethodHandle LOCAL_CLUSTER_ALIAS = localClusterAlias();

    private static MethodHandle localClusterAlias() {
        try {
            Method m = SearchRequest.class.getDeclaredMethod("getLocalClusterAlias");
            m.setAccessible(true);
            return MethodHandles.lookup().unreflect(m);
        } catch (ReflectiveOperationException | RuntimeException e) {
            LogManager.getLogger(ContextExtFilter.class).warn("cannot tell a cross-cluster search's remote requests from users' "
                + "searches; [ext.strata_context] without a [strata_context] processor is not refused", e);
            return null;
        }
    }

    static boolean toARemoteCluster(SearchRequest request) {
        if (LOCAL_CLUSTER_ALIAS == null) {
            return true;
        }
        try {
            return LOCAL_CLUSTER_ALIAS.invoke(request) != null;
        } catch (Throwable t) {
            return true;
        }
    }

    private static boolean hasContext(SearchResponse response) {
        List<SearchExtBuilder> exts = response.getInternalResponse() == null ? null
            : response.getInternalResponse().getSearchExtBuilders();
        return exts != null && exts.stream().anyMatch(e -> e instanceof ContextExt c && c.isResponse());
    }
}

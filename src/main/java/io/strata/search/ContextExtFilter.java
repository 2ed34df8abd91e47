package io.strata.search;

import org.apache.logging.log4j.LogManager;
import org.opensearch.action.ActionRequest;
import org.opensearch.action.search.SearchAction;
import org.opensearch.action.search.SearchRequest;
import org.opensearch.action.search.SearchResponse;
import org.opensearch.action.support.ActionFilter;
import org.opensearch.action.support.ActionFilterChain;
import org.opensearch.action.support.ContextPreservingActionListener;
import org.opensearch.common.util.concurrent.ThreadContext;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.action.ActionResponse;
import org.opensearch.search.SearchExtBuilder;
import org.opensearch.tasks.Task;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.reflect.Method;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * A search that asks for a context ({@code ext.strata_context}) gets one, or a 400 that says why not. Those options are read
 * by the {@code strata_context} response processor alone; a search whose pipeline has none (no {@code search_pipeline}, a
 * pipeline without it, {@code search_pipeline=_none}) used to answer its hits without a context and without a word, and
 * an application then sent its LLM no context at all. Checked on the response: which pipeline a search runs is OpenSearch's
 * to resolve (request parameter, inline pipeline, the index's default), and the processor answers every search it runs on,
 * an empty one included.
 *
 * <p>It also leaves each search's task in the thread context while the search runs ({@link #searchTask}), so that what
 * {@code strata_context} reads for the search is a child task of it (a cancel reaches it), and gives the caller its answer
 * in the caller's thread context: a search Strata sends for another one (a sub-search, a lookup) would otherwise hand its
 * own context, with its own finished task, to the rest of the outer search.
 */
public final class ContextExtFilter implements ActionFilter {
    /** The transient key of the running search's {@link Task}. */
    static final String TASK = "strata.context.search_task";

    private final Supplier<ThreadContext> threadContext;

    /** A supplier because the node creates action filters before its thread pool. */
    public ContextExtFilter(Supplier<ThreadContext> threadContext) {
        this.threadContext = threadContext;
    }

    @Override
    public int order() {
        return Integer.MAX_VALUE; // after the security filters: only a search that may run gets here
    }

    @Override
    public <Request extends ActionRequest, Response extends ActionResponse> void apply(Task task, String action, Request request,
                                                                                       ActionListener<Response> listener,
                                                                                       ActionFilterChain<Request, Response> chain) {
        if (!SearchAction.NAME.equals(action)) {
            chain.proceed(task, action, request, listener);
            return;
        }
        SearchRequest search = (SearchRequest) request;
        // an _msearch runs each item as a search of its own, checked here: that item fails, the others answer
        ActionListener<Response> checked = ContextExt.requestOf(search) == null || toARemoteCluster(search, LOCAL_CLUSTER_ALIAS) ? listener
            : ActionListener.wrap(response -> {
                if (hasContext((SearchResponse) response)) {
                    listener.onResponse(response);
                } else {
                    listener.onFailure(noContext());
                }
            }, listener::onFailure);
        ThreadContext context = threadContext.get();
        if (context == null || task == null) {
            chain.proceed(task, action, request, checked);
            return;
        }
        ActionListener<Response> inCallersContext = new ContextPreservingActionListener<>(context.newRestorableContext(true), checked);
        try (ThreadContext.StoredContext restore = context.newStoredContext(true, List.of(TASK))) {
            context.putTransient(TASK, task);
            chain.proceed(task, action, request, inCallersContext);
        }
    }

    /** The task of the search running in this thread context, or null. */
    static Task searchTask(ThreadContext context) {
        return context == null ? null : context.getTransient(TASK);
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
     * cannot be read (another OpenSearch): then every search is checked (fails closed) — a cross-cluster search's remote part
     * is refused like a search without a processor rather than a user's search answered without its context.
     */
    static final MethodHandle LOCAL_CLUSTER_ALIAS = localClusterAlias();

    private static MethodHandle localClusterAlias() {
        try {
            Method m = SearchRequest.class.getDeclaredMethod("getLocalClusterAlias");
            m.setAccessible(true);
            return MethodHandles.lookup().unreflect(m);
        } catch (ReflectiveOperationException | RuntimeException e) {
            LogManager.getLogger(ContextExtFilter.class).warn("cannot tell a cross-cluster search's remote requests from users' "
                + "searches: every search with [ext.strata_context] is checked, and a cross-cluster search's remote part fails", e);
            return null;
        }
    }

    /** Whether {@code request} is a cross-cluster search's request to this (remote) cluster, read through {@code alias}. */
    static boolean toARemoteCluster(SearchRequest request, MethodHandle alias) {
        if (alias == null) {
            return false; // cannot tell: checked, as a user's search is
        }
        try {
            return alias.invoke(request) != null;
        } catch (VirtualMachineError e) {
            throw e;
        } catch (Throwable t) {
            return false;
        }
    }

    private static boolean hasContext(SearchResponse response) {
        List<SearchExtBuilder> exts = response.getInternalResponse() == null ? null
            : response.getInternalResponse().getSearchExtBuilders();
        return exts != null && exts.stream().anyMatch(e -> e instanceof ContextExt c && c.isResponse());
    }
}

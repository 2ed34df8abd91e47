package io.strata.query;

import org.opensearch.action.ActionRequest;
import org.opensearch.action.search.SearchAction;
import org.opensearch.action.support.ActionFilter;
import org.opensearch.action.support.ActionFilterChain;
import org.opensearch.common.util.concurrent.ThreadContext;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.action.ActionResponse;
import org.opensearch.tasks.Task;

import java.util.List;
import java.util.function.Supplier;

/**
 * Leaves the task of a search in the thread context while the search action starts (its coordinator rewrite runs then),
 * so that {@link QueryPlanner} can make its sub-searches child tasks of the user's search: cancelling the search then
 * cancels them too. Each search action clears what an enclosing one left, so a sub-search sees its own task.
 */
public final class SearchTaskFilter implements ActionFilter {
    /** The transient key of the current search's {@link Task}. */
    static final String TASK = "strata.search_task";

    private final Supplier<ThreadContext> threadContext;

    /** A supplier because the node creates action filters before its thread pool. */
    public SearchTaskFilter(Supplier<ThreadContext> threadContext) {
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
        ThreadContext context = threadContext.get();
        if (!SearchAction.NAME.equals(action) || context == null || task == null) {
            chain.proceed(task, action, request, listener);
            return;
        }
        try (ThreadContext.StoredContext restore = context.newStoredContext(true, List.of(TASK))) {
            context.putTransient(TASK, task);
            chain.proceed(task, action, request, listener);
        }
    }

    /** The task of the search whose coordinator rewrite runs on this thread, or null. */
    static Task current(ThreadContext context) {
        return context == null ? null : context.getTransient(TASK);
    }
}

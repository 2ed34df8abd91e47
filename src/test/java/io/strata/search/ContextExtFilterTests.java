package io.strata.search;

import org.opensearch.action.search.SearchAction;
import org.opensearch.action.search.SearchRequest;
import org.opensearch.action.search.SearchResponse;
import org.opensearch.common.settings.Settings;
import org.opensearch.common.util.concurrent.ThreadContext;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.tasks.TaskId;
import org.opensearch.search.builder.SearchSourceBuilder;
import org.opensearch.tasks.Task;
import org.opensearch.test.OpenSearchTestCase;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Method;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The filter tells a cross-cluster search's request to a remote cluster (which carries the user's ext while the pipeline
 * runs elsewhere) from a user's search by OpenSearch's package-private local cluster alias: this OpenSearch must have it;
 * when it cannot be read, every search is checked (fails closed). It also leaves each search's task in the thread context
 * for {@code strata_context}'s lookups, and answers in the caller's context.
 */
public class ContextExtFilterTests extends OpenSearchTestCase {
    private static SearchRequest remoteRequest(SearchRequest user) throws Exception {
        // the request a cross-cluster search sends to cluster "remote" (OpenSearch builds it with this package-private factory)
        Method sub = SearchRequest.class.getDeclaredMethod("subSearchRequest", SearchRequest.class, String[].class, String.class,
            long.class, boolean.class);
        sub.setAccessible(true);
        return (SearchRequest) sub.invoke(null, user, new String[] { "books-chunks" }, "remote", 0L, true);
    }

    public void testTheLocalClusterAlias_isReadable_andSetOnlyOnARemoteClustersRequest() throws Exception {
        assertNotNull("SearchRequest#getLocalClusterAlias is gone: every search with ext.strata_context would be checked, a "
            + "cross-cluster search's remote part refused", ContextExtFilter.LOCAL_CLUSTER_ALIAS);
        SearchRequest user = new SearchRequest("books-chunks");
        assertFalse(ContextExtFilter.toARemoteCluster(user, ContextExtFilter.LOCAL_CLUSTER_ALIAS));
        assertTrue(ContextExtFilter.toARemoteCluster(remoteRequest(user), ContextExtFilter.LOCAL_CLUSTER_ALIAS));
    }

    public void testWhenTheAliasCannotBeRead_everySearchIsChecked() throws Exception {
        SearchRequest remote = remoteRequest(new SearchRequest("books-chunks"));
        // no handle (another OpenSearch), or one that fails: the check stays on rather than switching itself off
        assertFalse(ContextExtFilter.toARemoteCluster(remote, null));
        MethodHandle failing = MethodHandles.dropArguments(MethodHandles.throwException(String.class, IllegalStateException.class)
            .bindTo(new IllegalStateException("changed")), 0, SearchRequest.class);
        assertEquals(MethodType.methodType(String.class, SearchRequest.class), failing.type());
        assertFalse(ContextExtFilter.toARemoteCluster(remote, failing));
    }

    public void testASearchWithTheExtAndNoContext_isRefused() {
        ThreadContext context = new ThreadContext(Settings.EMPTY);
        ContextExtFilter filter = new ContextExtFilter(() -> context);
        SearchRequest search = new SearchRequest("books-chunks").source(new SearchSourceBuilder().ext(List.of(requestExt())));
        AtomicReference<Exception> failed = new AtomicReference<>();
        filter.apply(task(1), SearchAction.NAME, search, ActionListener.wrap(r -> fail("answered without a context"), failed::set),
            (t, a, r, l) -> l.onResponse(emptyResponse()));
        assertNotNull(failed.get());
        assertTrue(failed.get().getMessage(), failed.get().getMessage().contains("no [strata_context] response processor ran"));
    }

    public void testEachSearch_runsWithItsTaskInTheThreadContext_andAnswersInTheCallersContext() {
        ThreadContext context = new ThreadContext(Settings.EMPTY);
        ContextExtFilter filter = new ContextExtFilter(() -> context);
        Task outer = task(1);
        Task inner = task(2);
        AtomicReference<Task> duringOuter = new AtomicReference<>();
        AtomicReference<Task> duringInner = new AtomicReference<>();
        AtomicReference<Task> whenInnerAnswered = new AtomicReference<>();
        AtomicReference<Task> whenOuterAnswered = new AtomicReference<>();
        filter.apply(outer, SearchAction.NAME, new SearchRequest("books-chunks"), ActionListener.wrap(
            r -> whenOuterAnswered.set(ContextExtFilter.searchTask(context)), e -> fail(e.toString())), (t, a, r, l) -> {
                duringOuter.set(ContextExtFilter.searchTask(context));
                // a search sent for this one (a sub-search, a lookup): its answer comes back in its own context
                filter.apply(inner, SearchAction.NAME, new SearchRequest("books-chunks"), ActionListener.wrap(innerResponse -> {
                    whenInnerAnswered.set(ContextExtFilter.searchTask(context));
                    l.onResponse(innerResponse);
                }, e -> fail(e.toString())), (t2, a2, r2, l2) -> {
                    duringInner.set(ContextExtFilter.searchTask(context));
                    l2.onResponse(emptyResponse());
                });
            });
        assertSame(outer, duringOuter.get());
        assertSame(inner, duringInner.get());
        assertSame("the outer search continues with its own task, not the finished inner one", outer, whenInnerAnswered.get());
        assertNull(whenOuterAnswered.get());
        assertNull(ContextExtFilter.searchTask(context));
    }

    private ContextExt requestExt() {
        try (var parser = createParser(org.opensearch.common.xcontent.json.JsonXContent.jsonXContent, "{\"budget\": 64}")) {
            parser.nextToken();
            return ContextExt.parse(parser);
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
    }

    private static Task task(long id) {
        return new Task(id, "transport", SearchAction.NAME, "", TaskId.EMPTY_TASK_ID, Map.of());
    }

    private static SearchResponse emptyResponse() {
        return new SearchResponse(org.opensearch.search.internal.InternalSearchResponse.empty(), null, 1, 1, 0, 0L,
            org.opensearch.action.search.ShardSearchFailure.EMPTY_ARRAY, SearchResponse.Clusters.EMPTY);
    }
}

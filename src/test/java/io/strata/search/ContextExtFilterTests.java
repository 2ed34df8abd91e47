package io.strata.search;

import org.opensearch.action.search.SearchRequest;
import org.opensearch.test.OpenSearchTestCase;

import java.lang.reflect.Method;

/**
 * The filter tells a cross-cluster search's request to a remote cluster (which carries the user's ext while the pipeline
 * runs elsewhere) from a user's search by OpenSearch's package-private local cluster alias: this OpenSearch must have it,
 * or the filter checks nothing.
 */
public class ContextExtFilterTests extends OpenSearchTestCase {
    public void testTheLocalClusterAlias_isReadable_andSetOnlyOnARemoteClustersRequest() throws Exception {
        assertNotNull("SearchRequest#getLocalClusterAlias is gone: the filter would check no search", ContextExtFilter.LOCAL_CLUSTER_ALIAS);
        SearchRequest user = new SearchRequest("books-chunks");
        assertFalse(ContextExtFilter.toARemoteCluster(user));
        // the request a cross-cluster search sends to cluster "remote" (OpenSearch builds it with this package-private factory)
        Method sub = SearchRequest.class.getDeclaredMethod("subSearchRequest", SearchRequest.class, String[].class, String.class,
            long.class, boolean.class);
        sub.setAccessible(true);
        SearchRequest remote = (SearchRequest) sub.invoke(null, user, new String[] { "books-chunks" }, "remote", 0L, true);
        assertTrue(ContextExtFilter.toARemoteCluster(remote));
    }
}

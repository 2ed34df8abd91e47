package io.strata.query;

import org.apache.lucene.search.TotalHits;
import org.junit.Test;
import org.opensearch.OpenSearchStatusException;
import org.opensearch.action.search.SearchRequest;
import org.opensearch.action.search.SearchResponse;
import org.opensearch.action.search.SearchType;
import org.opensearch.action.search.ShardSearchFailure;
import org.opensearch.action.support.IndicesOptions;
import org.opensearch.common.unit.TimeValue;
import org.opensearch.core.rest.RestStatus;
import org.opensearch.core.tasks.TaskId;
import org.opensearch.index.query.QueryBuilders;
import org.opensearch.search.SearchHit;
import org.opensearch.search.SearchHits;
import org.opensearch.search.builder.PointInTimeBuilder;
import org.opensearch.search.builder.SearchSourceBuilder;
import org.opensearch.search.internal.InternalSearchResponse;
import org.opensearch.tasks.Task;

import java.util.Map;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

/** The sub-searches are made like the user's request, as child tasks, and never yield a partial side. */
public class SubSearchesTests {
    private static final Task TASK = new Task(42, "transport", "indices:data/read/search", "", TaskId.EMPTY_TASK_ID, Map.of());

    @Test
    public void testRequest_copiesTheUsersIndicesRoutingTimeout_isAChildTask_withoutPipelineOrPartialResults() {
        SearchRequest user = new SearchRequest("books-chunks", "alias").routing("r1")
            .indicesOptions(IndicesOptions.strictExpandOpen()).source(new SearchSourceBuilder().timeout(TimeValue.timeValueSeconds(7)));
        SubSearches searches = SubSearches.of(user, TASK, "node-a", null);
        SearchRequest sub = searches.request(QueryBuilders.matchAllQuery(), 5, SearchType.DFS_QUERY_THEN_FETCH);
        assertArrayEquals(new String[] { "books-chunks", "alias" }, sub.indices());
        assertEquals("r1", sub.routing());
        assertEquals(IndicesOptions.strictExpandOpen(), sub.indicesOptions());
        assertEquals(TimeValue.timeValueSeconds(7), sub.source().timeout());
        assertEquals(new TaskId("node-a", 42), sub.getParentTask());
        assertEquals("_none", sub.pipeline());
        assertFalse(sub.allowPartialSearchResults());
        assertEquals(SearchType.DFS_QUERY_THEN_FETCH, sub.searchType());
        assertEquals(5, sub.source().size());
        assertEquals(java.util.List.of(SubSearches.STATS_GROUP), sub.source().stats());
        // one generated preference for the sub-searches and the user's lookup: the same shard copies
        assertNotNull(user.preference());
        assertEquals(user.preference(), sub.preference());
        assertFalse(user.preference().startsWith("_"));
    }

    @Test
    public void testRequest_keepsTheUsersPreference() {
        SearchRequest user = new SearchRequest("i").preference("_local");
        SearchRequest sub = SubSearches.of(user, null, null, null).request(QueryBuilders.matchAllQuery(), 1, SearchType.QUERY_THEN_FETCH);
        assertEquals("_local", user.preference());
        assertEquals("_local", sub.preference());
        assertEquals(TaskId.EMPTY_TASK_ID, sub.getParentTask());
    }

    @Test
    public void testRequest_withAPointInTime_readsThePit_andNamesNoIndex() {
        SearchRequest user = new SearchRequest().source(new SearchSourceBuilder()
            .pointInTimeBuilder(new PointInTimeBuilder("pit-id").setKeepAlive(TimeValue.timeValueMinutes(3))));
        SearchRequest sub = SubSearches.of(user, TASK, "n", null).request(QueryBuilders.matchAllQuery(), 3, SearchType.QUERY_THEN_FETCH);
        assertEquals(0, sub.indices().length);
        assertEquals("pit-id", sub.pointInTimeBuilder().getId());
        assertEquals(TimeValue.timeValueMinutes(3), sub.pointInTimeBuilder().getKeepAlive());
        assertNull(sub.preference());
        assertNull(user.preference());
    }

    @Test
    public void testLexicalType_followsTheUsersDfs() {
        SearchRequest dfs = new SearchRequest("i").searchType(SearchType.DFS_QUERY_THEN_FETCH);
        assertEquals(SearchType.DFS_QUERY_THEN_FETCH, SubSearches.of(dfs, null, null, null).lexicalType());
        assertEquals(SearchType.QUERY_THEN_FETCH, SubSearches.of(new SearchRequest("i"), null, null, null).lexicalType());
    }

    private static SearchResponse response(boolean timedOut, ShardSearchFailure... failures) {
        SearchHits hits = new SearchHits(new SearchHit[0], new TotalHits(0, TotalHits.Relation.EQUAL_TO), Float.NaN);
        InternalSearchResponse internal = new InternalSearchResponse(hits, null, null, null, timedOut, null, 1);
        return new SearchResponse(internal, null, 3, 3 - failures.length, 0, 5, failures, SearchResponse.Clusters.EMPTY);
    }

    @Test
    public void testIncomplete_aTimedOutOrPartlyFailedSide_isAnErrorNamingTheSide() {
        OpenSearchStatusException timedOut = SubSearches.incomplete("dense", response(true));
        assertEquals(RestStatus.GATEWAY_TIMEOUT, timedOut.status());
        assertTrue(timedOut.getMessage(), timedOut.getMessage().contains("[multi_granular] its [dense] search timed out"));
        OpenSearchStatusException failed = SubSearches.incomplete("lexical", response(false,
            new ShardSearchFailure(new IllegalArgumentException("boom"))));
        assertTrue(failed.getMessage(), failed.getMessage().contains("its [lexical] search failed on [1] of [3] shards, so no partial"));
        assertTrue(failed.getMessage(), failed.getMessage().contains("boom"));
    }
}

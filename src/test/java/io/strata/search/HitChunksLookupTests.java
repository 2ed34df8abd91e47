package io.strata.search;

import org.opensearch.action.search.SearchRequest;
import org.opensearch.common.unit.TimeValue;
import org.opensearch.core.common.bytes.BytesArray;
import org.opensearch.core.tasks.TaskId;
import org.opensearch.index.query.BoolQueryBuilder;
import org.opensearch.index.query.IdsQueryBuilder;
import org.opensearch.index.query.QueryBuilder;
import org.opensearch.index.query.TermQueryBuilder;
import org.opensearch.search.SearchHit;
import org.opensearch.search.builder.SearchSourceBuilder;
import org.opensearch.test.OpenSearchTestCase;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The searches {@code strata_context} reads the hits' parents with: every parent of every index asked for once, under a
 * filter on its own index (one id in two chunk indices is two parents, and neither takes the other's place in the size), in
 * batches within a result window, each a child task of the search with the search's time-out.
 */
public class HitChunksLookupTests extends OpenSearchTestCase {
    private static SearchHit hit(String index, String id) {
        SearchHit h = new SearchHit(0, id, Map.of(), Map.of());
        h.shard(new org.opensearch.search.SearchShardTarget("n", new org.opensearch.core.index.shard.ShardId(index, "_na_", 0), null,
            null));
        h.sourceRef(new BytesArray("{}"));
        return h;
    }

    /** The (index, id) pairs a lookup query names. */
    private static Set<String> pairs(QueryBuilder q) {
        Set<String> out = new HashSet<>();
        for (QueryBuilder should : ((BoolQueryBuilder) q).should()) {
            BoolQueryBuilder b = (BoolQueryBuilder) should;
            String index = (String) ((TermQueryBuilder) b.filter().get(0)).value();
            for (String id : ((IdsQueryBuilder) b.filter().get(1)).ids()) {
                out.add(index + "/" + id);
            }
        }
        return out;
    }

    public void testLookups_ofOneIdInTwoIndices_readBothParentsAndTheirNeighbours_eachOnce() {
        // a rollover alias over kb-000001-chunks and kb-000002-chunks: the same source ids in both
        List<SearchHit> hits = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            hits.add(hit("kb-000001-chunks", "doc" + i + ":1"));
            hits.add(hit("kb-000002-chunks", "doc" + i + ":1"));
        }
        HitChunks chunks = HitChunks.of(hits.toArray(SearchHit[]::new), true);
        assertEquals(2 * 30 * 3, chunks.parents());
        Set<String> expected = new HashSet<>();
        for (String index : List.of("kb-000001-chunks", "kb-000002-chunks")) {
            for (int i = 0; i < 30; i++) {
                for (int o = 0; o <= 2; o++) {
                    expected.add(index + "/doc" + i + ":" + o);
                }
            }
        }
        Set<String> asked = new HashSet<>();
        int sizes = 0;
        for (Map.Entry<QueryBuilder, Integer> q : chunks.lookups(40)) {
            Set<String> these = pairs(q.getKey());
            assertEquals("each search's size is the parents it names", these.size(), (int) q.getValue());
            assertTrue("at most a batch per search", q.getValue() <= 40);
            assertTrue("no parent asked for twice", java.util.Collections.disjoint(asked, these));
            asked.addAll(these);
            sizes += q.getValue();
        }
        assertEquals(expected, asked);
        assertEquals(180, sizes);
    }

    public void testLookups_areChildTasksOfTheSearch_withItsTimeout_noPipeline_noPartialResults() {
        HitChunks chunks = HitChunks.of(new SearchHit[] {hit("books-chunks", "emma:3"), hit("books-chunks", "emma:7")}, true);
        SearchRequest user = new SearchRequest("books").source(new SearchSourceBuilder().timeout(TimeValue.timeValueMillis(750)));
        user.setCancelAfterTimeInterval(TimeValue.timeValueSeconds(3));
        user.routing("r1");
        TaskId search = new TaskId("node-a", 42);
        List<SearchRequest> lookups = StrataContextProcessor.lookups(user, chunks, search, 4);
        assertEquals(2, lookups.size()); // 6 parents, 4 per search
        for (SearchRequest l : lookups) {
            assertEquals(search, l.getParentTask());
            assertEquals(TimeValue.timeValueMillis(750), l.source().timeout());
            assertEquals(TimeValue.timeValueSeconds(3), l.getCancelAfterTimeInterval());
            assertEquals("_none", l.pipeline());
            assertFalse(l.allowPartialSearchResults());
            assertEquals("r1", l.routing());
            assertArrayEquals(new String[] {"books"}, l.indices());
        }
    }
}

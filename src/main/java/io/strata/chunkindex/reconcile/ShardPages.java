package io.strata.chunkindex.reconcile;

import org.opensearch.action.search.SearchRequest;
import org.opensearch.cluster.metadata.IndexMetadata;
import org.opensearch.cluster.service.ClusterService;
import org.opensearch.core.action.ActionListener;
import org.opensearch.index.query.QueryBuilder;
import org.opensearch.search.SearchHit;
import org.opensearch.search.builder.SearchSourceBuilder;
import org.opensearch.search.sort.SortBuilders;
import org.opensearch.search.sort.SortOrder;
import org.opensearch.transport.client.Client;

import java.util.function.BiConsumer;

/**
 * Pages through the documents of an index without a search context that could expire while a page is being worked on (a
 * scroll or point in time kept for minutes while large documents are re-embedded): shard by shard, in {@code _seq_no}
 * order (unique within a shard), each page an independent search after the last sequence number seen. A document written
 * meanwhile gets a higher sequence number and is met again, later; none is skipped.
 */
final class ShardPages {
    private final Client client;
    private final ClusterService clusterService;

    ShardPages(Client client, ClusterService clusterService) {
        this.client = client;
        this.clusterService = clusterService;
    }

    /** Feeds the pages of {@code query}'s hits (with their versions and sequence numbers) to {@code page}, one after the other. */
    void forEach(String index, QueryBuilder query, String[] includes, int size, BiConsumer<SearchHit[], ActionListener<Void>> page,
                 ActionListener<Void> listener) {
        IndexMetadata metadata = clusterService.state().metadata().index(index);
        if (metadata == null) {
            listener.onResponse(null);
            return;
        }
        shard(index, 0, metadata.getNumberOfShards(), -1, query, includes, size, page, listener);
    }

    private void shard(String index, int shard, int shards, long after, QueryBuilder query, String[] includes, int size,
                       BiConsumer<SearchHit[], ActionListener<Void>> page, ActionListener<Void> listener) {
        if (shard == shards) {
            listener.onResponse(null);
            return;
        }
        SearchSourceBuilder source = new SearchSourceBuilder().size(size).query(query)
            // an index without any mapping yet (nothing ever written) has no _seq_no to sort on: it pages as empty
            .sort(SortBuilders.fieldSort("_seq_no").order(SortOrder.ASC).unmappedType("long")).version(true)
            .seqNoAndPrimaryTerm(true).fetchSource(includes, null);
        if (after >= 0) {
            source.searchAfter(new Object[] { after });
        }
        SearchRequest search = new SearchRequest(index).preference("_shards:" + shard).source(source);
        client.search(search, ActionListener.wrap(response -> {
            SearchHit[] hits = response.getHits().getHits();
            if (hits.length == 0) {
                shard(index, shard + 1, shards, -1, query, includes, size, page, listener);
                return;
            }
            long last = ((Number) hits[hits.length - 1].getSortValues()[0]).longValue();
            page.accept(hits, ActionListener.wrap(v -> {
                if (hits.length < size) {
                    shard(index, shard + 1, shards, -1, query, includes, size, page, listener);
                } else {
                    shard(index, shard, shards, last, query, includes, size, page, listener);
                }
            }, listener::onFailure));
        }, listener::onFailure));
    }
}

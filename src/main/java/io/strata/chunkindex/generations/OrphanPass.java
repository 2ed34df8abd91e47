package io.strata.chunkindex.generations;

import io.strata.chunkindex.store.ChunkCommit;
import io.strata.chunkindex.setup.ChunkIndexSetup;
import io.strata.chunkindex.ChunkKey;
import org.opensearch.action.get.MultiGetItemResponse;
import org.opensearch.action.get.MultiGetRequest;
import org.opensearch.action.search.SearchRequest;
import org.opensearch.cluster.metadata.IndexMetadata;
import org.opensearch.cluster.service.ClusterService;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.index.Index;
import org.opensearch.index.query.QueryBuilder;
import org.opensearch.index.query.QueryBuilders;
import org.opensearch.search.SearchHit;
import org.opensearch.search.builder.SearchSourceBuilder;
import org.opensearch.search.fetch.subphase.FetchSourceContext;
import org.opensearch.search.sort.SortBuilders;
import org.opensearch.search.sort.SortOrder;
import org.opensearch.transport.client.Client;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The chunks of documents deleted after a pass of {@link GenerationBuilder} wrote them: each chunk 0 of the generation,
 * page by page per shard, whose source document a realtime multi-get (with its routing) finds gone, is deleted with the
 * rest of its document's chunks ({@link ChunkCommit#delete}) at or above its own version, as the caller.
 */
final class OrphanPass {
    private final Client client;
    private final ClusterService clusterService;
    private final ChunkIndexSetup setup;
    private final ChunkCommit commit;

    static final int PAGE = 500;

    OrphanPass(Client client, ClusterService clusterService, ChunkIndexSetup setup, ChunkCommit commit) {
        this.client = client;
        this.clusterService = clusterService;
        this.setup = setup;
        this.commit = commit;
    }

    void run(Index source, String target, RebuildReport report, ActionListener<Void> end) {
        if (clusterService.state().metadata().index(target) == null) {
            end.onResponse(null); // no document had chunks: nothing was created
            return;
        }
        client.admin().indices().prepareRefresh(target).execute(ActionListener.wrap(
            r -> orphanPage(source, target, report, -1, 0, end), end::onFailure));
    }

    private void orphanPage(Index source, String target, RebuildReport report, long after, int shard, ActionListener<Void> end) {
        IndexMetadata generation = clusterService.state().metadata().index(target);
        if (generation == null || shard == generation.getNumberOfShards()) {
            end.onResponse(null);
            return;
        }
        if (report.cancelled()) {
            end.onFailure(report.cancellation());
            return;
        }
        QueryBuilder first = QueryBuilders.termQuery("ordinal", 0);
        SearchSourceBuilder page = new SearchSourceBuilder().size(PAGE).query(first).version(true)
            .sort(SortBuilders.fieldSort("_seq_no").order(SortOrder.ASC).unmappedType("long"))
            .fetchSource(new String[] { "source_id", "source_routing" }, null);
        if (after >= 0) {
            page.searchAfter(new Object[] { after });
        }
        client.search(new SearchRequest(target).preference("_shards:" + shard).source(page), ActionListener.wrap(r -> {
            SearchHit[] hits = r.getHits().getHits();
            if (hits.length == 0) {
                orphanPage(source, target, report, -1, shard + 1, end);
                return;
            }
            long last = ((Number) hits[hits.length - 1].getSortValues()[0]).longValue();
            MultiGetRequest get = new MultiGetRequest().realtime(true);
            for (SearchHit hit : hits) {
                Map<String, Object> chunk = hit.getSourceAsMap();
                get.add(new MultiGetRequest.Item(source.getName(), String.valueOf(chunk.get("source_id")))
                    .routing(chunk.get("source_routing") instanceof String s ? s : null)
                    .fetchSourceContext(FetchSourceContext.DO_NOT_FETCH_SOURCE));
            }
            client.multiGet(get, ActionListener.wrap(sources -> {
                MultiGetItemResponse[] items = sources.getResponses();
                List<ChunkKey> gone = new ArrayList<>();
                List<Long> seqNos = new ArrayList<>();
                for (int i = 0; i < items.length; i++) {
                    if (items[i].isFailed() || items[i].getResponse().isExists()) {
                        continue;
                    }
                    Map<String, Object> chunk = hits[i].getSourceAsMap();
                    gone.add(setup.keyOf(source.getName(), String.valueOf(chunk.get("source_id")),
                        chunk.get("source_routing") instanceof String s ? s : null));
                    // at or above the chunk's own version: a document re-created since has a higher _seq_no and wins
                    seqNos.add((hits[i].getVersion() + 1) / 2);
                }
                ActionListener<Void> next = ActionListener.notifyOnce(
                    ActionListener.wrap(v -> orphanPage(source, target, report, last, shard, end), end::onFailure));
                if (gone.isEmpty()) {
                    next.onResponse(null);
                    return;
                }
                AtomicInteger left = new AtomicInteger(gone.size());
                for (int i = 0; i < gone.size(); i++) {
                    commit.delete(target, gone.get(i), seqNos.get(i), ActionListener.wrap(result -> {
                        report.orphans.incrementAndGet();
                        if (left.decrementAndGet() == 0) {
                            next.onResponse(null);
                        }
                    }, next::onFailure));
                }
            }, end::onFailure));
        }, end::onFailure));
    }
}

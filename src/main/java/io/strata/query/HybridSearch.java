package io.strata.query;

import io.strata.model.ModelRef;
import io.strata.chunking.Embedder;
import io.strata.chunkindex.ChunkDocuments;
import org.opensearch.action.IndicesRequest;
import org.opensearch.action.search.SearchRequest;
import org.opensearch.action.search.SearchResponse;
import org.opensearch.action.search.SearchType;
import org.opensearch.core.action.ActionListener;
import org.opensearch.index.query.QueryBuilder;
import org.opensearch.search.SearchHit;
import org.opensearch.search.SearchHits;
import org.opensearch.search.builder.SearchSourceBuilder;
import org.opensearch.transport.client.Client;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The coordinator's part of a hybrid {@code multi_granular} query. Two searches over the same indices (with the caller's
 * permissions, routing, preference and index options, and no search pipeline) give each side's global top-{@code window}
 * parents: the lexical multi-granular MAX with {@code dfs_query_then_fetch}, so BM25 uses the term statistics of all
 * shards, and, once {@code query_text} is embedded, the dense multi-granular MAX (each shard's top {@code window}, merged:
 * the exact global top). The lexical search starts at once and overlaps the embedding. {@link Fusion} then turns the two
 * lists into the k fused parents: every input is global, so the result does not depend on how the index is sharded.
 */
final class HybridSearch {
    private final String queryText;
    private final ModelRef model;
    private final List<Integer> levels;
    private final QueryBuilder filter;
    private final int k;
    private final int window;
    private final int denseCandidates;
    private final Fusion fusion;
    private final boolean explainChild;
    private final QueryServices services;

    HybridSearch(String queryText, ModelRef model, List<Integer> levels, QueryBuilder filter, int k, Integer numCandidates, Fusion fusion,
                 boolean explainChild, QueryServices services) {
        this.queryText = queryText;
        this.model = model;
        this.levels = levels;
        this.filter = filter;
        this.k = k;
        this.window = fusion.windowFor(k);
        // the dense side asks each shard for `window` parents; its graph search is widened as the dense mode's default is
        this.denseCandidates = Math.min(MultiGranularQueryBuilder.MAX_K,
            Math.max(numCandidates == null ? 0 : numCandidates, MultiGranularQueryBuilder.defaultCandidates(window)));
        this.fusion = fusion;
        this.explainChild = explainChild;
        this.services = services;
    }

    /** Runs both sides and fuses them; the listener gets the query the shards run. */
    void run(Client client, IndicesRequest original, ActionListener<FusedParentsQueryBuilder> listener) {
        ActionListener<FusedParentsQueryBuilder> once = ActionListener.notifyOnce(listener);
        AtomicReference<List<Fusion.SideHit>> dense = new AtomicReference<>();
        AtomicReference<List<Fusion.SideHit>> lexical = new AtomicReference<>();
        AtomicReference<float[]> vector = new AtomicReference<>();
        Map<String, FusedParentsQueryBuilder.SideChunk> lexicalChunks = new HashMap<>();
        AtomicInteger pending = new AtomicInteger(2);
        Runnable done = () -> {
            if (pending.decrementAndGet() == 0) {
                try {
                    once.onResponse(fuse(dense.get(), lexical.get(), lexicalChunks, vector.get()));
                } catch (RuntimeException e) {
                    once.onFailure(e);
                }
            }
        };
        client.search(request(original, lexicalQuery(), SearchType.DFS_QUERY_THEN_FETCH), ActionListener.wrap(response -> {
            synchronized (lexicalChunks) {
                lexical.set(sideHits(response, explainChild ? lexicalChunks : null));
            }
            done.run();
        }, once::onFailure));
        services.inference().get().embed(model, List.of(queryText), Embedder.Purpose.QUERY, ActionListener.wrap(vectors -> {
            services.stats().query().embedded();
            float[] v = vectors.get(0);
            vector.set(v);
            client.search(request(original, denseQuery(v), SearchType.QUERY_THEN_FETCH), ActionListener.wrap(response -> {
                dense.set(sideHits(response, null));
                done.run();
            }, once::onFailure));
        }, once::onFailure));
    }

    private FusedParentsQueryBuilder fuse(List<Fusion.SideHit> dense, List<Fusion.SideHit> lexical,
                                          Map<String, FusedParentsQueryBuilder.SideChunk> lexicalChunks, float[] vector) {
        List<FusedParentsQueryBuilder.Parent> parents = new ArrayList<>();
        synchronized (lexicalChunks) {
            for (Fusion.Fused f : fusion.fuse(dense, lexical, k)) {
                parents.add(new FusedParentsQueryBuilder.Parent(f, lexicalChunks.get(key(f.index(), f.id()))));
            }
        }
        return new FusedParentsQueryBuilder(parents, explainChild ? vector : null, countedLevels(), explainChild);
    }

    private List<Integer> countedLevels() {
        if (levels != null) {
            return levels;
        }
        List<Integer> all = new ArrayList<>();
        for (int l = 0; l <= MultiGranularQueryBuilder.MAX_LEVEL; l++) {
            all.add(l);
        }
        return all;
    }

    private MultiGranularQueryBuilder lexicalQuery() {
        return MultiGranularQueryBuilder.of(null, null, queryText, null, levels, filter, explainChild, null, services)
            .mode(MultiGranularQueryBuilder.Mode.LEXICAL);
    }

    private MultiGranularQueryBuilder denseQuery(float[] v) {
        return MultiGranularQueryBuilder.of(null, v, null, window, levels, filter, false, null, services)
            .mode(MultiGranularQueryBuilder.Mode.DENSE).numCandidates(denseCandidates);
    }

    /** A search of the same indices as the user's, for one side: ids and scores only. */
    private SearchRequest request(IndicesRequest original, QueryBuilder query, SearchType type) {
        SearchRequest request = new SearchRequest(original.indices()).indicesOptions(original.indicesOptions()).searchType(type);
        if (original instanceof SearchRequest user) {
            request.routing(user.routing()).preference(user.preference());
            if (user.allowPartialSearchResults() != null) {
                request.allowPartialSearchResults(user.allowPartialSearchResults());
            }
        }
        // the user's request already went through its search pipeline; the sides must not go through it again
        request.pipeline("_none");
        request.source(new SearchSourceBuilder().query(query).size(window).fetchSource(false).trackTotalHits(false));
        return request;
    }

    /**
     * The side's parents, best first; with {@code chunks}, also the lexical best chunk of each: the inner hit (the best
     * child) unless the parent's own text scored higher (the hit's score is the MAX of both).
     */
    private static List<Fusion.SideHit> sideHits(SearchResponse response, Map<String, FusedParentsQueryBuilder.SideChunk> chunks) {
        List<Fusion.SideHit> out = new ArrayList<>();
        for (SearchHit hit : response.getHits().getHits()) {
            out.add(new Fusion.SideHit(hit.getIndex(), hit.getId(), hit.getScore()));
            if (chunks != null) {
                chunks.put(key(hit.getIndex(), hit.getId()), lexicalChunk(hit));
            }
        }
        return out;
    }

    static FusedParentsQueryBuilder.SideChunk lexicalChunk(SearchHit hit) {
        SearchHits inner = hit.getInnerHits() == null ? null : hit.getInnerHits().get(BestChildFetchSubPhase.FIELD);
        if (inner != null && inner.getHits().length > 0) {
            SearchHit child = inner.getHits()[0];
            // a nested inner hit's _source is the child object itself
            Map<String, Object> c = child.getSourceAsMap();
            if (!(hit.getScore() > child.getScore()) && c != null && c.get(ChunkDocuments.LEVEL) instanceof Number level
                && c.get(ChunkDocuments.ORDINAL) instanceof Number ordinal) {
                return new FusedParentsQueryBuilder.SideChunk(level.intValue(), ordinal.intValue(), child.getScore());
            }
        }
        return new FusedParentsQueryBuilder.SideChunk(0, 0, hit.getScore());
    }

    private static String key(String index, String id) {
        return index + '\u0000' + id;
    }
}

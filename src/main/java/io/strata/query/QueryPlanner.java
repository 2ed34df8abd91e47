package io.strata.query;

import io.strata.chunkindex.ChunkDocuments;
import io.strata.chunkindex.ChunkIndexMeta;
import io.strata.chunkindex.registry.ChunkIndexRegistry;
import io.strata.chunking.Embedder;
import io.strata.model.ModelRef;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.apache.lucene.util.SetOnce;
import org.opensearch.action.IndicesRequest;
import org.opensearch.action.admin.indices.validate.query.ValidateQueryRequest;
import org.opensearch.action.explain.ExplainRequest;
import org.opensearch.action.search.SearchRequest;
import org.opensearch.action.search.SearchResponse;
import org.opensearch.action.search.SearchType;
import org.opensearch.cluster.ClusterState;
import org.opensearch.cluster.metadata.IndexAbstraction;
import org.opensearch.cluster.metadata.IndexMetadata;
import org.opensearch.cluster.service.ClusterService;
import org.opensearch.common.util.concurrent.ThreadContext;
import org.opensearch.core.action.ActionListener;
import org.opensearch.common.document.DocumentField;
import org.opensearch.core.index.Index;
import org.opensearch.index.mapper.SeqNoFieldMapper;
import org.opensearch.index.query.QueryBuilder;
import org.opensearch.index.query.QueryBuilders;
import org.opensearch.index.query.QueryCoordinatorContext;
import org.opensearch.index.query.QueryRewriteContext;
import org.opensearch.search.SearchHit;
import org.opensearch.search.SearchService;
import org.opensearch.search.SearchHits;
import org.opensearch.transport.client.Client;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The coordinator's planning of a {@code multi_granular} query, during the request's rewrite (no search thread waits):
 * its restriction is read once from the request's query tree ({@link Restrictions}) and added, with the query's own
 * {@code filter}, to sub-searches ({@link SubSearches}) that compute its global top {@code k} parents; the query becomes
 * those parents ({@link PlannedParentsQueryBuilder}), which the shards of the request only look up by {@code _id}.
 * <ul>
 *   <li>dense: the question is embedded, then one sub-search whose shards run the graph search for their {@code k} best
 *   parents ({@link DenseParentsQueryBuilder}) keeps the global {@code k} best;</li>
 *   <li>lexical: one sub-search of the BM25 MAX ({@link LexicalForm}) for the global {@code k} best, with per-shard BM25
 *   statistics unless the request is {@code dfs_query_then_fetch} (as any {@code match});</li>
 *   <li>hybrid: the lexical sub-search ({@code dfs_query_then_fetch}: global statistics) starts at once, overlapping the
 *   embedding; then the dense one; each side's global top {@code window} is fused by {@link Fusion} into {@code k}.</li>
 * </ul>
 * A request of one shard that nothing restricts skips the planning's graph search: the dense query runs in the
 * request ({@link #directDense}); the hybrid one keeps its lexical sub-search and that shard fuses ({@link #hybridShard}).
 * Every input is global, so a 1-shard and a 3-shard index give the same parents with the same scores (up to float
 * rounding). The dense side is an approximate (HNSW) search: exact are the MAX over what it found, the merge and the fusion.
 */
final class QueryPlanner {
    /** At debug: each planning's phases in ms since it started ({@code logger.io.strata.query.QueryPlanner: debug}). */
    private static final Logger logger = LogManager.getLogger(QueryPlanner.class);

    private final MultiGranularQueryBuilder query;
    private final QueryServices services;
    private final MultiGranularQueryBuilder.Mode mode;
    private final ModelRef model;
    /** The query's own filter AND its restriction: what every sub-search is filtered with. */
    private final QueryBuilder sideFilter;
    private final SubSearches searches;
    /** The concrete indices this planning searches, as the cluster state resolved the request's names when it began. */
    private final PinnedIndices pinned;
    /** The first sub-search hit's index that is not one of {@link #pinned}'s: the names moved under the sub-searches. */
    private final AtomicReference<String> foreign = new AtomicReference<>();

    private QueryPlanner(MultiGranularQueryBuilder query, QueryServices services, MultiGranularQueryBuilder.Mode mode, ModelRef model,
                         QueryBuilder sideFilter, SubSearches searches, PinnedIndices pinned) {
        this.query = query;
        this.services = services;
        this.mode = mode;
        this.model = model;
        this.sideFilter = sideFilter;
        this.searches = searches;
        this.pinned = pinned;
    }

    /** Validates {@code query} where it stands and registers its planning; answers the query waiting for it. */
    static MultiGranularQueryBuilder plan(MultiGranularQueryBuilder query, QueryCoordinatorContext coordinator, QueryRewriteContext context,
                                          QueryServices services) {
        IndicesRequest request = coordinator.getSearchRequest();
        ClusterService cluster = services.clusterService().get();
        if (request instanceof SearchRequest search
            && !ClusterScope.plannedHere(search, () -> ClusterScope.remoteClusterNames(cluster.getSettings(), cluster.state()))) {
            return query; // OpenSearch forwards the whole request to the one remote cluster it reads, whose coordinator plans it
        }
        QueryLimits.check(query, cluster.getClusterSettings()); // before anything is embedded or searched
        QueryBuilder root = rootQuery(request);
        // a request whose query tree is not known gets a 400 (the query is not found in it), never no restriction
        QueryBuilder restriction = Restrictions.of(root, query, context.getWriteableRegistry());
        SubSearches searches = SubSearches.of(request, SearchTaskFilter.current(services.threadContext().get()),
            cluster.localNode() == null ? null : cluster.localNode().getId(), context.getWriteableRegistry());
        MultiGranularQueryBuilder.Mode mode = query.vector() != null ? MultiGranularQueryBuilder.Mode.DENSE
            : query.match() != null ? MultiGranularQueryBuilder.Mode.LEXICAL : query.mode();
        ModelRef model = null;
        // every searched index must be a chunk index: a source index among them (`docs*` over `docs` and `docs-chunks`) made
        // the lexical side fail deep in its nested query, with an error that names no cause (a vector's shard query names it)
        ClusterState state = cluster.state();
        Index[] concrete = searches.concreteIndices(state, services.resolver().get());
        Map<String, ChunkIndexMeta> metas = query.vector() != null ? Map.of() : chunkIndexMetas(concrete, cluster.state());
        if (query.queryText() != null && mode != MultiGranularQueryBuilder.Mode.LEXICAL) {
            ModelRef indexModel = indexModel(metas, mode != null || query.fusion() != null);
            if (indexModel == null) {
                mode = MultiGranularQueryBuilder.Mode.LEXICAL; // no mode asked for, and the chunk indices hold no vectors
            } else {
                model = query.model() != null ? query.model() : indexModel;
                services.inference().get().validate("[" + MultiGranularQueryBuilder.NAME + "]", model);
                mode = mode == null ? MultiGranularQueryBuilder.Mode.HYBRID : mode;
            }
        }
        if (mode == null) {
            mode = MultiGranularQueryBuilder.Mode.LEXICAL;
        }
        if (mode != MultiGranularQueryBuilder.Mode.DENSE && cluster.getClusterSettings() != null
            && !cluster.getClusterSettings().get(SearchService.ALLOW_EXPENSIVE_QUERIES)) {
            // said before embedding anything: the lexical side's shards would refuse its nested query one by one
            throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] [mode: %s] scores the children through a nested "
                + "query, which OpenSearch does not run while [%s] is false; use [mode: dense] (or a [vector]), which needs none, "
                + "or allow expensive queries", MultiGranularQueryBuilder.NAME, mode.name().toLowerCase(Locale.ROOT),
                SearchService.ALLOW_EXPENSIVE_QUERIES.getKey()));
        }
        QueryBuilder sideFilter = query.filter() == null ? restriction : restriction == null ? query.filter()
            : QueryBuilders.boolQuery().filter(query.filter()).filter(restriction);
        UncopiedFields.check(sideFilter, concrete, cluster.state().metadata(), services.writers().get());
        SetOnce<QueryBuilder> done = new SetOnce<>();
        if (mode == MultiGranularQueryBuilder.Mode.DENSE && restriction == null && query.evidence() == null
            && oneLocalShard(request, cluster.state(), services)) {
            // one shard, nothing restricting the query: that shard's own top k is the global top k the dense sub-search would
            // plan, so the request runs the graph search itself (one search instead of two; same parents, same scores)
            QueryPlanner direct = new QueryPlanner(query, services, mode, model, sideFilter, searches, null);
            if (query.vector() != null) {
                done.set(direct.directDense(query.vector()));
                return query.pending(done::get);
            }
            context.registerAsyncAction((client, listener) -> direct.embed(ActionListener.wrap(vector -> {
                done.set(direct.directDense(vector));
                listener.onResponse(null);
            }, listener::onFailure)));
            return query.pending(done::get);
        }
        if (mode == MultiGranularQueryBuilder.Mode.HYBRID && restriction == null && oneLocalShard(request, cluster.state(), services)) {
            // one shard, nothing restricting the query: its windows are the global ones, so the shard fuses them itself with
            // the lexical window searched while the question is embedded, and explains its parents (no dense sub-search, no
            // lookup by _id, no second lexical search for the chunks)
            QueryPlanner direct = new QueryPlanner(query, services, mode, model, sideFilter, searches, null);
            context.registerAsyncAction((client, listener) -> direct.hybridShard(client, ActionListener.wrap(shardQuery -> {
                done.set(shardQuery.boost(query.boost()).queryName(query.queryName()));
                listener.onResponse(null);
            }, listener::onFailure)));
            return query.pending(done::get);
        }
        QueryPlanner planner = new QueryPlanner(query, services, mode, model, sideFilter, searches,
            PinnedIndices.of(concrete, state, searches));
        context.registerAsyncAction((client, listener) -> planner.runPinned(client, true, ActionListener.wrap(planned -> {
            done.set(planned.boost(query.boost()).queryName(query.queryName()));
            listener.onResponse(null);
        }, listener::onFailure)));
        return query.pending(done::get);
    }

    /** The dense form for the request's single shard: its {@code k} best parents are the global ones. */
    private QueryBuilder directDense(float[] vector) {
        return query.perShardDense(vector, query.k(), query.candidates(), sideFilter, query.explainChild()).boost(query.boost())
            .queryName(query.queryName());
    }

    /**
     * Whether {@code request} is a search of concrete indices (no alias, which may filter, no wildcard, no point in time, no
     * remote cluster) holding one shard in all, on a node that runs no security plugin ({@link SecurityPlugin}: its
     * document-level security would filter the shard after the graph search): then the shard's top k is the request's.
     */
    static boolean oneLocalShard(IndicesRequest request, ClusterState state, QueryServices services) {
        if (!(request instanceof SearchRequest search) || search.pointInTimeBuilder() != null || search.indices().length == 0) {
            return false;
        }
        ThreadContext context = services.threadContext().get();
        ClusterService cluster = services.clusterService().get();
        // only on a node proven to run no security plugin; its marks on the request (the user, or the origin of an
        // internal one) as a second sign
        if (context == null || cluster == null || !SecurityPlugin.provenAbsent(cluster.getClusterSettings())
            || context.getTransient("_opendistro_security_user") != null
            || context.getTransient("_opendistro_security_origin") != null
            || context.getHeaders().keySet().stream().anyMatch(k -> k.startsWith("_opendistro_security"))) {
            return false;
        }
        int shards = 0;
        for (String name : search.indices()) {
            IndexAbstraction found = state.metadata().getIndicesLookup().get(name);
            if (found == null || found.getType() != IndexAbstraction.Type.CONCRETE_INDEX) {
                return false;
            }
            shards += found.getWriteIndex().getNumberOfShards();
        }
        return shards == 1;
    }

    /** The query tree of the request being rewritten: a search's query, an explain's or a validate's; null when it has none. */
    static QueryBuilder rootQuery(IndicesRequest request) {
        if (request instanceof SearchRequest s) {
            return s.source() == null ? null : s.source().query();
        }
        if (request instanceof ExplainRequest e) {
            return e.query();
        }
        if (request instanceof ValidateQueryRequest v) {
            return v.query();
        }
        return null;
    }

    /**
     * Plans, then checks that every sub-search read the pinned indices: no hit from another index, and the request's names
     * still resolve to them with their aliases unchanged (an alias that moved away and back changed them too). When the
     * names moved during the planning (a generation swapped in), it plans once more on what they name now; a second move
     * is a retryable 503. Sub-searches resolve the names themselves, with the alias filters and the security plugin's
     * alias-based rules, which a search of the concrete indices would lose: so they are checked, not rewritten.
     */
    private void runPinned(Client client, boolean mayRetry, ActionListener<PlannedParentsQueryBuilder> listener) {
        run(client, ActionListener.wrap(planned -> {
            ClusterState now = services.clusterService().get().state();
            String moved = pinned.movedIn(now, searches, services.resolver().get(), foreign.get());
            if (moved == null) {
                listener.onResponse(planned);
            } else if (mayRetry) {
                logger.debug("planning again: {}", moved);
                replan(now).runPinned(client, false, listener);
            } else {
                listener.onFailure(PinnedIndices.moved(searches, moved));
            }
        }, listener::onFailure));
    }

    /** This planning on the indices the request's names resolve to in {@code state}; a 503 if their model changed. */
    private QueryPlanner replan(ClusterState state) {
        Index[] concrete = searches.concreteIndices(state, services.resolver().get());
        if (query.queryText() != null && mode != MultiGranularQueryBuilder.Mode.LEXICAL) {
            ModelRef now = indexModel(chunkIndexMetas(concrete, state), true);
            if (query.model() == null && !java.util.Objects.equals(now, model)) {
                throw PinnedIndices.moved(searches, "they now hold vectors of another model");
            }
        }
        UncopiedFields.check(sideFilter, concrete, state.metadata(), services.writers().get());
        return new QueryPlanner(query, services, mode, model, sideFilter, searches, PinnedIndices.of(concrete, state, searches));
    }

    /** Notes a sub-search hit read from an index this planning did not pin. */
    private void from(SearchHit hit) {
        if (pinned != null && !pinned.names().contains(hit.getIndex())) {
            foreign.compareAndSet(null, hit.getIndex());
        }
    }

    private void run(Client client, ActionListener<PlannedParentsQueryBuilder> listener) {
        ActionListener<PlannedParentsQueryBuilder> once = ActionListener.notifyOnce(listener);
        try {
            switch (mode) {
                case DENSE -> dense(client, once);
                case LEXICAL -> lexical(client, once);
                case HYBRID -> hybrid(client, once);
            }
        } catch (RuntimeException e) {
            once.onFailure(e);
        }
    }

    private void embed(ActionListener<float[]> listener) {
        if (query.vector() != null) {
            listener.onResponse(query.vector());
            return;
        }
        services.inference().get().embed(model, List.of(query.queryText()), Embedder.Purpose.QUERY, ActionListener.wrap(vectors -> {
            services.stats().query().embedded();
            listener.onResponse(vectors.get(0));
        }, listener::onFailure));
    }

    private void dense(Client client, ActionListener<PlannedParentsQueryBuilder> listener) {
        embed(ActionListener.wrap(vector -> {
            DenseParentsQueryBuilder perShard = query.perShardDense(vector, query.k(), query.candidates(), sideFilter, false);
            SubSearches.run(client, "dense", searches.request(perShard, query.k(), SearchType.QUERY_THEN_FETCH),
                ActionListener.wrap(response -> {
                    List<PlannedParentsQueryBuilder.Parent> parents = new ArrayList<>();
                    for (SearchHit hit : response.getHits().getHits()) {
                        from(hit);
                        parents.add(PlannedParentsQueryBuilder.Parent.dense(hit.getIndex(), hit.getId(), hit.getScore()));
                    }
                    listener.onResponse(new PlannedParentsQueryBuilder(MultiGranularQueryBuilder.Mode.DENSE, parents, planned(),
                        query.explains() ? vector : null, Levels.counted(query.levels()), query.explainChild(), evidence(null, null), null));
                }, listener::onFailure));
        }, listener::onFailure));
    }

    private void lexical(Client client, ActionListener<PlannedParentsQueryBuilder> listener) {
        String text = query.match() != null ? query.match() : query.queryText();
        QueryBuilder lexical = LexicalForm.of(text, query.levels(), sideFilter, innerHits());
        SubSearches.run(client, "lexical", searches.request(lexical, query.k(), searches.lexicalType()), ActionListener.wrap(response -> {
            List<PlannedParentsQueryBuilder.Parent> parents = new ArrayList<>();
            for (SearchHit hit : response.getHits().getHits()) {
                from(hit);
                parents.add(PlannedParentsQueryBuilder.Parent.lexical(hit.getIndex(), hit.getId(), hit.getScore(),
                    query.explains() ? lexicalChunks(hit, innerHits()) : null));
            }
            listener.onResponse(new PlannedParentsQueryBuilder(MultiGranularQueryBuilder.Mode.LEXICAL, parents, planned(), null,
                Levels.counted(query.levels()), query.explainChild(), evidence(null, null), text));
        }, listener::onFailure));
    }

    /**
     * The hybrid form for the request's single shard ({@link HybridShardQueryBuilder}): the lexical window's search starts
     * at once, overlapping the embedding (that shard's statistics are the global ones: no dfs); the shard runs the dense
     * window and the fusion.
     */
    private void hybridShard(Client client, ActionListener<HybridShardQueryBuilder> listener) {
        ActionListener<HybridShardQueryBuilder> once = ActionListener.notifyOnce(listener);
        Fusion fusion = fusion();
        int window = fusion.windowFor(query.k());
        AtomicReference<SearchHit[]> lexical = new AtomicReference<>();
        AtomicReference<float[]> vector = new AtomicReference<>();
        AtomicInteger pending = new AtomicInteger(2);
        long start = System.nanoTime();
        long[] at = new long[2]; // lexical done, embedded
        Runnable done = () -> {
            if (pending.decrementAndGet() != 0) {
                return;
            }
            if (logger.isDebugEnabled()) {
                logger.debug("hybrid planning on the shard: lexical window {} ms, embedded {} ms", ms(at[0], start), ms(at[1], start));
            }
            SearchHit[] hits = lexical.get();
            long[] seqNos = new long[hits.length];
            // the docs where the search found them: kept when it ran here (a search of another node's copy gives -1)
            int[] docs = new int[hits.length];
            float[] scores = new float[hits.length];
            for (int i = 0; i < hits.length; i++) {
                DocumentField seqNo = hits[i].field(SeqNoFieldMapper.NAME);
                if (seqNo == null || !(seqNo.getValue() instanceof Number n)) {
                    once.onFailure(new IllegalStateException("[" + MultiGranularQueryBuilder.NAME + "] its [lexical] search answered a "
                        + "hit without [" + SeqNoFieldMapper.NAME + "]"));
                    return;
                }
                seqNos[i] = n.longValue();
                docs[i] = hits[i].docId();
                scores[i] = hits[i].getScore();
            }
            DenseParentsQueryBuilder perShard = query.perShardDense(vector.get(), window, denseCandidates(window), sideFilter, false);
            once.onResponse(new HybridShardQueryBuilder(perShard, seqNos, docs, scores, fusion, query.k(), query.queryText(),
                query.explainChild(), query.evidence()));
        };
        try {
            QueryBuilder lexicalQuery = LexicalForm.of(query.queryText(), query.levels(), sideFilter, 0);
            SubSearches.run(client, "lexical", searches.requestBySeqNo(lexicalQuery, window, SearchType.QUERY_THEN_FETCH),
                ActionListener.wrap(response -> {
                    at[0] = System.nanoTime();
                    lexical.set(response.getHits().getHits());
                    done.run();
                }, once::onFailure));
            embed(ActionListener.wrap(v -> {
                at[1] = System.nanoTime();
                vector.set(v);
                done.run();
            }, once::onFailure));
        } catch (RuntimeException e) {
            once.onFailure(e);
        }
    }

    private Fusion fusion() {
        return query.fusion() == null ? Fusion.DEFAULT : query.fusion();
    }

    /** The dense side's beam for its {@code window} parents a shard: {@code num_candidates} (at least the window), else twice the window. */
    private int denseCandidates(int window) {
        if (query.numCandidates() != null) {
            return Math.min(MultiGranularQueryBuilder.MAX_K, Math.max(query.numCandidates(), window));
        }
        return MultiGranularQueryBuilder.defaultCandidates(window);
    }

    /**
     * Both sides' global windows, fused into the k best; the lexical side starts at once, overlapping the embedding. When
     * the parents are explained, the lexical best chunks of the k fused parents are asked for afterwards ({@link
     * #lexicalChunksOf}): inner hits for the whole lexical window (100 parents by default) made an {@code explain_child}
     * search ~4× the cost of the same search without it (bin/strata-bench query).
     */
    private void hybrid(Client client, ActionListener<PlannedParentsQueryBuilder> listener) {
        Fusion fusion = fusion();
        int window = fusion.windowFor(query.k());
        int denseCandidates = denseCandidates(window);
        AtomicReference<List<Fusion.SideHit>> dense = new AtomicReference<>();
        AtomicReference<List<Fusion.SideHit>> lexical = new AtomicReference<>();
        AtomicReference<float[]> vector = new AtomicReference<>();
        AtomicInteger pending = new AtomicInteger(2);
        long start = System.nanoTime();
        long[] at = new long[3]; // lexical done, embedded, dense done
        Runnable done = () -> {
            if (pending.decrementAndGet() != 0) {
                return;
            }
            if (logger.isDebugEnabled()) {
                logger.debug("hybrid planning: lexical window {} ms, embedded {} ms, dense window {} ms, fused {} ms", ms(at[0], start),
                    ms(at[1], start), ms(at[2], start), ms(System.nanoTime(), start));
            }
            List<Fusion.Fused> fused = fusion.fuse(dense.get(), lexical.get(), query.k());
            // the fusion normalises each side by its window's top and last score (min_max): evidence chunks are scaled alike
            boolean minMax = fusion.method() == Fusion.Method.MIN_MAX;
            PlannedParentsQueryBuilder.EvidenceSpec evidence = evidence(minMax ? dense.get() : null, minMax ? lexical.get() : null);
            ActionListener<Map<String, List<PlannedParentsQueryBuilder.SideChunk>>> respond = ActionListener.wrap(chunks -> {
                List<PlannedParentsQueryBuilder.Parent> parents = new ArrayList<>(fused.size());
                for (Fusion.Fused f : fused) {
                    parents.add(new PlannedParentsQueryBuilder.Parent(f, chunks.get(key(f.index(), f.id()))));
                }
                listener.onResponse(new PlannedParentsQueryBuilder(MultiGranularQueryBuilder.Mode.HYBRID, parents, planned(),
                    query.explains() ? vector.get() : null, Levels.counted(query.levels()), query.explainChild(), evidence,
                    query.queryText()));
            }, listener::onFailure);
            if (query.explains()) {
                lexicalChunksOf(client, fused, respond);
            } else {
                respond.onResponse(Map.of());
            }
        };
        QueryBuilder lexicalQuery = LexicalForm.of(query.queryText(), query.levels(), sideFilter, 0);
        SubSearches.run(client, "lexical", searches.request(lexicalQuery, window, SearchType.DFS_QUERY_THEN_FETCH),
            ActionListener.wrap(response -> {
                at[0] = System.nanoTime();
                lexical.set(sideHits(response, null, 0));
                done.run();
            }, listener::onFailure));
        embed(ActionListener.wrap(v -> {
            at[1] = System.nanoTime();
            vector.set(v);
            DenseParentsQueryBuilder perShard = query.perShardDense(v, window, denseCandidates, sideFilter, false);
            SubSearches.run(client, "dense", searches.request(perShard, window, SearchType.QUERY_THEN_FETCH),
                ActionListener.wrap(response -> {
                    at[2] = System.nanoTime();
                    dense.set(sideHits(response, null, 0));
                    done.run();
                }, listener::onFailure));
        }, listener::onFailure));
    }

    /**
     * The lexical best chunks ({@link #lexicalChunks}) of those fused parents the lexical side found, by {@link #key}: the
     * window's lexical query again, restricted to them and with inner hits. Scores are the window search's: the same query
     * under the same global (dfs) statistics, which a filter does not change.
     */
    private void lexicalChunksOf(Client client, List<Fusion.Fused> fused,
                                 ActionListener<Map<String, List<PlannedParentsQueryBuilder.SideChunk>>> listener) {
        Map<String, List<String>> idsByIndex = new HashMap<>();
        int count = 0;
        for (Fusion.Fused f : fused) {
            if (!Float.isNaN(f.lexical())) {
                idsByIndex.computeIfAbsent(f.index(), i -> new ArrayList<>()).add(f.id());
                count++;
            }
        }
        if (count == 0) {
            listener.onResponse(Map.of());
            return;
        }
        var these = QueryBuilders.boolQuery().minimumShouldMatch(1);
        idsByIndex.forEach((index, ids) -> these.should(QueryBuilders.boolQuery()
            .filter(QueryBuilders.termQuery("_index", index)).filter(QueryBuilders.idsQuery().addIds(ids.toArray(String[]::new)))));
        QueryBuilder filter = sideFilter == null ? these : QueryBuilders.boolQuery().filter(sideFilter).filter(these);
        QueryBuilder restricted = LexicalForm.of(query.queryText(), query.levels(), filter, innerHits());
        SubSearches.run(client, "lexical chunks", searches.request(restricted, count, SearchType.DFS_QUERY_THEN_FETCH),
            ActionListener.wrap(response -> {
                Map<String, List<PlannedParentsQueryBuilder.SideChunk>> chunks = new HashMap<>();
                sideHits(response, chunks, innerHits());
                listener.onResponse(chunks);
            }, listener::onFailure));
    }

    /**
     * A side's parents, best first; with {@code chunks}, also the lexical best chunks of each ({@link #lexicalChunks}).
     */
    private List<Fusion.SideHit> sideHits(SearchResponse response, Map<String, List<PlannedParentsQueryBuilder.SideChunk>> chunks,
                                                 int perParent) {
        List<Fusion.SideHit> out = new ArrayList<>();
        for (SearchHit hit : response.getHits().getHits()) {
            from(hit);
            out.add(new Fusion.SideHit(hit.getIndex(), hit.getId(), hit.getScore()));
            if (chunks != null) {
                chunks.put(key(hit.getIndex(), hit.getId()), lexicalChunks(hit, perParent));
            }
        }
        return out;
    }

    /** Inner hits the lexical side asks for: the evidence's chunk count, one for {@code explain_child} alone, else none. */
    private int innerHits() {
        return query.evidence() != null ? query.evidence().chunks() : query.explainChild() ? 1 : 0;
    }

    /**
     * The lexical side's best chunks of one parent, best first, at most {@code n}: its inner hits (the best children) and the
     * parent's own text when that scored the MAX (the hit's score is the MAX of both; below it, the parent's own score is
     * not known, so it is not listed).
     */
    static List<PlannedParentsQueryBuilder.SideChunk> lexicalChunks(SearchHit hit, int n) {
        List<PlannedParentsQueryBuilder.SideChunk> children = new ArrayList<>();
        SearchHits inner = hit.getInnerHits() == null ? null : hit.getInnerHits().get(BestChildFetchSubPhase.FIELD);
        for (SearchHit child : inner == null ? new SearchHit[0] : inner.getHits()) {
            // a nested inner hit's _source is the child object itself
            Map<String, Object> c = child.getSourceAsMap();
            if (c != null && c.get(ChunkDocuments.LEVEL) instanceof Number level && c.get(ChunkDocuments.ORDINAL) instanceof Number ordinal) {
                children.add(new PlannedParentsQueryBuilder.SideChunk(level.intValue(), ordinal.intValue(), child.getScore()));
            }
        }
        return LexicalForm.bestChunks(hit.getScore(), children, n);
    }

    private PlannedParentsQueryBuilder.Planned planned() {
        return new PlannedParentsQueryBuilder.Planned(pinned.indices(), searches.expressions());
    }

    /** What the shards need for {@code evidence} (null without it), with the sides' window bounds when given. */
    private PlannedParentsQueryBuilder.EvidenceSpec evidence(List<Fusion.SideHit> dense, List<Fusion.SideHit> lexical) {
        if (query.evidence() == null) {
            return null;
        }
        String text = query.match() != null ? query.match() : query.queryText();
        return new PlannedParentsQueryBuilder.EvidenceSpec(query.evidence(), text == null ? "" : text, top(dense), floor(dense),
            top(lexical), floor(lexical));
    }

    private static float top(List<Fusion.SideHit> side) {
        return side == null || side.isEmpty() ? Float.NaN : side.get(0).score();
    }

    private static float floor(List<Fusion.SideHit> side) {
        return side == null || side.isEmpty() ? Float.NaN : side.get(side.size() - 1).score();
    }

    private static String ms(long at, long start) {
        return String.format(Locale.ROOT, "%.2f", (at - start) / 1e6);
    }

    private static String key(String index, String id) {
        return index + '\u0000' + id;
    }

    /** The Strata metadata of each searched index; a 400 naming the first that is not a chunk index. */
    private static Map<String, ChunkIndexMeta> chunkIndexMetas(Index[] indices, ClusterState state) {
        Map<String, ChunkIndexMeta> metas = new LinkedHashMap<>();
        for (Index index : indices) {
            ChunkIndexMeta meta = ChunkIndexMeta.of(state.metadata().index(index));
            if (meta == null) {
                List<String> own = chunkIndicesOf(index, state);
                throw new IllegalArgumentException(String.format(Locale.ROOT,
                    "[%s] index [%s] is not a Strata chunk index (no [_meta.strata] in its mapping); search %s",
                    MultiGranularQueryBuilder.NAME, index.getName(), own.isEmpty()
                        ? "the target_index of a multi_granular_chunking pipeline"
                        : "its chunk " + (own.size() == 1 ? "index " : "indices ") + own + " (it is their source index)"));
            }
            metas.put(index.getName(), meta);
        }
        return metas;
    }

    /** The chunk indices registered to source index {@code source} (a scan of the cluster's indices: for the error only). */
    private static List<String> chunkIndicesOf(Index source, ClusterState state) {
        List<String> out = new ArrayList<>();
        for (IndexMetadata index : state.metadata().indices().values()) {
            ChunkIndexRegistry.Registration r = ChunkIndexRegistry.registrationOf(index);
            if (r != null && r.source().getUUID().equals(source.getUUID())) {
                out.add(r.chunkIndex().getName());
            }
        }
        Collections.sort(out);
        return out;
    }

    /**
     * The model recorded in the mappings of the searched chunk indices (they must agree), or null when none of them holds
     * vectors and {@code vectorsRequired} is false.
     */
    private static ModelRef indexModel(Map<String, ChunkIndexMeta> metas, boolean vectorsRequired) {
        Set<Object> models = new HashSet<>();
        List<String> withoutVectors = new ArrayList<>();
        for (Map.Entry<String, ChunkIndexMeta> e : metas.entrySet()) {
            if (e.getValue().hasVectors()) {
                models.add(e.getValue().model());
            } else {
                withoutVectors.add(e.getKey());
            }
        }
        if (models.isEmpty() && withoutVectors.isEmpty()) {
            throw new IllegalArgumentException("[" + MultiGranularQueryBuilder.NAME + "] the request searches no index");
        }
        if (!withoutVectors.isEmpty() && (vectorsRequired || !models.isEmpty())) {
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                "[%s] chunk index %s holds no vectors (its pipeline has [embed: false]); use [mode: lexical] or [match]",
                MultiGranularQueryBuilder.NAME, withoutVectors));
        }
        if (models.isEmpty()) {
            return null;
        }
        if (models.size() > 1) {
            throw new IllegalArgumentException("[" + MultiGranularQueryBuilder.NAME + "] the searched indices were embedded by different "
                + "models " + models + "; search them separately or name one with [model] or [model_id]");
        }
        Map<?, ?> m = (Map<?, ?>) models.iterator().next();
        return m.get("model") != null ? ModelRef.embedded((String) m.get("model")) : new ModelRef(null, (String) m.get("model_id"));
    }
}

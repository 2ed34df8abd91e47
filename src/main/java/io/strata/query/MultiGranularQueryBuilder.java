package io.strata.query;

import io.strata.model.ModelRef;
import io.strata.chunking.Embedder;
import io.strata.chunkindex.ChunkDocuments;
import io.strata.chunkindex.ChunkIndexMeta;
import org.apache.lucene.document.IntPoint;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.PointValues;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.DisjunctionMaxQuery;
import org.apache.lucene.search.KnnFloatVectorQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.join.BitSetProducer;
import org.apache.lucene.search.join.DiversifyingChildrenFloatKnnVectorQuery;
import org.apache.lucene.search.join.ScoreMode;
import org.apache.lucene.search.join.ToChildBlockJoinQuery;
import org.apache.lucene.search.join.ToParentBlockJoinQuery;
import org.apache.lucene.util.SetOnce;
import org.opensearch.action.IndicesRequest;
import org.opensearch.cluster.ClusterState;
import org.opensearch.common.lucene.search.Queries;
import org.opensearch.core.ParseField;
import org.opensearch.core.action.ActionListener;
import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.common.io.stream.StreamOutput;
import org.opensearch.core.index.Index;
import org.opensearch.core.xcontent.ObjectParser;
import org.opensearch.core.xcontent.XContentBuilder;
import org.opensearch.core.xcontent.XContentParser;
import org.opensearch.index.mapper.MappedFieldType;
import org.opensearch.index.mapper.ObjectMapper;
import org.opensearch.index.query.AbstractQueryBuilder;
import org.opensearch.index.query.BoolQueryBuilder;
import org.opensearch.index.query.DisMaxQueryBuilder;
import org.opensearch.index.query.InnerHitBuilder;
import org.opensearch.index.query.NestedQueryBuilder;
import org.opensearch.index.query.QueryBuilder;
import org.opensearch.index.query.QueryBuilders;
import org.opensearch.index.query.QueryCoordinatorContext;
import org.opensearch.index.query.QueryRewriteContext;
import org.opensearch.index.query.QueryShardContext;
import org.opensearch.index.query.QueryShardException;
import org.opensearch.search.fetch.subphase.FetchSourceContext;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import java.util.Set;
import java.util.function.Supplier;

/**
 * {@code multi_granular}: scores every parent chunk by the MAX over itself and its children at the chosen
 * levels (LGMGC §3.2) and returns the best parents, not the best children.
 *
 * <pre>
 * {"multi_granular": {"query_text": "…", "k": 10, "levels": [0, 1, 2], "filter": {…}, "explain_child": true}}
 * </pre>
 * Exactly one of {@code query_text}, {@code vector} (the dense mode with a precomputed vector) or {@code match} (the
 * lexical mode). With {@code query_text} the {@code mode} chooses: {@code hybrid} (the default on a chunk index with
 * vectors: the dense and the lexical MAX fused into one ranking by {@link HybridSearch} and {@link Fusion}),
 * {@code dense} (the paper's raw dense MAX: the text is embedded on the coordinator with the model recorded in the chunk
 * index mapping unless {@code model}/{@code model_id} names one) or {@code lexical} (BM25 over parent and child texts,
 * same MAX; the default on a chunk index without vectors).
 *
 * <p>Semantic form, per shard, on a format-2 chunk index (every parent also its own level-0 child): a
 * {@link ToParentBlockJoinQuery} (score mode MAX) over ONE {@link DiversifyingChildrenFloatKnnVectorQuery} on
 * {@code children.embedding}, which finds the k parents with the best chunk at the counted levels — no client-side
 * grouping. {@code levels: [0]} searches the parents' own {@code embedding} graph; a format-1 index gets the
 * {@link DisjunctionMaxQuery} (tie breaker 0) of the parent's k-NN and the nested one (two HNSW searches).
 * Lucene engine of k-NN, cosine scores (1 + cos) / 2.
 */
public final class MultiGranularQueryBuilder extends AbstractQueryBuilder<MultiGranularQueryBuilder> {
    public static final String NAME = "multi_granular";
    public static final int DEFAULT_K = 10;
    public static final int MAX_K = 10_000;
    public static final int MAX_LEVEL = 4;

    private static final ParseField QUERY_TEXT = new ParseField("query_text");
    private static final ParseField VECTOR = new ParseField("vector");
    private static final ParseField MATCH = new ParseField("match");
    private static final ParseField K = new ParseField("k");
    private static final ParseField NUM_CANDIDATES = new ParseField("num_candidates");
    private static final ParseField LEVELS = new ParseField("levels");
    private static final ParseField FILTER = new ParseField("filter");
    private static final ParseField EXPLAIN_CHILD = new ParseField("explain_child");
    private static final ParseField MODEL = new ParseField("model");
    private static final ParseField MODEL_ID = new ParseField("model_id");
    private static final ParseField MODE = new ParseField("mode");
    private static final ParseField FUSION = new ParseField("fusion");

    /** How parents are scored. */
    public enum Mode {
        /** The dense and the lexical multi-granular MAX, fused ({@link Fusion}). */
        HYBRID,
        /** The LGMGC paper's MAX of cosine similarities over the parent and its children. */
        DENSE,
        /** BM25 over the parent's and its children's texts, with the same MAX. */
        LEXICAL;

        public String key() {
            return name().toLowerCase(Locale.ROOT);
        }

        static Mode of(String key) {
            for (Mode m : values()) {
                if (m.key().equals(key)) {
                    return m;
                }
            }
            throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] [mode] must be one of [hybrid, dense, lexical], got [%s]",
                NAME, key));
        }
    }

    private final String queryText;
    private final float[] vector;
    private final String match;
    private final int k;
    /**
     * Parents the graph search collects per shard before the best k are kept; null = {@link #defaultCandidates}. Lucene's
     * HNSW search keeps a beam as wide as the number of hits it is asked for, so asking for more than k and keeping k buys
     * recall (QueryBench, 100k chunks: recall@10 of parents 0.88 with 10 candidates, 0.975 with 20, latency within noise).
     */
    private Integer numCandidates;
    /** Levels that count (0 = the parent itself); null = all. */
    private final List<Integer> levels;
    private final QueryBuilder filter;
    private final boolean explainChild;
    private final ModelRef model;
    /** Null: chosen on the coordinator ({@code query_text}: hybrid on a chunk index with vectors, else lexical). */
    private Mode mode;
    /** Null: {@link Fusion#DEFAULT}. Hybrid mode only. */
    private Fusion fusion;
    private final QueryServices services;
    /** What this query becomes once the coordinator's async rewrite (embedding, the hybrid searches) has answered. */
    private final Supplier<QueryBuilder> pending;

    private MultiGranularQueryBuilder(String queryText, float[] vector, String match, int k, List<Integer> levels, QueryBuilder filter,
                                      boolean explainChild, ModelRef model, QueryServices services, Supplier<QueryBuilder> pending) {
        this.queryText = queryText;
        this.vector = vector;
        this.match = match;
        this.k = k;
        this.levels = levels == null ? null : List.copyOf(levels);
        this.filter = filter;
        this.explainChild = explainChild;
        this.model = model;
        this.services = services;
        this.pending = pending;
    }

    /** Validates the combination of parameters; every error names the field and what is allowed. */
    static MultiGranularQueryBuilder of(String queryText, float[] vector, String match, Integer k, List<Integer> levels,
                                        QueryBuilder filter, Boolean explainChild, ModelRef model, QueryServices services) {
        int given = (queryText != null ? 1 : 0) + (vector != null ? 1 : 0) + (match != null ? 1 : 0);
        if (given != 1) {
            throw new IllegalArgumentException("[" + NAME + "] needs exactly one of [query_text], [vector] and [match], got " + given);
        }
        if (queryText != null && queryText.isBlank() || match != null && match.isBlank()) {
            throw new IllegalArgumentException("[" + NAME + "] [" + (queryText != null ? "query_text" : "match") + "] must not be empty");
        }
        if (vector != null && vector.length == 0) {
            throw new IllegalArgumentException("[" + NAME + "] [vector] must not be empty");
        }
        if (model != null && queryText == null) {
            throw new IllegalArgumentException("[" + NAME + "] [model] and [model_id] go with [query_text] only");
        }
        int kk = k == null ? DEFAULT_K : k;
        if (kk < 1 || kk > MAX_K) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] [k] must be in [1, %d], got [%d]", NAME, MAX_K, kk));
        }
        if (levels != null) {
            if (levels.isEmpty() || new HashSet<>(levels).size() != levels.size()
                || levels.stream().anyMatch(l -> l == null || l < 0 || l > MAX_LEVEL)) {
                throw new IllegalArgumentException(String.format(Locale.ROOT,
                    "[%s] [levels] must be distinct levels in [0, %d] (0 = the parent itself), got %s", NAME, MAX_LEVEL, levels));
            }
        }
        return new MultiGranularQueryBuilder(queryText, vector, match, kk, levels, filter, explainChild != null && explainChild, model,
            services, null);
    }

    /**
     * Sets how many parents the graph search collects per shard before the best {@code k} are kept (semantic form only);
     * null for the default, {@link #defaultCandidates}.
     */
    public MultiGranularQueryBuilder numCandidates(Integer candidates) {
        if (candidates != null) {
            if (match != null || mode == Mode.LEXICAL) {
                throw new IllegalArgumentException("[" + NAME + "] [num_candidates] sizes the dense graph search: not with [match] or "
                    + "[mode: lexical]");
            }
            if (candidates < k || candidates > MAX_K) {
                throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] [num_candidates] must be in [k, %d] = [%d, %d], got [%d]",
                    NAME, MAX_K, k, MAX_K, candidates));
            }
        }
        this.numCandidates = candidates;
        return this;
    }

    public Integer numCandidates() {
        return numCandidates;
    }

    /** Sets the mode (null: chosen on the coordinator); checked against the query's input. */
    public MultiGranularQueryBuilder mode(Mode m) {
        if (m != null) {
            if (vector != null && m != Mode.DENSE) {
                throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] [vector] is the dense mode; [mode: %s] needs [query_text]",
                    NAME, m.key()));
            }
            if (match != null && m != Mode.LEXICAL) {
                throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] [match] is the lexical mode; [mode: %s] needs [query_text]",
                    NAME, m.key()));
            }
            if (m == Mode.LEXICAL && model != null) {
                throw new IllegalArgumentException("[" + NAME + "] [model] and [model_id] embed [query_text]: not with [mode: lexical]");
            }
            if (m == Mode.LEXICAL && numCandidates != null) {
                throw new IllegalArgumentException("[" + NAME + "] [num_candidates] sizes the dense graph search: not with [mode: lexical]");
            }
            if (m != Mode.HYBRID && fusion != null) {
                throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] [fusion] goes with [mode: hybrid], not [mode: %s]", NAME,
                    m.key()));
            }
        }
        this.mode = m;
        return this;
    }

    public Mode mode() {
        return mode;
    }

    /** Sets how the hybrid mode fuses its sides (null: {@link Fusion#DEFAULT}); only with {@code query_text}. */
    public MultiGranularQueryBuilder fusion(Fusion f) {
        if (f != null) {
            if (queryText == null || mode != null && mode != Mode.HYBRID) {
                throw new IllegalArgumentException("[" + NAME + "] [fusion] goes with the hybrid mode: [query_text] with no [mode] or "
                    + "[mode: hybrid]");
            }
            if (f.window() != null && f.window() < k) {
                throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] [fusion.window] must be at least [k] = %d, got [%d]",
                    NAME, k, f.window()));
            }
        }
        this.fusion = f;
        return this;
    }

    public Fusion fusion() {
        return fusion;
    }

    /** Twice k (at most {@link #MAX_K}): the recall of the one-search form at a latency within noise (see the field). */
    static int defaultCandidates(int k) {
        return Math.min(MAX_K, 2 * k);
    }

    /** The graph search's candidate count: {@code num_candidates}, else the default. */
    int candidates() {
        return numCandidates != null ? numCandidates : defaultCandidates(k);
    }

    public MultiGranularQueryBuilder(StreamInput in, QueryServices services) throws IOException {
        super(in);
        this.queryText = in.readOptionalString();
        this.vector = in.readBoolean() ? in.readFloatArray() : null;
        this.match = in.readOptionalString();
        this.k = in.readVInt();
        this.numCandidates = in.readOptionalVInt();
        this.levels = in.readBoolean() ? in.readList(StreamInput::readVInt) : null;
        this.filter = in.readOptionalNamedWriteable(QueryBuilder.class);
        this.explainChild = in.readBoolean();
        String m = in.readOptionalString();
        String mid = in.readOptionalString();
        this.model = m == null && mid == null ? null : new ModelRef(m, mid);
        this.mode = in.readBoolean() ? in.readEnum(Mode.class) : null;
        this.fusion = in.readOptionalWriteable(Fusion::new);
        this.services = services;
        this.pending = null;
    }

    @Override
    protected void doWriteTo(StreamOutput out) throws IOException {
        if (pending != null) {
            throw new IllegalStateException("[" + NAME + "] must be rewritten (query_text embedded) before it is sent");
        }
        out.writeOptionalString(queryText);
        out.writeBoolean(vector != null);
        if (vector != null) {
            out.writeFloatArray(vector);
        }
        out.writeOptionalString(match);
        out.writeVInt(k);
        out.writeOptionalVInt(numCandidates);
        out.writeBoolean(levels != null);
        if (levels != null) {
            out.writeCollection(levels, StreamOutput::writeVInt);
        }
        out.writeOptionalNamedWriteable(filter);
        out.writeBoolean(explainChild);
        out.writeOptionalString(model == null ? null : model.model());
        out.writeOptionalString(model == null ? null : model.modelId());
        out.writeBoolean(mode != null);
        if (mode != null) {
            out.writeEnum(mode);
        }
        out.writeOptionalWriteable(fusion);
    }

    @Override
    protected void doXContent(XContentBuilder builder, Params params) throws IOException {
        builder.startObject(NAME);
        if (queryText != null) {
            builder.field(QUERY_TEXT.getPreferredName(), queryText);
        }
        if (vector != null) {
            builder.array(VECTOR.getPreferredName(), vector);
        }
        if (match != null) {
            builder.field(MATCH.getPreferredName(), match);
        }
        builder.field(K.getPreferredName(), k);
        if (numCandidates != null) {
            builder.field(NUM_CANDIDATES.getPreferredName(), numCandidates);
        }
        if (levels != null) {
            builder.field(LEVELS.getPreferredName(), levels);
        }
        if (filter != null) {
            builder.field(FILTER.getPreferredName(), filter);
        }
        builder.field(EXPLAIN_CHILD.getPreferredName(), explainChild);
        if (model != null) {
            builder.field(model.isEmbedded() ? MODEL.getPreferredName() : MODEL_ID.getPreferredName(),
                model.isEmbedded() ? model.model() : model.modelId());
        }
        if (mode != null) {
            builder.field(MODE.getPreferredName(), mode.key());
        }
        if (fusion != null) {
            builder.field(FUSION.getPreferredName(), fusion);
        }
        printBoostAndQueryName(builder);
        builder.endObject();
    }

    /** Parameters as parsed, before validation. */
    private static final class Parsed {
        String queryText;
        List<Float> vector;
        String match;
        Integer k;
        Integer numCandidates;
        List<Integer> levels;
        QueryBuilder filter;
        Boolean explainChild;
        String model;
        String modelId;
        String mode;
        Fusion fusion;
        float boost = DEFAULT_BOOST;
        String queryName;
    }

    private static final ObjectParser<Parsed, Void> PARSER = new ObjectParser<>(NAME, Parsed::new);

    static {
        PARSER.declareString((p, v) -> p.queryText = v, QUERY_TEXT);
        PARSER.declareFloatArray((p, v) -> p.vector = v, VECTOR);
        PARSER.declareString((p, v) -> p.match = v, MATCH);
        PARSER.declareInt((p, v) -> p.k = v, K);
        PARSER.declareInt((p, v) -> p.numCandidates = v, NUM_CANDIDATES);
        PARSER.declareIntArray((p, v) -> p.levels = v, LEVELS);
        PARSER.declareObject((p, v) -> p.filter = v, (parser, c) -> parseInnerQueryBuilder(parser), FILTER);
        PARSER.declareBoolean((p, v) -> p.explainChild = v, EXPLAIN_CHILD);
        PARSER.declareString((p, v) -> p.model = v, MODEL);
        PARSER.declareString((p, v) -> p.modelId = v, MODEL_ID);
        PARSER.declareString((p, v) -> p.mode = v, MODE);
        PARSER.declareObject((p, v) -> p.fusion = v, (parser, c) -> Fusion.fromXContent(parser), FUSION);
        PARSER.declareFloat((p, v) -> p.boost = v, BOOST_FIELD);
        PARSER.declareString((p, v) -> p.queryName = v, NAME_FIELD);
        PARSER.declareExclusiveFieldSet(QUERY_TEXT.getPreferredName(), VECTOR.getPreferredName(), MATCH.getPreferredName());
        PARSER.declareExclusiveFieldSet(MODEL.getPreferredName(), MODEL_ID.getPreferredName());
    }

    public static MultiGranularQueryBuilder fromXContent(XContentParser parser, QueryServices services) throws IOException {
        Parsed p = PARSER.parse(parser, null);
        float[] vector = null;
        if (p.vector != null) {
            vector = new float[p.vector.size()];
            for (int i = 0; i < vector.length; i++) {
                vector[i] = p.vector.get(i);
            }
        }
        ModelRef model;
        Map<String, Object> refs = new java.util.HashMap<>();
        if (p.model != null) {
            refs.put("model", p.model);
        }
        if (p.modelId != null) {
            refs.put("model_id", p.modelId);
        }
        model = ModelRef.parse("[" + NAME + "]", refs);
        MultiGranularQueryBuilder builder = of(p.queryText, vector, p.match, p.k, p.levels, p.filter, p.explainChild, model, services);
        builder.mode(p.mode == null ? null : Mode.of(p.mode));
        builder.fusion(p.fusion);
        builder.numCandidates(p.numCandidates);
        builder.boost(p.boost);
        builder.queryName(p.queryName);
        services.stats().query().received();
        return builder;
    }

    @Override
    protected QueryBuilder doRewrite(QueryRewriteContext context) throws IOException {
        if (pending != null) {
            QueryBuilder done = pending.get();
            return done == null ? this : done;
        }
        QueryBuilder rewrittenFilter = filter == null ? null : filter.rewrite(context);
        if (match != null) {
            return lexical(match, rewrittenFilter);
        }
        if (vector != null) {
            return rewrittenFilter == filter ? this : copy(vector, rewrittenFilter);
        }
        QueryCoordinatorContext coordinator = context.convertToCoordinatorContext();
        if (coordinator == null) {
            // e.g. _explain of one document: rewritten on the shard, where nothing can embed or search both sides
            throw new IllegalArgumentException("[" + NAME + "] [query_text] must be embedded on the coordinating node of a search "
                + "request; here, use [vector] or [match]");
        }
        if (mode == Mode.LEXICAL) {
            return lexical(queryText, rewrittenFilter);
        }
        ModelRef indexModel = indexModel(coordinator.getSearchRequest(), mode != null || fusion != null);
        if (indexModel == null) {
            return lexical(queryText, rewrittenFilter); // no mode asked for, and the chunk indices hold no vectors
        }
        ModelRef ref = model != null ? model : indexModel;
        services.inference().get().validate("[" + NAME + "]", ref);
        SetOnce<QueryBuilder> done = new SetOnce<>();
        if (mode == Mode.DENSE) {
            context.registerAsyncAction((client, listener) -> services.inference().get().embed(ref, List.of(queryText),
                Embedder.Purpose.QUERY, ActionListener.wrap(vectors -> {
                    services.stats().query().embedded();
                    done.set(copy(vectors.get(0), rewrittenFilter));
                    listener.onResponse(null);
                }, listener::onFailure)));
        } else {
            HybridSearch hybrid = new HybridSearch(queryText, ref, levels, rewrittenFilter, k, numCandidates,
                fusion == null ? Fusion.DEFAULT : fusion, explainChild, services);
            context.registerAsyncAction((client, listener) -> hybrid.run(client, coordinator.getSearchRequest(),
                ActionListener.wrap(fused -> {
                    done.set(fused.boost(boost).queryName(queryName));
                    listener.onResponse(null);
                }, listener::onFailure)));
        }
        return new MultiGranularQueryBuilder(queryText, null, null, k, levels, rewrittenFilter, explainChild, model, services, done::get)
            .mode(mode).fusion(fusion).numCandidates(numCandidates).boost(boost).queryName(queryName);
    }

    /** The dense form with its vector, ready for the shards. */
    private MultiGranularQueryBuilder copy(float[] v, QueryBuilder f) {
        return new MultiGranularQueryBuilder(null, v, null, k, levels, f, explainChild, null, services, null)
            .numCandidates(numCandidates).boost(boost).queryName(queryName);
    }

    /**
     * The model recorded in the mappings of the searched chunk indices (they must agree), or null when none of them holds
     * vectors and {@code vectorsRequired} is false.
     */
    private ModelRef indexModel(IndicesRequest request, boolean vectorsRequired) {
        ClusterState state = services.clusterService().get().state();
        Index[] indices = services.resolver().get().concreteIndices(state, request);
        Set<Object> models = new HashSet<>();
        List<String> withoutVectors = new ArrayList<>();
        for (Index index : indices) {
            ChunkIndexMeta meta = ChunkIndexMeta.of(state.metadata().index(index));
            if (meta == null) {
                throw new IllegalArgumentException(String.format(Locale.ROOT,
                    "[%s] index [%s] is not a Strata chunk index (no [_meta.strata] in its mapping); search the target_index of a "
                        + "multi_granular_chunking pipeline", NAME, index.getName()));
            }
            if (meta.hasVectors()) {
                models.add(meta.model());
            } else {
                withoutVectors.add(index.getName());
            }
        }
        if (models.isEmpty() && withoutVectors.isEmpty()) {
            throw new IllegalArgumentException("[" + NAME + "] the request searches no index");
        }
        if (!withoutVectors.isEmpty() && (vectorsRequired || !models.isEmpty())) {
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                "[%s] chunk index %s holds no vectors (its pipeline has [embed: false]); use [mode: lexical] or [match]", NAME,
                withoutVectors));
        }
        if (models.isEmpty()) {
            return null;
        }
        if (models.size() > 1) {
            throw new IllegalArgumentException("[" + NAME + "] the searched indices were embedded by different models " + models
                + "; search them separately or name one with [model] or [model_id]");
        }
        Map<?, ?> m = (Map<?, ?>) models.iterator().next();
        return m.get("model") != null ? ModelRef.embedded((String) m.get("model")) : new ModelRef(null, (String) m.get("model_id"));
    }

    private boolean counts(int level) {
        return levels == null || levels.contains(level);
    }

    private List<Integer> childLevels() {
        if (levels == null) {
            List<Integer> all = new ArrayList<>();
            for (int l = 1; l <= MAX_LEVEL; l++) {
                all.add(l);
            }
            return all;
        }
        return levels.stream().filter(l -> l > 0).toList();
    }

    /** BM25 over parent and child texts with the same MAX; the best child comes back as inner hit. */
    private QueryBuilder lexical(String text, QueryBuilder rewrittenFilter) {
        DisMaxQueryBuilder max = QueryBuilders.disMaxQuery().tieBreaker(0f);
        if (counts(0)) {
            max.add(QueryBuilders.matchQuery(ChunkDocuments.TEXT, text));
        }
        List<Integer> childLevels = childLevels();
        if (!childLevels.isEmpty()) {
            BoolQueryBuilder child = QueryBuilders.boolQuery()
                .must(QueryBuilders.matchQuery(ChunkDocuments.CHILDREN + "." + ChunkDocuments.TEXT, text))
                .filter(QueryBuilders.termsQuery(ChunkDocuments.CHILDREN + "." + ChunkDocuments.LEVEL, childLevels));
            NestedQueryBuilder nested = QueryBuilders.nestedQuery(ChunkDocuments.CHILDREN, child, ScoreMode.Max);
            if (explainChild) {
                nested.innerHit(new InnerHitBuilder(BestChildFetchSubPhase.FIELD).setSize(1)
                    .setFetchSourceContext(new FetchSourceContext(true, new String[] { "children.level", "children.ordinal",
                        "children.text", "children.start", "children.end" }, null)));
            }
            max.add(nested);
        }
        QueryBuilder q = rewrittenFilter == null ? max : QueryBuilders.boolQuery().must(max).filter(rewrittenFilter);
        // boost and _name go on the outermost query itself: a wrapper added only for _name would change the Lucene query
        return q.boost(boost).queryName(queryName);
    }

    @Override
    protected Query doToQuery(QueryShardContext context) throws IOException {
        if (vector == null) {
            throw new IllegalStateException("[" + NAME + "] was not rewritten: no query vector");
        }
        MappedFieldType parentField = context.fieldMapper(ChunkDocuments.EMBEDDING);
        ObjectMapper children = context.getObjectMapper(ChunkDocuments.CHILDREN);
        if (parentField == null || children == null || children.nested().isNested() == false) {
            throw new QueryShardException(context, String.format(Locale.ROOT,
                "[%s] index [%s] is not a Strata chunk index with vectors (no [embedding] field or nested [children])", NAME,
                context.index().getName()));
        }
        ChunkIndexMeta meta = ChunkIndexMeta.ofMeta(context.getMapperService().documentMapper().meta());
        Integer dim = meta == null ? null : meta.dimension();
        if (dim != null && dim != vector.length) {
            throw new QueryShardException(context, String.format(Locale.ROOT,
                "[%s] the query vector has %d dimensions but index [%s] holds vectors of %d", NAME, vector.length,
                context.index().getName(), dim));
        }
        Query userFilter = filter == null ? null : filter.toQuery(context);
        List<Integer> childLevels = childLevels();
        List<Integer> effective = new ArrayList<>();
        if (counts(0)) {
            effective.add(0);
        }
        effective.addAll(childLevels);
        // a restriction from around the query (a bool's filters, document-level security) joins the user's filter before the
        // graph search: see PreFilterPushdown
        Function<Query, Query> search = restriction -> {
            Query restrictedFilter = restriction == null ? userFilter : userFilter == null ? restriction
                : new BooleanQuery.Builder().add(userFilter, BooleanClause.Occur.FILTER).add(restriction, BooleanClause.Occur.FILTER).build();
            return graphSearch(context, meta, childLevels, effective, restrictedFilter);
        };
        return new MultiGranularQuery(search.apply(null), k, candidates(), vector, effective, explainChild, search);
    }

    /** The graph search (MAX over parent and children) for the parents that match {@code parentFilter} (null: all). */
    private Query graphSearch(QueryShardContext context, ChunkIndexMeta meta, List<Integer> childLevels, List<Integer> effective,
                              Query userFilter) {
        Query parentFilter = Queries.newNonNestedFilter();
        Query parentCandidates = userFilter == null ? null
            : new BooleanQuery.Builder().add(parentFilter, BooleanClause.Occur.FILTER).add(userFilter, BooleanClause.Occur.FILTER).build();
        if (childLevels.isEmpty()) {
            // levels [0]: the parents' own graph, which holds only parents: no level filter needed
            return new KnnFloatVectorQuery(ChunkDocuments.EMBEDDING, vector, candidates(), parentCandidates);
        } else if (meta != null && meta.selfInChildren()) {
            return oneNestedSearch(context, effective, parentFilter, parentCandidates);
        }
        return parentOrChildSearch(context, childLevels, parentFilter, userFilter, parentCandidates);
    }

    /**
     * Format 2: every parent is also its own level-0 child, so ONE diversified HNSW search over {@code children.embedding}
     * finds the k parents with the best chunk at any counted level, and the block join (MAX) scores each by it — the
     * LGMGC MAX with one graph search instead of two (QueryBench, 100k chunks: 1.25-1.45x a plain k-NN against 1.58x for
     * the two-search form in the same run). Filters cost a pass over every matching child per query, so a level filter
     * is added only when this shard holds a level that does not count, and the user's parent filter is moved onto the
     * children (the children of matching parents) so that the search still finds k parents that match it.
     */
    private Query oneNestedSearch(QueryShardContext context, List<Integer> counted, Query parentFilter, Query parentCandidates) {
        BitSetProducer parents = context.bitsetFilter(parentFilter);
        String levelName = ChunkDocuments.CHILDREN + "." + ChunkDocuments.LEVEL;
        boolean all = levels == null || counted.size() == MAX_LEVEL + 1;
        Query levelFilter = all || everyLevelPresentCounts(context, levelName, counted) ? null
            : context.fieldMapper(levelName).termsQuery(counted, context);
        Query ofMatchingParents = parentCandidates == null ? null : new ToChildBlockJoinQuery(parentCandidates, parents);
        Query childFilter;
        if (levelFilter == null || ofMatchingParents == null) {
            childFilter = levelFilter == null ? ofMatchingParents : levelFilter;
        } else {
            childFilter = new BooleanQuery.Builder().add(levelFilter, BooleanClause.Occur.FILTER)
                .add(ofMatchingParents, BooleanClause.Occur.FILTER).build();
        }
        Query best = new DiversifyingChildrenFloatKnnVectorQuery(ChunkDocuments.CHILDREN + "." + ChunkDocuments.EMBEDDING, vector,
            childFilter, candidates(), parents);
        return new ToParentBlockJoinQuery(best, parents, ScoreMode.Max);
    }

    /**
     * Whether every level this shard holds is counted, read from the level field's point ranges (no pass over documents);
     * false when the shard cannot tell (no reader), so a filter is kept.
     */
    private static boolean everyLevelPresentCounts(QueryShardContext context, String levelField, List<Integer> counted) {
        if (context.getIndexReader() == null) {
            return false;
        }
        int min = Integer.MAX_VALUE;
        int max = Integer.MIN_VALUE;
        try {
            for (LeafReaderContext leaf : context.getIndexReader().leaves()) {
                PointValues points = leaf.reader().getPointValues(levelField);
                if (points != null && points.size() > 0) {
                    min = Math.min(min, IntPoint.decodeDimension(points.getMinPackedValue(), 0));
                    max = Math.max(max, IntPoint.decodeDimension(points.getMaxPackedValue(), 0));
                }
            }
        } catch (IOException e) {
            return false;
        }
        for (int level = min; level <= max; level++) {
            if (!counted.contains(level)) {
                return false;
            }
        }
        return true;
    }

    /**
     * Format 1 (no level-0 entries): a {@link DisjunctionMaxQuery} (tie breaker 0, the MAX) of the parent's own k-NN and a
     * block join (MAX) over a diversified k-NN of the children — two HNSW searches. Only the parent field needs no filter
     * pass (only parents have [embedding]); the user filter restricts the parent k-NN and the joined parents.
     */
    private Query parentOrChildSearch(QueryShardContext context, List<Integer> childLevels, Query parentFilter, Query userFilter,
                                      Query parentCandidates) {
        List<Query> clauses = new ArrayList<>(2);
        if (counts(0)) {
            clauses.add(new KnnFloatVectorQuery(ChunkDocuments.EMBEDDING, vector, candidates(), parentCandidates));
        }
        BitSetProducer parents = context.bitsetFilter(parentFilter);
        MappedFieldType levelField = context.fieldMapper(ChunkDocuments.CHILDREN + "." + ChunkDocuments.LEVEL);
        // a format-1 index may hold level-0 entries written since: they count only when every level does
        Query childFilter = levels == null || levels.size() == MAX_LEVEL + 1 ? null : levelField.termsQuery(childLevels, context);
        Query best = new DiversifyingChildrenFloatKnnVectorQuery(ChunkDocuments.CHILDREN + "." + ChunkDocuments.EMBEDDING, vector,
            childFilter, candidates(), parents);
        Query join = new ToParentBlockJoinQuery(best, parents, ScoreMode.Max);
        clauses.add(userFilter == null ? join
            : new BooleanQuery.Builder().add(join, BooleanClause.Occur.MUST).add(userFilter, BooleanClause.Occur.FILTER).build());
        return clauses.size() == 1 ? clauses.get(0) : new DisjunctionMaxQuery(clauses, 0f);
    }

    @Override
    protected boolean doEquals(MultiGranularQueryBuilder o) {
        return Objects.equals(queryText, o.queryText) && Arrays.equals(vector, o.vector) && Objects.equals(match, o.match) && k == o.k
            && Objects.equals(numCandidates, o.numCandidates)
            && Objects.equals(levels, o.levels) && Objects.equals(filter, o.filter) && explainChild == o.explainChild
            && Objects.equals(model, o.model) && mode == o.mode && Objects.equals(fusion, o.fusion) && Objects.equals(pending, o.pending);
    }

    @Override
    protected int doHashCode() {
        return Objects.hash(queryText, Arrays.hashCode(vector), match, k, numCandidates, levels, filter, explainChild, model, mode, fusion);
    }

    @Override
    public String getWriteableName() {
        return NAME;
    }
}

package io.strata.query;

import io.strata.model.ModelRef;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.Query;
import org.opensearch.core.ParseField;
import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.common.io.stream.StreamOutput;
import org.opensearch.core.xcontent.ObjectParser;
import org.opensearch.core.xcontent.XContentBuilder;
import org.opensearch.core.xcontent.XContentParser;
import org.opensearch.index.query.AbstractQueryBuilder;
import org.opensearch.index.query.QueryBuilder;
import org.opensearch.index.query.QueryBuilderVisitor;
import org.opensearch.index.query.QueryCoordinatorContext;
import org.opensearch.index.query.QueryRewriteContext;
import org.opensearch.index.query.QueryShardContext;

import java.io.IOException;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * {@code multi_granular}: scores every parent chunk by the MAX over itself and its children at the chosen levels (LGMGC
 * §3.2) and returns the {@code k} best parents, not the best children — {@code k} parents for the whole request, whatever
 * the shard count.
 *
 * <pre>
 * {"multi_granular": {"query_text": "…", "k": 10, "levels": [0, 1, 2], "filter": {…}, "explain_child": true,
 *                     "evidence": {"chunks": 3, "sentences": 3}, "rescore": {"oversample_factor": 3}}}
 * </pre>
 * Exactly one of {@code query_text}, {@code vector} (the dense mode with a precomputed vector) or {@code match} (the
 * lexical mode). With {@code query_text} the {@code mode} chooses: {@code hybrid} (the default on a chunk index with
 * vectors: the dense and the lexical MAX fused by {@link Fusion}), {@code dense} (the paper's dense MAX: the text is
 * embedded on the coordinator with the model recorded in the chunk index mapping unless {@code model}/{@code model_id}
 * names one) or {@code lexical} (BM25 over parent and child texts, same MAX; the default on a chunk index without vectors).
 *
 * <p>This class holds the parameters, their parsing and validation. What the query becomes:
 * <ul>
 *   <li>on the coordinator of a request ({@code _search}, {@code _count}, {@code _explain}, {@code _validate}): planned by
 *   {@link QueryPlanner} — sub-searches compute the global top {@code k} parents under the restrictions around the query
 *   ({@link Restrictions}), and the shards of the request only look them up ({@link PlannedParentsQueryBuilder});</li>
 *   <li>without a coordinator (a rewrite on a shard): the per-shard forms, whose {@code k} is per shard — the graph search
 *   {@link DenseParentsQueryBuilder} for {@code vector}, {@link LexicalForm} for {@code match}. The sub-searches of the
 *   planning run these forms.</li>
 * </ul>
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
    private static final ParseField EVIDENCE = new ParseField("evidence");
    private static final ParseField RESCORE = Rescore.FIELD;

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
    /** Null: no evidence packs ({@link Evidence}). */
    private Evidence evidence;
    /** Null: {@link Rescore#auto}, chosen by each shard from its vector field. */
    private Rescore rescore;
    private final QueryServices services;
    /** What this query becomes once the coordinator has planned it ({@link QueryPlanner}); null while it has not. */
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
        if (vector != null) {
            checkVector(vector);
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

    /** Cosine needs a direction: at least one non-zero component, and every component finite. */
    private static void checkVector(float[] vector) {
        if (vector.length == 0) {
            throw new IllegalArgumentException("[" + NAME + "] [vector] must not be empty");
        }
        boolean nonZero = false;
        for (int i = 0; i < vector.length; i++) {
            if (!Float.isFinite(vector[i])) {
                throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] [vector] must hold finite numbers, got [%s] at [%d]",
                    NAME, vector[i], i));
            }
            nonZero |= vector[i] != 0;
        }
        if (!nonZero) {
            throw new IllegalArgumentException("[" + NAME + "] [vector] must not be all zeros: a cosine needs a direction");
        }
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
            if (m == Mode.LEXICAL && rescore != null) {
                throw new IllegalArgumentException("[" + NAME + "] [rescore] rescores the dense graph search: not with [mode: lexical]");
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

    /** Sets the evidence packs to return per parent (null: none). */
    public MultiGranularQueryBuilder evidence(Evidence e) {
        this.evidence = e;
        return this;
    }

    public Evidence evidence() {
        return evidence;
    }

    /** Sets the dense side's full-precision rescoring (null: on where the vectors are quantized); not for the lexical mode. */
    public MultiGranularQueryBuilder rescore(Rescore r) {
        if (r != null && (match != null || mode == Mode.LEXICAL)) {
            throw new IllegalArgumentException("[" + NAME + "] [rescore] rescores the dense graph search: not with [match] or "
                + "[mode: lexical]");
        }
        this.rescore = r;
        return this;
    }

    public Rescore rescore() {
        return rescore;
    }

    /** Whether the planned query must carry what explaining a parent needs (the vector, the lexical chunks). */
    boolean explains() {
        return explainChild || evidence != null;
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
        this.evidence = in.readOptionalWriteable(Evidence::new);
        this.rescore = in.readOptionalWriteable(Rescore::new);
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
        out.writeOptionalWriteable(evidence);
        out.writeOptionalWriteable(rescore);
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
        if (evidence != null) {
            builder.field(EVIDENCE.getPreferredName(), evidence);
        }
        if (rescore != null) {
            builder.field(RESCORE.getPreferredName(), rescore);
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
        Evidence evidence;
        Rescore rescore;
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
        PARSER.declareObject((p, v) -> p.evidence = v, (parser, c) -> Evidence.fromXContent(parser), EVIDENCE);
        PARSER.declareField((p, v) -> p.rescore = v, (parser, c) -> Rescore.fromXContent(parser), RESCORE,
            ObjectParser.ValueType.OBJECT_ARRAY_BOOLEAN_OR_STRING); // Rescore says what is allowed
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
        builder.evidence(p.evidence);
        builder.numCandidates(p.numCandidates);
        builder.rescore(p.rescore);
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
        QueryCoordinatorContext coordinator = context == null ? null : context.convertToCoordinatorContext();
        if (coordinator != null) {
            return QueryPlanner.plan(this, coordinator, context, services);
        }
        // no coordinator (a rewrite on a shard): the per-shard forms, whose k is per shard
        if (evidence != null) {
            throw new IllegalArgumentException("[" + NAME + "] [evidence] needs the planning of the request's coordinating node "
                + "(a search, count or explain request); not available where the query is rewritten on a shard");
        }
        if (vector != null) {
            return perShardDense(vector, k, candidates(), filter, explainChild).boost(boost).queryName(queryName);
        }
        if (match != null || mode == Mode.LEXICAL) {
            return LexicalForm.of(match != null ? match : queryText, levels, filter, explainChild ? 1 : 0).boost(boost).queryName(queryName);
        }
        throw new IllegalArgumentException("[" + NAME + "] [query_text] must be embedded on the coordinating node of a request; here, "
            + "use [vector] or [match]");
    }

    /** The dense form a shard runs: the graph search for this shard's {@code perShardK} best parents (raw scores). */
    DenseParentsQueryBuilder perShardDense(float[] v, int perShardK, int graphCandidates, QueryBuilder parentFilter, boolean explain) {
        return new DenseParentsQueryBuilder(v, perShardK, graphCandidates, levels, parentFilter, explain, rescore);
    }

    /** This query, waiting for the coordinator's planning ({@code done} answers null until it has finished). */
    MultiGranularQueryBuilder pending(Supplier<QueryBuilder> done) {
        MultiGranularQueryBuilder b = new MultiGranularQueryBuilder(queryText, vector, match, k, levels, filter, explainChild, model,
            services, done);
        b.mode = mode;
        b.fusion = fusion;
        b.evidence = evidence;
        b.numCandidates = numCandidates;
        b.rescore = rescore;
        return b.boost(boost).queryName(queryName);
    }

    String queryText() {
        return queryText;
    }

    float[] vector() {
        return vector;
    }

    String match() {
        return match;
    }

    int k() {
        return k;
    }

    List<Integer> levels() {
        return levels;
    }

    QueryBuilder filter() {
        return filter;
    }

    boolean explainChild() {
        return explainChild;
    }

    ModelRef model() {
        return model;
    }

    /** Restrictions and wrappers are found by walking the request's query tree: the filter is this query's child. */
    @Override
    public void visit(QueryBuilderVisitor visitor) {
        visitor.accept(this);
        if (filter != null) {
            filter.visit(visitor.getChildVisitor(BooleanClause.Occur.FILTER));
        }
    }

    @Override
    protected Query doToQuery(QueryShardContext context) {
        throw new IllegalStateException("[" + NAME + "] was not rewritten");
    }

    @Override
    protected boolean doEquals(MultiGranularQueryBuilder o) {
        return Objects.equals(queryText, o.queryText) && Arrays.equals(vector, o.vector) && Objects.equals(match, o.match) && k == o.k
            && Objects.equals(numCandidates, o.numCandidates)
            && Objects.equals(levels, o.levels) && Objects.equals(filter, o.filter) && explainChild == o.explainChild
            && Objects.equals(model, o.model) && mode == o.mode && Objects.equals(fusion, o.fusion) && Objects.equals(evidence, o.evidence)
            && Objects.equals(rescore, o.rescore) && Objects.equals(pending, o.pending);
    }

    @Override
    protected int doHashCode() {
        return Objects.hash(queryText, Arrays.hashCode(vector), match, k, numCandidates, levels, filter, explainChild, model, mode, fusion, evidence, rescore);
    }

    @Override
    public String getWriteableName() {
        return NAME;
    }
}

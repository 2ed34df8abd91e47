package io.strata.query;

import io.strata.chunkindex.ChunkDocuments;
import io.strata.chunkindex.ChunkIndexMeta;
import io.strata.chunkindex.VectorOptions;
import org.apache.lucene.document.IntPoint;
import org.apache.lucene.index.FieldInfo;
import org.apache.lucene.index.FilterLeafReader;
import org.apache.lucene.index.FloatVectorValues;
import org.apache.lucene.index.KnnVectorValues;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.index.PointValues;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.queries.function.FunctionScoreQuery;
import org.apache.lucene.search.DisjunctionMaxQuery;
import org.apache.lucene.search.DoubleValues;
import org.apache.lucene.search.DoubleValuesSource;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.KnnFloatVectorQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.join.BitSetProducer;
import org.apache.lucene.search.join.DiversifyingChildrenFloatKnnVectorQuery;
import org.apache.lucene.search.join.ScoreMode;
import org.apache.lucene.search.join.ToChildBlockJoinQuery;
import org.apache.lucene.search.join.ToParentBlockJoinQuery;
import org.opensearch.common.lucene.search.Queries;
import org.opensearch.common.xcontent.XContentFactory;
import org.opensearch.common.xcontent.XContentHelper;
import org.opensearch.core.common.bytes.BytesReference;
import org.opensearch.core.xcontent.MediaTypeRegistry;
import org.opensearch.core.xcontent.ToXContent;
import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.common.io.stream.StreamOutput;
import org.opensearch.core.xcontent.XContentBuilder;
import org.opensearch.core.xcontent.XContentParser;
import org.opensearch.index.mapper.MappedFieldType;
import org.opensearch.index.mapper.Mapper;
import org.opensearch.index.mapper.ObjectMapper;
import org.opensearch.index.query.AbstractQueryBuilder;
import org.opensearch.index.query.QueryBuilder;
import org.opensearch.index.query.QueryRewriteContext;
import org.opensearch.index.query.QueryShardContext;
import org.opensearch.index.query.QueryShardException;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

/**
 * The dense form of {@code multi_granular} that a shard runs: the graph search for the {@code k} parents of THIS shard with
 * the best chunk at the counted levels (so {@code k} is per shard here). Internal: the dense sub-search of
 * {@link QueryPlanner} sends it to every shard and keeps the global {@code k} best of their answers; without a
 * coordinator (a rewrite on a shard) {@code multi_granular} with {@code vector} becomes it directly.
 *
 * <p>On a format-2 chunk index (every parent also its own level-0 child): a {@link ToParentBlockJoinQuery} (score mode MAX)
 * over ONE {@link DiversifyingChildrenFloatKnnVectorQuery} on {@code children.embedding}, which finds the parents with the
 * best chunk at the counted levels. {@code levels: [0]} searches the parents' own {@code embedding} graph; a format-1
 * index gets the {@link DisjunctionMaxQuery} (tie breaker 0) of the parent's k-NN and the nested one (two HNSW searches).
 * Lucene engine of k-NN, the field's own similarity (cosine: (1 + cos) / 2). The search is approximate (HNSW, widened to
 * {@code candidates} parents). With {@link Rescore} (by default on a quantized field) the graph search collects
 * {@code oversample_factor} times as many parents, and each is scored by the exact MAX over its counted chunks' float
 * vectors (a {@link FunctionScoreQuery} of Lucene's full-precision similarity under the block join).
 */
public final class DenseParentsQueryBuilder extends AbstractQueryBuilder<DenseParentsQueryBuilder> {
    public static final String NAME = "strata_dense_parents";

    private final float[] vector;
    private final int k;
    private final int candidates;
    /** Null: every level counts. */
    private final List<Integer> levels;
    /** On parent fields, applied before the graph search. */
    private final QueryBuilder filter;
    private final boolean explainChild;
    /** Null: {@link Rescore#auto} of the shard's vector field. */
    private final Rescore rescore;

    DenseParentsQueryBuilder(float[] vector, int k, int candidates, List<Integer> levels, QueryBuilder filter, boolean explainChild) {
        this(vector, k, candidates, levels, filter, explainChild, null);
    }

    DenseParentsQueryBuilder(float[] vector, int k, int candidates, List<Integer> levels, QueryBuilder filter, boolean explainChild,
                             Rescore rescore) {
        this.vector = vector;
        this.k = k;
        this.candidates = Math.max(k, candidates);
        this.levels = levels == null ? null : List.copyOf(levels);
        this.filter = filter;
        this.explainChild = explainChild;
        this.rescore = rescore;
    }

    /** The levels the query counts (null: every level). */
    List<Integer> levels() {
        return levels;
    }

    public DenseParentsQueryBuilder(StreamInput in) throws IOException {
        super(in);
        this.vector = in.readFloatArray();
        this.k = in.readVInt();
        this.candidates = in.readVInt();
        this.levels = in.readBoolean() ? in.readList(StreamInput::readVInt) : null;
        this.filter = in.readOptionalNamedWriteable(QueryBuilder.class);
        this.explainChild = in.readBoolean();
        this.rescore = in.readOptionalWriteable(Rescore::new);
    }

    @Override
    protected void doWriteTo(StreamOutput out) throws IOException {
        out.writeFloatArray(vector);
        out.writeVInt(k);
        out.writeVInt(candidates);
        out.writeBoolean(levels != null);
        if (levels != null) {
            out.writeCollection(levels, StreamOutput::writeVInt);
        }
        out.writeOptionalNamedWriteable(filter);
        out.writeBoolean(explainChild);
        out.writeOptionalWriteable(rescore);
    }

    /** Users write {@code multi_granular}; this form exists only between the coordinator and the shards. */
    public static DenseParentsQueryBuilder fromXContent(XContentParser parser) {
        throw new IllegalArgumentException("[" + NAME + "] is internal to [" + MultiGranularQueryBuilder.NAME + "]; use ["
            + MultiGranularQueryBuilder.NAME + "] with [vector] or [query_text]");
    }

    @Override
    protected void doXContent(XContentBuilder builder, Params params) throws IOException {
        builder.startObject(NAME);
        builder.field("vector_dimension", vector.length);
        builder.field("k", k);
        builder.field("num_candidates", candidates);
        if (levels != null) {
            builder.field("levels", levels);
        }
        if (filter != null) {
            builder.field("filter", filter);
        }
        builder.field("explain_child", explainChild);
        if (rescore != null) {
            builder.field(Rescore.FIELD.getPreferredName(), rescore);
        }
        printBoostAndQueryName(builder);
        builder.endObject();
    }

    @Override
    protected QueryBuilder doRewrite(QueryRewriteContext context) throws IOException {
        QueryBuilder rewritten = filter == null ? null : filter.rewrite(context);
        return rewritten == filter ? this
            : new DenseParentsQueryBuilder(vector, k, candidates, levels, rewritten, explainChild, rescore).boost(boost).queryName(queryName);
    }

    @Override
    protected Query doToQuery(QueryShardContext context) throws IOException {
        MappedFieldType parentField = context.fieldMapper(ChunkDocuments.EMBEDDING);
        ObjectMapper children = context.getObjectMapper(ChunkDocuments.CHILDREN);
        if (parentField == null || children == null || children.nested().isNested() == false) {
            throw new QueryShardException(context, String.format(Locale.ROOT,
                "[%s] index [%s] is not a Strata chunk index with vectors (no [embedding] field or nested [children])",
                MultiGranularQueryBuilder.NAME, context.index().getName()));
        }
        ChunkIndexMeta meta = ChunkIndexMeta.ofMeta(context.getMapperService().documentMapper().meta());
        Integer dim = meta == null ? null : meta.dimension();
        if (dim != null && dim != vector.length) {
            throw new QueryShardException(context, String.format(Locale.ROOT,
                "[%s] the query vector has %d dimensions but index [%s] holds vectors of %d", MultiGranularQueryBuilder.NAME, vector.length,
                context.index().getName(), dim));
        }
        Query userFilter = filter == null ? null : filter.toQuery(context);
        List<Integer> childLevels = Levels.children(levels);
        List<Integer> effective = Levels.counted(levels);
        Rescore exact = rescore != null ? rescore : Rescore.auto(quantized(context, childLevels.isEmpty() ? ChunkDocuments.EMBEDDING
            : ChunkDocuments.CHILDREN + "." + ChunkDocuments.EMBEDDING));
        int graphCandidates = exact.graphCandidates(candidates, MultiGranularQueryBuilder.MAX_K);
        // a restriction from around the query on this shard (document-level security, an alias filter, a bool's filters)
        // joins the filter before the graph search: see PreFilterPushdown
        Function<Query, Query> search = restriction -> {
            Query restrictedFilter = restriction == null ? userFilter : userFilter == null ? restriction
                : new BooleanQuery.Builder().add(userFilter, BooleanClause.Occur.FILTER).add(restriction, BooleanClause.Occur.FILTER).build();
            return graphSearch(context, meta, childLevels, effective, restrictedFilter, graphCandidates, exact.enabled());
        };
        return new MultiGranularQuery(search.apply(null), k, graphCandidates, vector, effective, explainChild, search);
    }

    /** The graph search (MAX over parent and children) for the parents that match {@code userFilter} (null: all). */
    private Query graphSearch(QueryShardContext context, ChunkIndexMeta meta, List<Integer> childLevels, List<Integer> effective,
                              Query userFilter, int graphCandidates, boolean exact) {
        Query parentFilter = Queries.newNonNestedFilter();
        Query parentCandidates = userFilter == null ? null
            : new BooleanQuery.Builder().add(parentFilter, BooleanClause.Occur.FILTER).add(userFilter, BooleanClause.Occur.FILTER).build();
        if (childLevels.isEmpty()) {
            // levels [0]: the parents' own graph, which holds only parents: no level filter needed
            Query found = new KnnFloatVectorQuery(ChunkDocuments.EMBEDDING, vector, graphCandidates, parentCandidates);
            return exact ? new FunctionScoreQuery(found, fullPrecision(ChunkDocuments.EMBEDDING)) : found;
        } else if (meta != null && meta.selfInChildren()) {
            return oneNestedSearch(context, effective, parentFilter, parentCandidates, graphCandidates, exact);
        }
        return parentOrChildSearch(context, childLevels, parentFilter, userFilter, parentCandidates, graphCandidates, exact);
    }

    /**
     * Format 2: every parent is also its own level-0 child, so ONE diversified HNSW search over {@code children.embedding}
     * finds the parents with the best chunk at any counted level, and the block join (MAX) scores each by it — the LGMGC
     * MAX with one graph search instead of two (QueryBench, 100k chunks: 1.25-1.45x a plain k-NN against 1.58x for the
     * two-search form in the same run). Filters cost a pass over every matching child per query, so a level filter is
     * added only when this shard holds a level that does not count, and the parent filter is moved onto the children (the
     * children of matching parents) so that the search still finds k parents that match it.
     */
    private Query oneNestedSearch(QueryShardContext context, List<Integer> counted, Query parentFilter, Query parentCandidates,
                                  int graphCandidates, boolean exact) {
        BitSetProducer parents = context.bitsetFilter(parentFilter);
        String levelName = ChunkDocuments.CHILDREN + "." + ChunkDocuments.LEVEL;
        boolean all = levels == null || counted.size() == MultiGranularQueryBuilder.MAX_LEVEL + 1;
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
            childFilter, graphCandidates, parents);
        return new ToParentBlockJoinQuery(exact ? exactChildren(best, parents, levelFilter) : best, parents, ScoreMode.Max);
    }

    /**
     * The counted children of the parents the graph search {@code found}, each scored by its full-precision vector, so that
     * the block join's MAX over them is the exact MAX of those parents: the graph search (quantized, and diversified to one
     * child per parent) chose the parents, the float vectors score them.
     */
    private Query exactChildren(Query found, BitSetProducer parents, Query levelFilter) {
        Query children = new ToChildBlockJoinQuery(new ToParentBlockJoinQuery(found, parents, ScoreMode.None), parents);
        if (levelFilter != null) {
            children = new BooleanQuery.Builder().add(children, BooleanClause.Occur.MUST).add(levelFilter, BooleanClause.Occur.FILTER)
                .build();
        }
        return new FunctionScoreQuery(children, fullPrecision(ChunkDocuments.CHILDREN + "." + ChunkDocuments.EMBEDDING));
    }

    /** The field's own similarity on its raw float vectors (a quantized field keeps them), the score a float graph gives. */
    private DoubleValuesSource fullPrecision(String field) {
        return fullPrecision(vector, field);
    }

    /** {@code vector}'s similarity to {@code field}'s raw float vectors, by the field's own similarity function. */
    static DoubleValuesSource fullPrecision(float[] vector, String field) {
        return new FullPrecision(vector, field);
    }

    /**
     * Lucene's {@code FullPrecisionFloatVectorSimilarityValuesSource}, except where field-level security hides the field's
     * {@code FieldInfo} but not its vectors (the security plugin filters field infos, not {@code getFloatVectorValues}, so
     * k-NN's graph search still runs on them): Lucene's then fails on the missing field info (500); here the similarity is
     * read from the segment's own field infos, so the caller's rescored ranking is the graph search's, as on a float field.
     */
    private static final class FullPrecision extends DoubleValuesSource {
        private final float[] query;
        private final String field;

        FullPrecision(float[] query, String field) {
            this.query = query;
            this.field = field;
        }

        @Override
        public DoubleValues getValues(LeafReaderContext ctx, DoubleValues scores) throws IOException {
            FloatVectorValues values = ctx.reader().getFloatVectorValues(field);
            FieldInfo info = values == null ? null : FilterLeafReader.unwrap(ctx.reader()).getFieldInfos().fieldInfo(field);
            if (info == null) {
                return DoubleValues.EMPTY;
            }
            VectorSimilarityFunction similarity = info.getVectorSimilarityFunction();
            KnnVectorValues.DocIndexIterator it = values.iterator();
            return new DoubleValues() {
                @Override
                public double doubleValue() throws IOException {
                    return similarity.compare(query, values.vectorValue(it.index()));
                }

                @Override
                public boolean advanceExact(int doc) throws IOException {
                    return (it.docID() < doc ? it.advance(doc) : it.docID()) == doc;
                }
            };
        }

        @Override
        public boolean needsScores() {
            return false;
        }

        @Override
        public DoubleValuesSource rewrite(IndexSearcher searcher) {
            return this;
        }

        @Override
        public boolean isCacheable(LeafReaderContext ctx) {
            return true;
        }

        @Override
        public int hashCode() {
            return Objects.hash(field, Arrays.hashCode(query));
        }

        @Override
        public boolean equals(Object obj) {
            return obj instanceof FullPrecision o && field.equals(o.field) && Arrays.equals(query, o.query);
        }

        @Override
        public String toString() {
            return "FullPrecision(" + field + ")";
        }
    }

    /**
     * Whether the shard's vector field {@code field} is quantized ({@code method.parameters.encoder} in its mapping), read
     * from the field's mapper as {@code GET _mapping} shows it.
     */
    static boolean quantized(QueryShardContext context, String field) throws IOException {
        Mapper mapper = context.getMapperService().documentMapper().mappers().getMapper(field);
        if (mapper == null) {
            return false;
        }
        try (XContentBuilder b = XContentFactory.jsonBuilder()) {
            mapper.toXContent(b.startObject(), ToXContent.EMPTY_PARAMS).endObject();
            Map<String, Object> map = XContentHelper.convertToMap(BytesReference.bytes(b), false, MediaTypeRegistry.JSON).v2();
            return map.get(mapper.simpleName()) instanceof Map<?, ?> definition && VectorOptions.quantized(definition);
        }
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
     * pass (only parents have [embedding]); the filter restricts the parent k-NN and the joined parents.
     */
    private Query parentOrChildSearch(QueryShardContext context, List<Integer> childLevels, Query parentFilter, Query userFilter,
                                      Query parentCandidates, int graphCandidates, boolean exact) {
        List<Query> clauses = new ArrayList<>(2);
        if (Levels.counts(levels, 0)) {
            Query found = new KnnFloatVectorQuery(ChunkDocuments.EMBEDDING, vector, graphCandidates, parentCandidates);
            clauses.add(exact ? new FunctionScoreQuery(found, fullPrecision(ChunkDocuments.EMBEDDING)) : found);
        }
        BitSetProducer parents = context.bitsetFilter(parentFilter);
        MappedFieldType levelField = context.fieldMapper(ChunkDocuments.CHILDREN + "." + ChunkDocuments.LEVEL);
        // a format-1 index may hold level-0 entries written since: they count only when every level does
        Query childFilter = levels == null || levels.size() == MultiGranularQueryBuilder.MAX_LEVEL + 1 ? null
            : levelField.termsQuery(childLevels, context);
        Query best = new DiversifyingChildrenFloatKnnVectorQuery(ChunkDocuments.CHILDREN + "." + ChunkDocuments.EMBEDDING, vector,
            childFilter, graphCandidates, parents);
        Query join = new ToParentBlockJoinQuery(exact ? exactChildren(best, parents, childFilter) : best, parents, ScoreMode.Max);
        clauses.add(userFilter == null ? join
            : new BooleanQuery.Builder().add(join, BooleanClause.Occur.MUST).add(userFilter, BooleanClause.Occur.FILTER).build());
        return clauses.size() == 1 ? clauses.get(0) : new DisjunctionMaxQuery(clauses, 0f);
    }

    @Override
    protected boolean doEquals(DenseParentsQueryBuilder o) {
        return Arrays.equals(vector, o.vector) && k == o.k && candidates == o.candidates && Objects.equals(levels, o.levels)
            && Objects.equals(filter, o.filter) && explainChild == o.explainChild && Objects.equals(rescore, o.rescore);
    }

    @Override
    protected int doHashCode() {
        return Objects.hash(Arrays.hashCode(vector), k, candidates, levels, filter, explainChild, rescore);
    }

    @Override
    public String getWriteableName() {
        return NAME;
    }
}

package io.strata.query;

import io.strata.model.ModelRef;
import io.strata.chunkindex.ChunkDocuments;
import io.strata.plugin.StrataPlugin;
import io.strata.stats.StrataStats;
import org.apache.lucene.document.IntPoint;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.PointValues;
import org.apache.lucene.queries.function.FunctionScoreQuery;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.DisjunctionMaxQuery;
import org.apache.lucene.search.KnnFloatVectorQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.QueryVisitor;
import org.apache.lucene.search.join.DiversifyingChildrenFloatKnnVectorQuery;
import org.apache.lucene.search.join.ScoreMode;
import org.apache.lucene.search.join.ToChildBlockJoinQuery;
import org.apache.lucene.search.join.ToParentBlockJoinQuery;
import org.opensearch.common.compress.CompressedXContent;
import org.opensearch.common.xcontent.XContentFactory;
import org.opensearch.common.xcontent.XContentHelper;
import org.opensearch.core.common.bytes.BytesReference;
import org.opensearch.core.xcontent.MediaTypeRegistry;
import org.opensearch.core.xcontent.ToXContent;
import org.opensearch.index.mapper.MapperService;
import org.opensearch.index.query.QueryBuilder;
import org.opensearch.index.query.QueryBuilders;
import org.opensearch.index.query.QueryShardContext;
import org.opensearch.index.query.QueryShardException;
import org.opensearch.index.search.OpenSearchToParentBlockJoinQuery;
import org.opensearch.plugins.Plugin;
import org.opensearch.test.AbstractQueryTestCase;
import org.opensearch.test.TestGeoShapeFieldMapperPlugin;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.IntStream;

import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.instanceOf;
import static org.hamcrest.Matchers.not;

/**
 * {@code multi_granular} on top of OpenSearch's {@link AbstractQueryTestCase}: JSON (shuffled, every XContent type) and wire
 * round trips, equals/hashCode, unknown fields, boost and {@code _name}, rewrite, cacheability and the Lucene query, for random
 * {@code vector} and {@code match} builders, registered through {@link StrataPlugin#getQueries()} as on a node.
 *
 * <p><b>Runs only through {@code bin/strata-test}</b> (e.g. {@code STRATA_TEST_UNIT_ONLY=1 bin/strata-test
 * -Dtest=MultiGranularQueryBuilderRandomTests}): {@code OpenSearchTestCase} refuses to start as root, and the script runs the
 * tests as the unprivileged {@code strata} user. A plain {@code mvn test} as root fails in the framework's static initializer.
 *
 * <p>What is deliberately not covered here:
 * <ul>
 *   <li>{@code query_text}: it is embedded by an async action that only a coordinator rewrite context runs
 *       ({@code convertToCoordinatorContext()}); the framework rewrites with a shard context. Random builders therefore use
 *       {@code vector} or {@code match}; {@code query_text} gets its own round-trip test and a check that a shard rewrite
 *       refuses it with a clear message. Embedding during search is covered by the ITs.</li>
 *   <li>The k-NN plugin's {@code knn_vector} mapper is not on the test classpath, so the mapping declares
 *       {@code embedding} and {@code children.embedding} as {@code float} stand-ins. The builder only checks that the
 *       field exists and builds Lucene's HNSW queries directly, so the asserted Lucene query is the one a real chunk index
 *       gets; what is not checked here is that it runs against an HNSW graph (the Lucene query is never executed: the
 *       framework's {@code rewrite(Query)} is the identity). Execution is covered by the ITs against a node with k-NN.</li>
 *   <li>The format-1 form (chunk indices written before the parent became its own level-0 child: dis_max of two k-NN
 *       searches): the mapping here is format 2; {@code MultiGranularQueryIT} runs a format-1 index against brute force.</li>
 * </ul>
 */
public class MultiGranularQueryBuilderRandomTests extends AbstractQueryTestCase<MultiGranularQueryBuilder> {
    /** The dimension recorded in the test index's {@code _meta.strata.model}, as the processor records it. */
    private static final int DIMENSION = 8;
    private static final QueryServices SERVICES = new QueryServices(() -> null, () -> null, () -> null, new StrataStats(), () -> null);
    private static final String CHILD_TEXT = ChunkDocuments.CHILDREN + "." + ChunkDocuments.TEXT;
    private static final String CHILD_LEVEL = ChunkDocuments.CHILDREN + "." + ChunkDocuments.LEVEL;
    private static final String CHILD_EMBEDDING = ChunkDocuments.CHILDREN + "." + ChunkDocuments.EMBEDDING;

    @Override
    protected Collection<Class<? extends Plugin>> getPlugins() {
        // the framework's base mapping has a geo_shape field, whose mapper lives in a module: the framework's stand-in
        return List.of(StrataPlugin.class, TestGeoShapeFieldMapperPlugin.class);
    }

    @Override
    protected void initializeAdditionalMappings(MapperService mapperService) throws IOException {
        // a chunk index as the processor creates it, with float stand-ins for knn_vector (see the class Javadoc)
        // Locale.ROOT: the test framework picks a random default locale, some of which format digits outside ASCII
        String mapping = String.format(java.util.Locale.ROOT, """
            {"_meta": {"strata": {"format": 2, "model": {"model": "bge-small-en-v15-q", "dimension": %d}}},
             "properties": {
               "text": {"type": "text"},
               "embedding": {"type": "float"},
               "children": {"type": "nested", "properties": {
                 "level": {"type": "integer"}, "text": {"type": "text"}, "embedding": {"type": "float"}}}}}
            """, DIMENSION);
        mapperService.merge("_doc", new CompressedXContent(mapping), MapperService.MergeReason.MAPPING_UPDATE);
    }

    @Override
    protected MultiGranularQueryBuilder doCreateTestQueryBuilder() {
        return randomBuilder(randomBoolean());
    }

    private MultiGranularQueryBuilder randomBuilder(boolean semantic) {
        float[] vector = null;
        String match = null;
        if (semantic) {
            vector = new float[DIMENSION];
            for (int i = 0; i < vector.length; i++) {
                vector[i] = randomFloat() * 2 - 1;
            }
        } else {
            match = String.join(" ", randomList(1, 4, () -> randomAlphaOfLengthBetween(3, 10)));
        }
        Integer k = randomBoolean() ? null : randomIntBetween(1, 200);
        List<Integer> levels = randomBoolean() ? null
            : randomSubsetOf(randomIntBetween(1, MultiGranularQueryBuilder.MAX_LEVEL + 1),
                IntStream.rangeClosed(0, MultiGranularQueryBuilder.MAX_LEVEL).boxed().toList());
        QueryBuilder filter = randomBoolean() ? null : QueryBuilders.termQuery(KEYWORD_FIELD_NAME, randomAlphaOfLengthBetween(1, 10));
        Boolean explainChild = randomBoolean() ? null : randomBoolean();
        MultiGranularQueryBuilder b = MultiGranularQueryBuilder.of(null, vector, match, k, levels, filter, explainChild, null, SERVICES);
        if (randomBoolean()) { // the mode its input implies, spelled out
            b.mode(semantic ? MultiGranularQueryBuilder.Mode.DENSE : MultiGranularQueryBuilder.Mode.LEXICAL);
        }
        if (semantic && randomBoolean()) {
            int kk = k == null ? MultiGranularQueryBuilder.DEFAULT_K : k;
            b.numCandidates(randomIntBetween(kk, 4 * kk));
        }
        if (semantic && randomBoolean()) {
            b.rescore(randomBoolean() ? Rescore.OFF : new Rescore(true, randomFrom(1.0, 1.5, 3.0, Rescore.MAX_OVERSAMPLE_FACTOR)));
        }
        return b;
    }

    /** The builder's parameters as a user would have written them (the builder has no getters). */
    private static Map<String, Object> params(MultiGranularQueryBuilder builder) throws IOException {
        BytesReference json = BytesReference.bytes(builder.toXContent(XContentFactory.jsonBuilder(), ToXContent.EMPTY_PARAMS));
        @SuppressWarnings("unchecked")
        Map<String, Object> body = (Map<String, Object>) XContentHelper.convertToMap(json, false, MediaTypeRegistry.JSON).v2()
            .get(MultiGranularQueryBuilder.NAME);
        return body;
    }

    @SuppressWarnings("unchecked")
    private static List<Integer> levels(Map<String, Object> p) {
        return (List<Integer>) p.get("levels");
    }

    private static List<Integer> childLevels(Map<String, Object> p) {
        List<Integer> levels = levels(p);
        return IntStream.rangeClosed(1, MultiGranularQueryBuilder.MAX_LEVEL).filter(l -> levels == null || levels.contains(l))
            .boxed().toList();
    }

    private static boolean parentCounts(Map<String, Object> p) {
        return levels(p) == null || levels(p).contains(0);
    }

    /** The Lucene form of the builder's {@code filter}, built independently through the registered {@code term} query. */
    private Query userFilter(Map<String, Object> p, QueryShardContext context) throws IOException {
        Object filter = p.get("filter");
        if (filter == null) {
            return null;
        }
        String json = XContentFactory.jsonBuilder().map(castMap(filter)).toString();
        return rewriteAndFetch(parseQuery(json), new QueryShardContext(context)).toQuery(context);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> castMap(Object o) {
        return (Map<String, Object>) o;
    }

    @Override
    protected void doAssertLuceneQuery(MultiGranularQueryBuilder builder, Query query, QueryShardContext context) throws IOException {
        Map<String, Object> p = params(builder);
        if (p.containsKey("vector")) {
            assertSemantic(p, query, context);
        } else {
            assertLexical(p, query, context);
        }
    }

    /**
     * Format 2: a block join (MAX) over ONE diversified k-NN on {@code children.embedding} (the parent is its own level-0
     * child), restricted to the counted levels only when the shard holds another level, and to the children of parents
     * matching the user filter; {@code levels: [0]} alone: a k-NN on the parents' own {@code embedding}.
     */
    private void assertSemantic(Map<String, Object> p, Query query, QueryShardContext context) throws IOException {
        assertThat(query, instanceOf(MultiGranularQuery.class));
        MultiGranularQuery mg = (MultiGranularQuery) query;
        float[] vector = toFloats(p.get("vector"));
        int k = (Integer) p.get("k");
        // the graph search collects num_candidates (default 2k) parents; the query keeps the best k of them per shard
        int kept = p.containsKey("num_candidates") ? (Integer) p.get("num_candidates")
            : Math.min(MultiGranularQueryBuilder.MAX_K, 2 * k);
        // rescore: the graph collects ceil(factor × kept), at most MAX_K, and the exact MAX scores them; the stand-in float
        // fields here are not quantized, so without [rescore] it is off
        boolean rescored = p.get("rescore") instanceof Map<?, ?>;
        double factor = rescored ? ((Number) ((Map<?, ?>) p.get("rescore")).get("oversample_factor")).doubleValue() : 1;
        int candidates = (int) Math.min(MultiGranularQueryBuilder.MAX_K, Math.ceil(kept * factor));
        assertEquals(k, mg.k());
        assertEquals(candidates, mg.candidates());
        assertArrayEquals(vector, mg.vector(), 0f);
        assertEquals(p.get("explain_child"), mg.explainChild());
        List<Integer> effective = new ArrayList<>();
        if (parentCounts(p)) {
            effective.add(0);
        }
        effective.addAll(childLevels(p));
        // the set of counted levels matters, not their order (the builder keeps the user's)
        assertEquals(effective.size(), mg.levels().size());
        assertEquals(new HashSet<>(effective), new HashSet<>(mg.levels()));

        Query userFilter = userFilter(p, context);
        assertThat("one search, no dis_max of two", mg.delegate(), not(instanceOf(DisjunctionMaxQuery.class)));
        if (childLevels(p).isEmpty()) {
            Query found = mg.delegate();
            if (rescored) {
                assertThat(found, instanceOf(FunctionScoreQuery.class));
                assertEquals(DenseParentsQueryBuilder.fullPrecision(vector, ChunkDocuments.EMBEDDING),
                    ((FunctionScoreQuery) found).getSource());
                found = ((FunctionScoreQuery) found).getWrappedQuery();
            }
            assertThat(found, instanceOf(KnnFloatVectorQuery.class));
            KnnFloatVectorQuery knn = (KnnFloatVectorQuery) found;
            assertEquals(ChunkDocuments.EMBEDDING, knn.getField());
            assertEquals(candidates, knn.getK());
            assertArrayEquals(vector, knn.getTargetCopy(), 0f);
            if (userFilter == null) {
                assertNull("no filter pass where only parents hold [embedding]", knn.getFilter());
            } else {
                assertTrue("the user filter restricts the parent candidates", filterClauses(knn.getFilter()).contains(userFilter));
            }
            return;
        }
        assertThat(mg.delegate(), instanceOf(ToParentBlockJoinQuery.class));
        Query best = ((ToParentBlockJoinQuery) mg.delegate()).getChildQuery();
        if (rescored) {
            // the counted children of the parents found, scored by their float vectors, under the MAX join
            assertThat(best, instanceOf(FunctionScoreQuery.class));
            assertEquals(DenseParentsQueryBuilder.fullPrecision(vector, CHILD_EMBEDDING), ((FunctionScoreQuery) best).getSource());
            Query children = ((FunctionScoreQuery) best).getWrappedQuery();
            if (children instanceof BooleanQuery b) {
                children = b.clauses().stream().filter(c -> c.occur() == BooleanClause.Occur.MUST).map(BooleanClause::query).findFirst()
                    .orElseThrow();
            }
            assertThat(children, instanceOf(ToChildBlockJoinQuery.class));
            Query foundParents = ((ToChildBlockJoinQuery) children).getParentQuery();
            assertThat(foundParents, instanceOf(ToParentBlockJoinQuery.class));
            best = ((ToParentBlockJoinQuery) foundParents).getChildQuery();
        }
        assertThat(best, instanceOf(DiversifyingChildrenFloatKnnVectorQuery.class));
        KnnFloatVectorQuery knn = (KnnFloatVectorQuery) best;
        assertEquals(CHILD_EMBEDDING, knn.getField());
        assertEquals(candidates, knn.getK());
        assertArrayEquals(vector, knn.getTargetCopy(), 0f);
        Query levelFilter = context.fieldMapper(CHILD_LEVEL).termsQuery(effective, context);
        boolean needsLevelFilter = effective.size() < MultiGranularQueryBuilder.MAX_LEVEL + 1 && heldLevelNotCounted(context, effective);
        List<Query> childFilters = knn.getFilter() == null ? List.of()
            : knn.getFilter() instanceof BooleanQuery ? filterClauses(knn.getFilter()) : List.of(knn.getFilter());
        assertEquals("a level filter only when a held level does not count", needsLevelFilter, childFilters.contains(levelFilter));
        List<Query> ofParents = childFilters.stream().filter(q -> q instanceof ToChildBlockJoinQuery).toList();
        if (userFilter == null) {
            assertTrue("no parent filter pass without a user filter", ofParents.isEmpty());
        } else {
            assertEquals("the user filter picks the children of matching parents, before the search", 1, ofParents.size());
            assertTrue(filterClauses(((ToChildBlockJoinQuery) ofParents.get(0)).getParentQuery()).contains(userFilter));
        }
        assertEquals("nothing else filters the children", childFilters.size(), ofParents.size() + (needsLevelFilter ? 1 : 0));
    }

    /** Whether the shard's reader holds a child level outside {@code counted} (unknown without a reader: assume so). */
    private static boolean heldLevelNotCounted(QueryShardContext context, List<Integer> counted) throws IOException {
        if (context.getIndexReader() == null) {
            return true;
        }
        Set<Integer> held = new HashSet<>();
        for (LeafReaderContext leaf : context.getIndexReader().leaves()) {
            PointValues points = leaf.reader().getPointValues(CHILD_LEVEL);
            if (points != null && points.size() > 0) {
                int min = IntPoint.decodeDimension(points.getMinPackedValue(), 0);
                int max = IntPoint.decodeDimension(points.getMaxPackedValue(), 0);
                IntStream.rangeClosed(min, max).forEach(held::add);
            }
        }
        held.removeAll(counted);
        return !held.isEmpty();
    }

    /** BM25 with the same MAX: dis_max of a match on the parent's text and a nested (MAX) match on children of the levels. */
    private void assertLexical(Map<String, Object> p, Query query, QueryShardContext context) throws IOException {
        Query q = query;
        Query userFilter = userFilter(p, context);
        if (userFilter != null) {
            assertThat(q, instanceOf(BooleanQuery.class));
            assertTrue(filterClauses(q).contains(userFilter));
            q = ((BooleanQuery) q).clauses().stream().filter(c -> c.occur() == BooleanClause.Occur.MUST).map(BooleanClause::query)
                .findFirst().orElseThrow();
        }
        List<Query> clauses = disjuncts(q);
        assertEquals((parentCounts(p) ? 1 : 0) + (childLevels(p).isEmpty() ? 0 : 1), clauses.size());
        int next = 0;
        if (parentCounts(p)) {
            assertEquals(Set.of(ChunkDocuments.TEXT), fields(clauses.get(next++)));
        }
        if (!childLevels(p).isEmpty()) {
            Query nested = clauses.get(next);
            assertThat(nested, instanceOf(OpenSearchToParentBlockJoinQuery.class));
            OpenSearchToParentBlockJoinQuery join = (OpenSearchToParentBlockJoinQuery) nested;
            // getPath() is null in 3.4 for this query; the child query's fields below pin the [children] path
            assertEquals(ScoreMode.Max, join.getScoreMode());
            if (childLevels(p).size() < MultiGranularQueryBuilder.MAX_LEVEL) {
                assertEquals(Set.of(CHILD_TEXT, CHILD_LEVEL), fields(join.getChildQuery()));
                assertTrue("children are restricted to the chosen levels",
                    filterClauses(join.getChildQuery()).contains(context.fieldMapper(CHILD_LEVEL).termsQuery(childLevels(p), context)));
            } else {
                // every child level counts: no level filter (the parent's level-0 entry has no text to match)
                assertEquals(Set.of(CHILD_TEXT), fields(join.getChildQuery()));
            }
        }
    }

    private static float[] toFloats(Object list) {
        List<?> values = (List<?>) list;
        float[] v = new float[values.size()];
        for (int i = 0; i < v.length; i++) {
            v[i] = ((Number) values.get(i)).floatValue();
        }
        return v;
    }

    /** The clauses of a MAX: a tie-breaker-0 dis_max, or the single clause itself. */
    private static List<Query> disjuncts(Query q) {
        if (q instanceof DisjunctionMaxQuery max) {
            assertThat("MAX, not a blend", max.getTieBreakerMultiplier(), equalTo(0f));
            return List.copyOf(max.getDisjuncts());
        }
        return List.of(q);
    }

    /** FILTER clauses of a (possibly nested) boolean query, flattened one level into nested filter-only bools. */
    private static List<Query> filterClauses(Query q) {
        List<Query> out = new ArrayList<>();
        if (q instanceof BooleanQuery b) {
            for (BooleanClause c : b.clauses()) {
                if (c.occur() == BooleanClause.Occur.FILTER) {
                    out.add(c.query());
                    out.addAll(filterClauses(c.query()));
                }
            }
        }
        return out;
    }

    private static Set<String> fields(Query q) {
        Set<String> fields = new HashSet<>();
        q.visit(new QueryVisitor() {
            @Override
            public boolean acceptField(String field) {
                fields.add(field);
                return true;
            }

            @Override
            public QueryVisitor getSubVisitor(BooleanClause.Occur occur, Query parent) {
                return this;
            }
        });
        return fields;
    }

    /**
     * Every builder must be rewritten first: without a coordinator into its per-shard form (the dense graph search, or the
     * lexical core queries), which then becomes a Lucene query.
     */
    @Override
    public void testMustRewrite() throws IOException {
        QueryShardContext context = createShardContext();
        context.setAllowUnmappedFields(true);
        for (boolean semantic : new boolean[] { true, false }) {
            MultiGranularQueryBuilder b = randomBuilder(semantic);
            IllegalStateException e = expectThrows(IllegalStateException.class, () -> b.toQuery(context));
            assertThat(e.getMessage(), containsString("was not rewritten"));
            assertNotNull(b.rewrite(context).toQuery(context));
        }
    }

    public void testRewrite_ofQueryText_onAShardContext_isRefusedWithTheReason() throws IOException {
        MultiGranularQueryBuilder b = MultiGranularQueryBuilder.of("who is Emma?", null, null, null, null, null, null, null, SERVICES);
        IllegalArgumentException e = expectThrows(IllegalArgumentException.class, () -> b.rewrite(createShardContext()));
        assertThat(e.getMessage(), containsString("[query_text] must be embedded on the coordinating node"));
    }

    public void testQueryText_roundTripsThroughJsonAndTheWireAsRegisteredByThePlugin() throws IOException {
        MultiGranularQueryBuilder b = MultiGranularQueryBuilder.of("who is Emma?", null, null, randomIntBetween(1, 50),
            randomBoolean() ? null : List.of(0, 2), randomBoolean() ? null : QueryBuilders.termQuery(KEYWORD_FIELD_NAME, "x"),
            randomBoolean(), randomBoolean() ? null : io.strata.model.ModelRef.embedded("bge-small-en-v15-q"), SERVICES);
        MultiGranularQueryBuilder.Mode mode = randomFrom(MultiGranularQueryBuilder.Mode.HYBRID, MultiGranularQueryBuilder.Mode.DENSE, null);
        b.mode(mode);
        if (mode != MultiGranularQueryBuilder.Mode.DENSE && randomBoolean()) {
            b.fusion(new Fusion(randomFrom(Fusion.Method.values()), randomDouble(), randomBoolean() ? null : randomIntBetween(50, 500),
                randomIntBetween(0, 100)));
        }
        assertEquals(b, parseQuery(b));
        assertEquals(b, assertSerialization(b));
    }

    public void testToQuery_whenVectorDimensionDiffersFromTheIndex_failsNamingBoth() throws IOException {
        float[] v = new float[DIMENSION + 1];
        v[0] = 1;
        MultiGranularQueryBuilder b = MultiGranularQueryBuilder.of(null, v, null, null, null, null, null, null, SERVICES);
        QueryShardException e = expectThrows(QueryShardException.class, () -> b.rewrite(createShardContext()).toQuery(createShardContext()));
        assertThat(e.getMessage(), containsString("has " + (DIMENSION + 1) + " dimensions"));
        assertThat(e.getMessage(), containsString("vectors of " + DIMENSION));
    }
}

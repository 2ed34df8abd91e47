package io.strata.query;

import io.strata.chunkindex.ChunkDocuments;
import org.apache.lucene.search.join.ScoreMode;
import org.opensearch.index.query.BoolQueryBuilder;
import org.opensearch.index.query.DisMaxQueryBuilder;
import org.opensearch.index.query.InnerHitBuilder;
import org.opensearch.index.query.NestedQueryBuilder;
import org.opensearch.index.query.QueryBuilder;
import org.opensearch.index.query.QueryBuilders;
import org.opensearch.search.fetch.subphase.FetchSourceContext;

import java.util.List;

/**
 * The lexical form of {@code multi_granular}: a plain OpenSearch query — {@code dis_max} (tie breaker 0: the MAX) of BM25
 * on the parent's text and a nested BM25 (score mode max) on the children's texts at the counted levels — so a parent is
 * scored by its best chunk. With {@code explain_child} the best child comes back as the inner hit
 * {@value BestChildFetchSubPhase#FIELD}. Per shard it ranks every parent; the lexical sub-search of {@link QueryPlanner}
 * keeps the global {@code k} best.
 */
final class LexicalForm {
    private LexicalForm() {}

    static QueryBuilder of(String text, List<Integer> levels, QueryBuilder filter, boolean explainChild) {
        DisMaxQueryBuilder max = QueryBuilders.disMaxQuery().tieBreaker(0f);
        if (Levels.counts(levels, 0)) {
            max.add(QueryBuilders.matchQuery(ChunkDocuments.TEXT, text));
        }
        List<Integer> childLevels = Levels.children(levels);
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
        return filter == null ? max : QueryBuilders.boolQuery().must(max).filter(filter);
    }
}

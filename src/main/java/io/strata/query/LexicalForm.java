package io.strata.query;

import io.strata.chunkindex.ChunkDocuments;
import org.apache.lucene.search.join.ScoreMode;
import org.opensearch.index.query.DisMaxQueryBuilder;
import org.opensearch.index.query.InnerHitBuilder;
import org.opensearch.index.query.NestedQueryBuilder;
import org.opensearch.index.query.QueryBuilder;
import org.opensearch.index.query.QueryBuilders;
import org.opensearch.search.fetch.subphase.FetchSourceContext;

import java.util.ArrayList;
import java.util.List;

/**
 * The lexical form of {@code multi_granular}: a plain OpenSearch query — {@code dis_max} (tie breaker 0: the MAX) of BM25
 * on the parent's text and a nested BM25 (score mode max) on the children's texts at the counted levels — so a parent is
 * scored by its best chunk. A chunk's score is the BM25 of its text plus that of its contextual header
 * ({@code context_header}, written only by pipelines with {@code context.lexical}; a chunk without one scores its text
 * alone, as before headers existed). With {@code innerHits} &gt; 0 ({@code explain_child}: 1; {@code evidence}: its chunk count) the
 * best children come back as the inner hits {@value BestChildFetchSubPhase#FIELD}. Per shard it ranks every parent; the lexical sub-search of {@link QueryPlanner}
 * keeps the global {@code k} best.
 */
final class LexicalForm {
    private LexicalForm() {}

    static QueryBuilder of(String text, List<Integer> levels, QueryBuilder filter, int innerHits) {
        DisMaxQueryBuilder max = QueryBuilders.disMaxQuery().tieBreaker(0f);
        if (Levels.counts(levels, 0)) {
            max.add(textAndHeader("", text));
        }
        QueryBuilder child = childQuery(text, levels);
        if (child != null) {
            NestedQueryBuilder nested = QueryBuilders.nestedQuery(ChunkDocuments.CHILDREN, child, ScoreMode.Max);
            if (innerHits > 0) {
                nested.innerHit(new InnerHitBuilder(BestChildFetchSubPhase.FIELD).setSize(innerHits)
                    .setFetchSourceContext(new FetchSourceContext(true, new String[] { "children.level", "children.ordinal",
                        "children.text", "children.start", "children.end" }, null)));
            }
            max.add(nested);
        }
        return filter == null ? max : QueryBuilders.boolQuery().must(max).filter(filter);
    }

    /**
     * The query a child chunk is scored with (its BM25 is the parent's lexical score when it is the best); null when no
     * child level is counted.
     */
    static QueryBuilder childQuery(String text, List<Integer> levels) {
        List<Integer> childLevels = Levels.children(levels);
        if (childLevels.isEmpty()) {
            return null;
        }
        QueryBuilder child = textAndHeader(ChunkDocuments.CHILDREN + ".", text);
        if (childLevels.size() < MultiGranularQueryBuilder.MAX_LEVEL) {
            // with every child level counted the filter is left out: it would hold for every child with a text (the
            // parent's own level-0 entry has none), and it cost a conjunction on each child the text matched
            child = QueryBuilders.boolQuery().must(child)
                .filter(QueryBuilders.termsQuery(ChunkDocuments.CHILDREN + "." + ChunkDocuments.LEVEL, childLevels));
        }
        return child;
    }

    /**
     * The lexical side's best chunks of one parent, best first, at most {@code n}, given its best children (best first) and
     * its lexical score (the MAX of its own text's and its best child's): the parent's own text first when it scored the MAX
     * (below it, the parent's own score is not known, so it is not listed), then the children.
     */
    static List<PlannedParentsQueryBuilder.SideChunk> bestChunks(float parentScore, List<PlannedParentsQueryBuilder.SideChunk> children,
                                                                 int n) {
        List<PlannedParentsQueryBuilder.SideChunk> out = new ArrayList<>();
        if (children.isEmpty() || parentScore > children.get(0).score()) {
            out.add(new PlannedParentsQueryBuilder.SideChunk(0, 0, parentScore));
        }
        for (PlannedParentsQueryBuilder.SideChunk c : children) {
            if (out.size() >= n) {
                break;
            }
            out.add(c);
        }
        return out;
    }

    /** BM25 of a chunk's text plus that of its header: either matching is a match; the scores add up. */
    static QueryBuilder textAndHeader(String prefix, String text) {
        return QueryBuilders.boolQuery().minimumShouldMatch(1)
            .should(QueryBuilders.matchQuery(prefix + ChunkDocuments.TEXT, text))
            .should(QueryBuilders.matchQuery(prefix + ChunkDocuments.CONTEXT_HEADER, text));
    }
}

package io.strata.query;

import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.PostingsEnum;
import org.apache.lucene.index.Terms;
import org.apache.lucene.index.TermsEnum;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.search.Explanation;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.MatchNoDocsQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.QueryVisitor;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.join.BitSetProducer;
import org.apache.lucene.util.BitSet;
import org.apache.lucene.util.Bits;
import org.opensearch.index.mapper.IdFieldMapper;
import org.opensearch.index.mapper.Uid;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The shard side of a planned {@code multi_granular} query: the planned parents of this index, looked up by {@code _id} and
 * scored with the score the coordinator planned. Nested children carry their parent's {@code _id} too, so only the parent
 * (root) document of each block is taken. Keeps what {@link BestChildFetchSubPhase} needs.
 */
final class PlannedParentsQuery extends Query implements ExplainedParents {
    private final MultiGranularQueryBuilder.Mode mode;
    private final Map<String, PlannedParentsQueryBuilder.Parent> parents;
    private final BitSetProducer rootDocs;
    private final float[] vector;
    private final List<Integer> levels;
    private final boolean explainChild;
    /** Null: no evidence packs. */
    private final PlannedParentsQueryBuilder.EvidenceSpec evidence;
    /** The lexical side's words for visitors (highlighting), never run; null when no lexical side ran. */
    private final Query words;

    PlannedParentsQuery(MultiGranularQueryBuilder.Mode mode, Map<String, PlannedParentsQueryBuilder.Parent> parents,
                        BitSetProducer rootDocs, float[] vector, List<Integer> levels, boolean explainChild,
                        PlannedParentsQueryBuilder.EvidenceSpec evidence, Query words) {
        this.mode = mode;
        this.parents = Map.copyOf(parents);
        this.rootDocs = rootDocs;
        this.vector = vector;
        this.levels = List.copyOf(levels);
        this.explainChild = explainChild;
        this.evidence = evidence;
        this.words = words;
    }

    @Override
    public MultiGranularQueryBuilder.Mode mode() {
        return mode;
    }

    @Override
    public PlannedParentsQueryBuilder.Parent parent(String id, int doc) {
        return id == null ? null : parents.get(id);
    }

    @Override
    public float[] vector() {
        return vector;
    }

    @Override
    public List<Integer> levels() {
        return levels;
    }

    @Override
    public boolean explainChild() {
        return explainChild;
    }

    @Override
    public PlannedParentsQueryBuilder.EvidenceSpec evidence() {
        return evidence;
    }

    @Override
    public Query rewrite(IndexSearcher searcher) throws IOException {
        List<ScoreDoc> hits = new ArrayList<>(parents.size());
        for (LeafReaderContext leaf : searcher.getIndexReader().leaves()) {
            Terms terms = leaf.reader().terms(IdFieldMapper.NAME);
            BitSet roots = rootDocs.getBitSet(leaf);
            if (terms == null || roots == null) {
                continue;
            }
            Bits live = leaf.reader().getLiveDocs();
            TermsEnum ids = terms.iterator();
            PostingsEnum postings = null;
            for (Map.Entry<String, PlannedParentsQueryBuilder.Parent> e : parents.entrySet()) {
                if (!ids.seekExact(Uid.encodeId(e.getKey()))) {
                    continue;
                }
                postings = ids.postings(postings, PostingsEnum.NONE);
                for (int doc = postings.nextDoc(); doc != DocIdSetIterator.NO_MORE_DOCS; doc = postings.nextDoc()) {
                    if (roots.get(doc) && (live == null || live.get(doc))) {
                        Fusion.Fused fused = e.getValue().fused();
                        hits.add(new ScoredDocsQuery.Explained(leaf.docBase + doc, fused.score(), sides(mode, fused.dense(), fused.lexical(),
                            fused.score(), fused.denseShare(), fused.lexicalShare())));
                    }
                }
            }
        }
        return hits.isEmpty() ? new MatchNoDocsQuery("no planned parent on this shard")
            : new ScoredDocsQuery(hits.toArray(ScoreDoc[]::new), searcher.getIndexReader(), "multi_granular " + mode.key()
                + ": among the top k parents planned on the coordinator, with the score planned there");
    }

    /**
     * What each side that ran added to a parent's score ({@link Fusion}: its weight times the parent's normalised score,
     * or its weighted reciprocal rank), with the side's raw score, the MAX over the parent's chunks of the k-NN score
     * (dense) or of BM25 (lexical). A side that did not find the parent in its window adds nothing. In the dense or lexical
     * mode the one side is the whole score.
     */
    static Explanation[] sides(MultiGranularQueryBuilder.Mode mode, float dense, float lexical, float score, double denseShare,
                               double lexicalShare) {
        return switch (mode) {
            case DENSE -> new Explanation[] { side("dense", "k-NN score", dense, score) };
            case LEXICAL -> new Explanation[] { side("lexical", "BM25", lexical, score) };
            case HYBRID -> new Explanation[] { side("dense", "k-NN score", dense, (float) denseShare),
                side("lexical", "BM25", lexical, (float) lexicalShare) };
        };
    }

    private static Explanation side(String name, String scoring, float raw, float added) {
        return Float.isNaN(raw) ? Explanation.noMatch(name + " side: the parent is not in its window")
            : Explanation.match(added, name + " side: the parent's best chunk's " + scoring + " " + raw);
    }

    /**
     * A leaf, but for the lexical side's words: a highlighter collects them as it does a {@code match} query's, so
     * {@code highlight} needs no {@code highlight_query} when a lexical side ran. The dense side has no words (as {@code knn}).
     */
    @Override
    public void visit(QueryVisitor visitor) {
        if (words == null) {
            visitor.visitLeaf(this);
        } else {
            words.visit(visitor.getSubVisitor(BooleanClause.Occur.SHOULD, this));
        }
    }

    @Override
    public String toString(String field) {
        return "strata_planned_parents(" + mode.key() + ", " + parents.size() + " parents)";
    }

    @Override
    public boolean equals(Object o) {
        return sameClassAs(o) && mode == ((PlannedParentsQuery) o).mode && parents.equals(((PlannedParentsQuery) o).parents)
            && rootDocs.equals(((PlannedParentsQuery) o).rootDocs) && java.util.Arrays.equals(vector, ((PlannedParentsQuery) o).vector)
            && levels.equals(((PlannedParentsQuery) o).levels) && explainChild == ((PlannedParentsQuery) o).explainChild
            && Objects.equals(evidence, ((PlannedParentsQuery) o).evidence) && Objects.equals(words, ((PlannedParentsQuery) o).words);
    }

    @Override
    public int hashCode() {
        return Objects.hash(classHash(), mode, parents, java.util.Arrays.hashCode(vector), levels, explainChild, evidence, words);
    }
}

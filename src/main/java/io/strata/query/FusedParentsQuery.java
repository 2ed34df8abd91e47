package io.strata.query;

import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.PostingsEnum;
import org.apache.lucene.index.Terms;
import org.apache.lucene.index.TermsEnum;
import org.apache.lucene.search.DocIdSetIterator;
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
 * The shard side of a hybrid {@code multi_granular} query: the fused parents of this index, looked up by {@code _id} and
 * scored with the fused score the coordinator computed. Nested children carry their parent's {@code _id} too, so only
 * the parent (root) document of each block is taken. Keeps the fusion details for {@link BestChildFetchSubPhase}.
 */
final class FusedParentsQuery extends Query {
    private final Map<String, FusedParentsQueryBuilder.Parent> parents;
    private final BitSetProducer rootDocs;
    private final float[] vector;
    private final List<Integer> levels;
    private final boolean explainChild;

    FusedParentsQuery(Map<String, FusedParentsQueryBuilder.Parent> parents, BitSetProducer rootDocs, float[] vector, List<Integer> levels,
                      boolean explainChild) {
        this.parents = Map.copyOf(parents);
        this.rootDocs = rootDocs;
        this.vector = vector;
        this.levels = List.copyOf(levels);
        this.explainChild = explainChild;
    }

    FusedParentsQueryBuilder.Parent parent(String id) {
        return parents.get(id);
    }

    float[] vector() {
        return vector;
    }

    List<Integer> levels() {
        return levels;
    }

    boolean explainChild() {
        return explainChild;
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
            for (Map.Entry<String, FusedParentsQueryBuilder.Parent> e : parents.entrySet()) {
                if (!ids.seekExact(Uid.encodeId(e.getKey()))) {
                    continue;
                }
                postings = ids.postings(postings, PostingsEnum.NONE);
                for (int doc = postings.nextDoc(); doc != DocIdSetIterator.NO_MORE_DOCS; doc = postings.nextDoc()) {
                    if (roots.get(doc) && (live == null || live.get(doc))) {
                        hits.add(new ScoreDoc(leaf.docBase + doc, e.getValue().fused().score()));
                    }
                }
            }
        }
        return hits.isEmpty() ? new MatchNoDocsQuery("no fused parent on this shard")
            : new ScoredDocsQuery(hits.toArray(ScoreDoc[]::new), searcher.getIndexReader(),
                "multi_granular hybrid: the dense and the lexical MAX fused on the coordinator");
    }

    @Override
    public void visit(QueryVisitor visitor) {
        visitor.visitLeaf(this);
    }

    @Override
    public String toString(String field) {
        return "strata_fused_parents(" + parents.size() + " parents)";
    }

    @Override
    public boolean equals(Object o) {
        return sameClassAs(o) && parents.equals(((FusedParentsQuery) o).parents) && rootDocs.equals(((FusedParentsQuery) o).rootDocs)
            && java.util.Arrays.equals(vector, ((FusedParentsQuery) o).vector) && levels.equals(((FusedParentsQuery) o).levels)
            && explainChild == ((FusedParentsQuery) o).explainChild;
    }

    @Override
    public int hashCode() {
        return Objects.hash(classHash(), parents, java.util.Arrays.hashCode(vector), levels, explainChild);
    }
}

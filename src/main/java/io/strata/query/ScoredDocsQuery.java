package io.strata.query;

import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.search.Explanation;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.QueryVisitor;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.ScoreMode;
import org.apache.lucene.search.Scorer;
import org.apache.lucene.search.ScorerSupplier;
import org.apache.lucene.search.Weight;

import java.util.Arrays;
import java.util.Comparator;
import java.util.Objects;

/**
 * Matches exactly the given documents of one reader with the given scores: the k best parents that
 * {@link MultiGranularQuery} kept of the graph search's candidates on this shard. Only valid for the reader it was made
 * from (checked, as Lucene's own k-NN queries do).
 */
final class ScoredDocsQuery extends Query {
    /** Global doc ids, ascending, and their scores. */
    private final int[] docs;
    private final float[] scores;
    private final Object readerId;
    /** What the scores are, for {@code explain}. */
    private final String description;
    /** Per document, what its score is made of, for {@code explain} (empty: nothing beyond the description). */
    private final Explanation[][] details;

    private static final Explanation[] NO_DETAILS = new Explanation[0];

    /** A hit whose score {@code explain} breaks down into {@code details} (scaled by the query's boost, as the score is). */
    static final class Explained extends ScoreDoc {
        final Explanation[] details;

        Explained(int doc, float score, Explanation... details) {
            super(doc, score);
            this.details = details;
        }
    }

    ScoredDocsQuery(ScoreDoc[] hits, IndexReader reader, String description) {
        ScoreDoc[] sorted = hits.clone();
        Arrays.sort(sorted, Comparator.comparingInt(h -> h.doc));
        this.docs = new int[sorted.length];
        this.scores = new float[sorted.length];
        this.details = new Explanation[sorted.length][];
        for (int i = 0; i < sorted.length; i++) {
            docs[i] = sorted[i].doc;
            scores[i] = sorted[i].score;
            details[i] = sorted[i] instanceof Explained e ? e.details : NO_DETAILS;
        }
        this.readerId = reader.getContext().id();
        this.description = description;
    }

    @Override
    public Weight createWeight(IndexSearcher searcher, ScoreMode scoreMode, float boost) {
        if (searcher.getIndexReader().getContext().id() != readerId) {
            throw new IllegalStateException("[multi_granular] top parents were computed on another reader");
        }
        return new Weight(this) {
            @Override
            public ScorerSupplier scorerSupplier(LeafReaderContext context) {
                int from = lowerBound(context.docBase);
                int to = lowerBound(context.docBase + context.reader().maxDoc());
                if (from == to) {
                    return null;
                }
                return new DefaultScorerSupplier(new SegmentScorer(context.docBase, from, to, boost));
            }

            @Override
            public Explanation explain(LeafReaderContext context, int doc) {
                int i = Arrays.binarySearch(docs, context.docBase + doc);
                if (i < 0) {
                    return Explanation.noMatch("not among the top parents of [multi_granular]");
                }
                Explanation[] parts = new Explanation[details[i].length];
                for (int p = 0; p < parts.length; p++) {
                    Explanation d = details[i][p];
                    parts[p] = d.isMatch() ? Explanation.match(d.getValue().floatValue() * boost, d.getDescription(), d.getDetails())
                        : d;
                }
                return Explanation.match(scores[i] * boost, description, parts);
            }

            @Override
            public boolean isCacheable(LeafReaderContext context) {
                return true;
            }
        };
    }

    /** Index of the first doc id ≥ {@code doc}. */
    private int lowerBound(int doc) {
        int i = Arrays.binarySearch(docs, doc);
        return i >= 0 ? i : -i - 1;
    }

    /** The documents [from, to) of one segment. */
    private final class SegmentScorer extends Scorer {
        private final int docBase;
        private final int from;
        private final int to;
        private final float boost;
        private int at;

        SegmentScorer(int docBase, int from, int to, float boost) {
            this.docBase = docBase;
            this.from = from;
            this.to = to;
            this.boost = boost;
            this.at = from - 1;
        }

        @Override
        public int docID() {
            return at < from ? -1 : at >= to ? DocIdSetIterator.NO_MORE_DOCS : docs[at] - docBase;
        }

        @Override
        public float score() {
            return scores[at] * boost;
        }

        @Override
        public float getMaxScore(int upTo) {
            float max = 0;
            for (int i = Math.max(at, from); i < to && docs[i] - docBase <= upTo; i++) {
                max = Math.max(max, scores[i]);
            }
            return max * boost;
        }

        @Override
        public DocIdSetIterator iterator() {
            return new DocIdSetIterator() {
                @Override
                public int docID() {
                    return SegmentScorer.this.docID();
                }

                @Override
                public int nextDoc() {
                    at = Math.min(at + 1, to);
                    return docID();
                }

                @Override
                public int advance(int target) {
                    while (docID() < target) {
                        nextDoc();
                    }
                    return docID();
                }

                @Override
                public long cost() {
                    return to - from;
                }
            };
        }
    }

    @Override
    public void visit(QueryVisitor visitor) {
        visitor.visitLeaf(this);
    }

    @Override
    public String toString(String field) {
        return "scored_docs(" + docs.length + " parents)";
    }

    @Override
    public boolean equals(Object o) {
        return sameClassAs(o) && readerId == ((ScoredDocsQuery) o).readerId && Arrays.equals(docs, ((ScoredDocsQuery) o).docs)
            && Arrays.equals(scores, ((ScoredDocsQuery) o).scores);
    }

    @Override
    public int hashCode() {
        return Objects.hash(classHash(), Arrays.hashCode(docs), Arrays.hashCode(scores));
    }
}

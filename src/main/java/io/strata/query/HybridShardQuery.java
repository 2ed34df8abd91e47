package io.strata.query;

import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.document.LongPoint;
import org.apache.lucene.index.NumericDocValues;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.MatchNoDocsQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.QueryVisitor;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.ScoreMode;
import org.apache.lucene.search.Scorer;
import org.apache.lucene.search.Weight;
import org.apache.lucene.search.join.BitSetProducer;
import org.apache.lucene.util.BitSet;
import org.apache.lucene.util.Bits;
import org.apache.lucene.util.BytesRef;
import org.opensearch.index.mapper.IdFieldMapper;
import org.opensearch.index.mapper.SeqNoFieldMapper;
import org.opensearch.index.mapper.Uid;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The Lucene form of {@link HybridShardQueryBuilder}: on the searcher's reader, the dense window (the graph search of
 * {@link MultiGranularQuery}, its {@code k} = the window) and the lexical window it was given (by {@code _seq_no}: the
 * lexical sub-search read no stored field), fused by {@link Fusion} into the {@code k} best parents. Parents are keyed by document;
 * fused ties are ordered by {@code _id}, as the planned path orders them, reading the ids of tied parents only. A lexical
 * parent that is gone from this reader keeps its place in its window (its score shaped the window's spread, as on the
 * planned path) and is left out of the hits. Like {@link MultiGranularQuery}: computed once per reader when the search
 * creates the weight, never cached.
 */
final class HybridShardQuery extends Query {
    private final MultiGranularQuery dense;
    private final long[] lexicalSeqNos;
    private final float[] lexicalScores;
    private final Fusion fusion;
    private final int k;
    private final BitSetProducer rootDocs;
    /** The lexical side's words, for visitors (highlighting) only. */
    private final Query words;
    private Object searchedReader;
    private Query searched;

    HybridShardQuery(MultiGranularQuery dense, long[] lexicalSeqNos, float[] lexicalScores, Fusion fusion, int k,
                     BitSetProducer rootDocs, Query words) {
        this.dense = dense;
        this.lexicalSeqNos = lexicalSeqNos.clone();
        this.lexicalScores = lexicalScores.clone();
        this.fusion = fusion;
        this.k = k;
        this.rootDocs = rootDocs;
        this.words = words;
    }

    @Override
    public Query rewrite(IndexSearcher searcher) {
        return this;
    }

    @Override
    public Weight createWeight(IndexSearcher searcher, ScoreMode scoreMode, float boost) throws IOException {
        return MultiGranularQuery.uncached(this, fused(searcher).createWeight(searcher, scoreMode, boost));
    }

    private synchronized Query fused(IndexSearcher searcher) throws IOException {
        Object reader = searcher.getIndexReader().getContext().id();
        if (searched != null && searchedReader == reader) {
            return searched;
        }
        Map<Integer, String> ids = new HashMap<>();
        List<Fusion.Keyed<Integer>> denseSide = new ArrayList<>();
        for (ScoreDoc d : dense.topDocs(searcher)) {
            denseSide.add(Fusion.Keyed.side(d.doc, d.score));
        }
        int[] docs = docsOf(searcher);
        List<Fusion.Keyed<Integer>> lexicalSide = new ArrayList<>(docs.length);
        for (int i = 0; i < docs.length; i++) {
            // a parent gone from this reader gets a key no document has: -1 - its rank
            int key = docs[i] >= 0 ? docs[i] : -1 - i;
            lexicalSide.add(Fusion.Keyed.side(key, lexicalScores[i]));
        }
        // a parent gone from the reader has no id to read: it follows the parents it ties with (then by rank), where the
        // planned path would place it by its id; either way it is no hit
        Comparator<Integer> byId = (x, y) -> {
            if (x < 0 || y < 0) {
                return x < 0 && y < 0 ? Integer.compare(y, x) : x < 0 ? 1 : -1; // gone ones last, by rank (key -1 - rank)
            }
            return ids.computeIfAbsent(x, d -> idOf(searcher, d)).compareTo(ids.computeIfAbsent(y, d -> idOf(searcher, d)));
        };
        List<ScoreDoc> hits = new ArrayList<>(k);
        for (Fusion.Keyed<Integer> f : fusion.fuseKeyed(denseSide, lexicalSide, k, byId)) {
            if (f.key() >= 0) {
                hits.add(new ScoredDocsQuery.Explained(f.key(), f.score(), PlannedParentsQuery.sides(MultiGranularQueryBuilder.Mode.HYBRID,
                    f.dense(), f.lexical(), f.score(), f.denseShare(), f.lexicalShare())));
            }
        }
        searched = hits.isEmpty() ? new MatchNoDocsQuery("no parent in either window on this shard")
            : new ScoredDocsQuery(hits.toArray(ScoreDoc[]::new), searcher.getIndexReader(),
                "multi_granular hybrid: the fused score of the parent's dense and lexical windows on this shard");
        searchedReader = reader;
        return searched;
    }

    /**
     * The live root document of each lexical parent, by rank; -1 where the reader no longer holds it (deleted, or updated:
     * a new {@code _seq_no}). Nested children carry a placeholder seq_no, so only root documents count.
     */
    private int[] docsOf(IndexSearcher searcher) throws IOException {
        int[] docs = new int[lexicalSeqNos.length];
        Arrays.fill(docs, -1);
        if (docs.length == 0) {
            return docs;
        }
        Map<Long, Integer> rank = new HashMap<>();
        for (int i = 0; i < lexicalSeqNos.length; i++) {
            rank.putIfAbsent(lexicalSeqNos[i], i);
        }
        Weight matching = searcher.createWeight(searcher.rewrite(LongPoint.newSetQuery(SeqNoFieldMapper.NAME, lexicalSeqNos)),
            ScoreMode.COMPLETE_NO_SCORES, 1f);
        for (LeafReaderContext leaf : searcher.getIndexReader().leaves()) {
            Scorer scorer = matching.scorer(leaf);
            BitSet roots = rootDocs.getBitSet(leaf);
            NumericDocValues seqNos = leaf.reader().getNumericDocValues(SeqNoFieldMapper.NAME);
            if (scorer == null || roots == null || seqNos == null) {
                continue;
            }
            Bits live = leaf.reader().getLiveDocs();
            DocIdSetIterator it = scorer.iterator();
            for (int doc = it.nextDoc(); doc != DocIdSetIterator.NO_MORE_DOCS; doc = it.nextDoc()) {
                if (roots.get(doc) && (live == null || live.get(doc)) && seqNos.advanceExact(doc)) {
                    Integer r = rank.get(seqNos.longValue());
                    if (r != null) {
                        docs[r] = leaf.docBase + doc;
                    }
                }
            }
        }
        return docs;
    }

    private static String idOf(IndexSearcher searcher, int doc) {
        try {
            BytesRef id = searcher.storedFields().document(doc, Set.of(IdFieldMapper.NAME)).getBinaryValue(IdFieldMapper.NAME);
            return id == null ? "" : Uid.decodeId(id.bytes, id.offset, id.length);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The lexical side's words, as {@link PlannedParentsQuery} shows them to highlighters. */
    @Override
    public void visit(QueryVisitor visitor) {
        words.visit(visitor.getSubVisitor(BooleanClause.Occur.SHOULD, this));
    }

    @Override
    public String toString(String field) {
        return "strata_hybrid_shard(k=" + k + ", " + lexicalSeqNos.length + " lexical parents, " + dense.toString(field) + ")";
    }

    @Override
    public boolean equals(Object o) {
        return sameClassAs(o) && dense.equals(((HybridShardQuery) o).dense) && Arrays.equals(lexicalSeqNos, ((HybridShardQuery) o).lexicalSeqNos)
            && Arrays.equals(lexicalScores, ((HybridShardQuery) o).lexicalScores) && fusion.equals(((HybridShardQuery) o).fusion)
            && k == ((HybridShardQuery) o).k && rootDocs.equals(((HybridShardQuery) o).rootDocs);
    }

    @Override
    public int hashCode() {
        return Objects.hash(classHash(), dense, Arrays.hashCode(lexicalSeqNos), Arrays.hashCode(lexicalScores), fusion, k);
    }
}

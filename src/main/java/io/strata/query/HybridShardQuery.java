package io.strata.query;

import io.strata.chunkindex.ChunkDocuments;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.apache.lucene.index.DocValues;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.SortedNumericDocValues;
import org.apache.lucene.document.LongPoint;
import org.apache.lucene.index.NumericDocValues;
import org.apache.lucene.index.ReaderUtil;
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
 * planned path) and is left out of the hits. Explaining ({@code explain_child}, {@code evidence}), it also scores the
 * lexical chunks of its k parents, which {@link BestChildFetchSubPhase} quotes as it quotes planned parents. Like
 * {@link MultiGranularQuery}: computed once per reader when the search creates the weight, never cached.
 */
final class HybridShardQuery extends Query implements ExplainedParents {
    /** At debug: how many lexical parents each search looked up by seq_no ({@code logger.io.strata.query.HybridShardQuery}). */
    private static final Logger logger = LogManager.getLogger(HybridShardQuery.class);

    private final MultiGranularQuery dense;
    private final long[] lexicalSeqNos;
    /** Where the lexical search found each parent (-1: unknown): kept only where that doc still holds the seq_no. */
    private final int[] lexicalDocHints;
    private final float[] lexicalScores;
    private final Fusion fusion;
    private final int k;
    private final BitSetProducer rootDocs;
    /** The lexical side's words, for visitors (highlighting) only. */
    private final Query words;
    /** What the hits explain ({@code explain_child}, {@code evidence}); null: nothing. */
    private final Explaining explaining;
    private Object searchedReader;
    private Query searched;
    /** The explained hits of {@link #searchedReader}, by document, and the evidence's window bounds. */
    private Map<Integer, PlannedParentsQueryBuilder.Parent> explained = Map.of();
    private PlannedParentsQueryBuilder.EvidenceSpec evidenceSpec;
    /** Lexical parents looked up by {@code _seq_no} (their hint did not hold); tests count them. */
    private int seqNoLookups;

    /**
     * What the hits explain: {@code explain_child} and {@code evidence} (null: none) of the {@code text}, the lexical chunks
     * scored by {@code children} (null: no child level counted), {@code chunks} a parent.
     */
    record Explaining(boolean explainChild, Evidence evidence, String text, Query children, int chunks) {}

    HybridShardQuery(MultiGranularQuery dense, long[] lexicalSeqNos, int[] lexicalDocHints, float[] lexicalScores, Fusion fusion,
                     int k, BitSetProducer rootDocs, Query words) {
        this(dense, lexicalSeqNos, lexicalDocHints, lexicalScores, fusion, k, rootDocs, words, null);
    }

    HybridShardQuery(MultiGranularQuery dense, long[] lexicalSeqNos, int[] lexicalDocHints, float[] lexicalScores, Fusion fusion,
                     int k, BitSetProducer rootDocs, Query words, Explaining explaining) {
        if (lexicalDocHints.length != lexicalSeqNos.length) {
            throw new IllegalArgumentException("one doc hint per lexical parent");
        }
        this.dense = dense;
        this.lexicalSeqNos = lexicalSeqNos.clone();
        this.lexicalDocHints = lexicalDocHints.clone();
        this.lexicalScores = lexicalScores.clone();
        this.fusion = fusion;
        this.k = k;
        this.rootDocs = rootDocs;
        this.words = words;
        this.explaining = explaining;
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
        List<Fusion.Keyed<Integer>> top = fusion.fuseKeyed(denseSide, lexicalSide, k, byId);
        for (Fusion.Keyed<Integer> f : top) {
            if (f.key() >= 0) {
                hits.add(new ScoredDocsQuery.Explained(f.key(), f.score(), PlannedParentsQuery.sides(MultiGranularQueryBuilder.Mode.HYBRID,
                    f.dense(), f.lexical(), f.score(), f.denseShare(), f.lexicalShare())));
            }
        }
        explained = explaining == null ? Map.of() : explainedParents(searcher, top);
        if (explaining != null && explaining.evidence() != null) {
            // min_max normalises each side by its window's top and last score: evidence chunks are scaled alike
            boolean minMax = fusion.method() == Fusion.Method.MIN_MAX;
            evidenceSpec = new PlannedParentsQueryBuilder.EvidenceSpec(explaining.evidence(), explaining.text(),
                minMax && !denseSide.isEmpty() ? denseSide.get(0).score() : Float.NaN,
                minMax && !denseSide.isEmpty() ? denseSide.get(denseSide.size() - 1).score() : Float.NaN,
                minMax && lexicalScores.length > 0 ? lexicalScores[0] : Float.NaN,
                minMax && lexicalScores.length > 0 ? lexicalScores[lexicalScores.length - 1] : Float.NaN);
        }
        searched = hits.isEmpty() ? new MatchNoDocsQuery("no parent in either window on this shard")
            : new ScoredDocsQuery(hits.toArray(ScoreDoc[]::new), searcher.getIndexReader(),
                "multi_granular hybrid: the fused score of the parent's dense and lexical windows on this shard");
        searchedReader = reader;
        return searched;
    }

    /**
     * The fused parents as the fetch phase quotes them (as it quotes planned parents; their index and id are not needed
     * there), by document: each side's score and share, and for a parent the lexical side found, its best lexical chunks.
     */
    private Map<Integer, PlannedParentsQueryBuilder.Parent> explainedParents(IndexSearcher searcher, List<Fusion.Keyed<Integer>> top)
        throws IOException {
        List<Integer> lexicalParents = new ArrayList<>();
        for (Fusion.Keyed<Integer> f : top) {
            if (f.key() >= 0 && !Float.isNaN(f.lexical())) {
                lexicalParents.add(f.key());
            }
        }
        Map<Integer, List<PlannedParentsQueryBuilder.SideChunk>> children = lexicalChildren(searcher, lexicalParents);
        Map<Integer, PlannedParentsQueryBuilder.Parent> parents = new HashMap<>();
        for (Fusion.Keyed<Integer> f : top) {
            if (f.key() >= 0) {
                Fusion.Fused fused = new Fusion.Fused(null, null, f.score(), f.dense(), f.lexical(), f.denseShare(), f.lexicalShare());
                parents.put(f.key(), new PlannedParentsQueryBuilder.Parent(fused, Float.isNaN(f.lexical()) ? null
                    : LexicalForm.bestChunks(f.lexical(), children.getOrDefault(f.key(), List.of()), explaining.chunks())));
            }
        }
        return parents;
    }

    /**
     * The lexical side's scored children of each parent document (top-level), best first (ties: the earlier child), as the
     * planned path's inner hits give them: its children at the counted levels scored by BM25 with this shard's statistics
     * (the window's). One scorer per segment walks the parents in document order (a parent's children are the block
     * before it), not one per parent: at k 5,000 that was 5,000 scorers, each looking up every term of the question.
     */
    private Map<Integer, List<PlannedParentsQueryBuilder.SideChunk>> lexicalChildren(IndexSearcher searcher, List<Integer> parentDocs)
        throws IOException {
        Map<Integer, List<PlannedParentsQueryBuilder.SideChunk>> out = new HashMap<>();
        if (explaining.children() == null || parentDocs.isEmpty()) {
            return out;
        }
        Weight weight = searcher.createWeight(searcher.rewrite(explaining.children()), ScoreMode.COMPLETE, 1f);
        int[] docs = parentDocs.stream().mapToInt(Integer::intValue).sorted().toArray();
        List<LeafReaderContext> leaves = searcher.getIndexReader().leaves();
        for (int i = 0; i < docs.length; ) {
            LeafReaderContext leaf = leaves.get(ReaderUtil.subIndex(docs[i], leaves));
            int end = leaf.docBase + leaf.reader().maxDoc();
            BitSet roots = rootDocs.getBitSet(leaf);
            Scorer scorer = roots == null ? null : weight.scorer(leaf);
            if (scorer == null) {
                while (i < docs.length && docs[i] < end) {
                    i++;
                }
                continue;
            }
            SortedNumericDocValues level = DocValues.getSortedNumeric(leaf.reader(), ChunkDocuments.CHILDREN + "." + ChunkDocuments.LEVEL);
            SortedNumericDocValues ordinal = DocValues.getSortedNumeric(leaf.reader(), ChunkDocuments.CHILDREN + "." + ChunkDocuments.ORDINAL);
            DocIdSetIterator it = scorer.iterator();
            for (; i < docs.length && docs[i] < end; i++) {
                int parent = docs[i] - leaf.docBase;
                int first = parent == 0 ? 0 : roots.prevSetBit(parent - 1) + 1;
                List<PlannedParentsQueryBuilder.SideChunk> chunks = new ArrayList<>();
                // the iterator only moves forward: it may already stand in (or past) this parent's block
                for (int child = it.docID() >= first ? it.docID() : it.advance(first); child < parent; child = it.nextDoc()) {
                    if (level.advanceExact(child) && ordinal.advanceExact(child)) {
                        chunks.add(new PlannedParentsQueryBuilder.SideChunk((int) level.nextValue(), (int) ordinal.nextValue(),
                            scorer.score()));
                    }
                }
                // stable: among equal scores the earlier child first, as the inner hits order them
                chunks.sort((a, b) -> Float.compare(b.score(), a.score()));
                out.put(docs[i], chunks);
            }
        }
        return out;
    }

    @Override
    public MultiGranularQueryBuilder.Mode mode() {
        return MultiGranularQueryBuilder.Mode.HYBRID;
    }

    @Override
    public synchronized PlannedParentsQueryBuilder.Parent parent(String id, int doc) {
        return explained.get(doc);
    }

    @Override
    public float[] vector() {
        return dense.vector();
    }

    @Override
    public List<Integer> levels() {
        return dense.levels();
    }

    @Override
    public boolean explainChild() {
        return explaining != null && explaining.explainChild();
    }

    @Override
    public synchronized PlannedParentsQueryBuilder.EvidenceSpec evidence() {
        return evidenceSpec;
    }

    synchronized int seqNoLookups() {
        return seqNoLookups;
    }

    /**
     * The live root document of each lexical parent, by rank; -1 where the reader no longer holds it (deleted, or updated:
     * a new {@code _seq_no}). Nested children carry a placeholder seq_no, so only root documents count. A doc hint that is
     * a live root holding the parent's seq_no is that parent (a shard's seq_nos are unique to one version of one document);
     * the others are looked up in the seq_no points (~0.7 ms for 100 parents at 100k chunks, bin/strata-bench query).
     */
    private int[] docsOf(IndexSearcher searcher) throws IOException {
        int[] docs = new int[lexicalSeqNos.length];
        Arrays.fill(docs, -1);
        if (docs.length == 0) {
            return docs;
        }
        boolean[] hinted = verifiedHints(searcher, docs);
        Map<Long, Integer> rank = new HashMap<>();
        for (int i = 0; i < lexicalSeqNos.length; i++) {
            if (!hinted[i]) {
                rank.putIfAbsent(lexicalSeqNos[i], i);
            }
        }
        logger.debug("{} of {} lexical parents looked up by seq_no (their doc hint did not hold)", rank.size(), docs.length);
        if (rank.isEmpty()) {
            return docs;
        }
        synchronized (this) {
            seqNoLookups += rank.size();
        }
        long[] unresolved = rank.keySet().stream().mapToLong(Long::longValue).toArray();
        Weight matching = searcher.createWeight(searcher.rewrite(LongPoint.newSetQuery(SeqNoFieldMapper.NAME, unresolved)),
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

    /** Sets {@code docs[i]} where hint i is a live root holding seq_no i on this reader; which ranks it set. */
    private boolean[] verifiedHints(IndexSearcher searcher, int[] docs) throws IOException {
        boolean[] hinted = new boolean[docs.length];
        List<LeafReaderContext> leaves = searcher.getIndexReader().leaves();
        int maxDoc = searcher.getIndexReader().maxDoc();
        // doc values only move forward: visit the hints in doc order, a leaf at a time
        Integer[] order = new Integer[docs.length];
        int n = 0;
        for (int i = 0; i < docs.length; i++) {
            if (lexicalDocHints[i] >= 0 && lexicalDocHints[i] < maxDoc) {
                order[n++] = i;
            }
        }
        Arrays.sort(order, 0, n, Comparator.comparingInt(i -> lexicalDocHints[i]));
        LeafReaderContext leaf = null;
        NumericDocValues seqNos = null;
        BitSet roots = null;
        Bits live = null;
        int last = -1;
        for (int j = 0; j < n; j++) {
            int rank = order[j];
            int doc = lexicalDocHints[rank];
            if (leaf == null || doc >= leaf.docBase + leaf.reader().maxDoc()) {
                leaf = leaves.get(ReaderUtil.subIndex(doc, leaves));
                seqNos = leaf.reader().getNumericDocValues(SeqNoFieldMapper.NAME);
                roots = rootDocs.getBitSet(leaf);
                live = leaf.reader().getLiveDocs();
                last = -1;
            }
            int local = doc - leaf.docBase;
            if (seqNos == null || roots == null || !roots.get(local) || (live != null && !live.get(local)) || local == last) {
                continue;
            }
            last = local;
            if (seqNos.advanceExact(local) && seqNos.longValue() == lexicalSeqNos[rank]) {
                docs[rank] = doc;
                hinted[rank] = true;
            }
        }
        return hinted;
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
            && Arrays.equals(lexicalDocHints, ((HybridShardQuery) o).lexicalDocHints)
            && Arrays.equals(lexicalScores, ((HybridShardQuery) o).lexicalScores) && fusion.equals(((HybridShardQuery) o).fusion)
            && k == ((HybridShardQuery) o).k && rootDocs.equals(((HybridShardQuery) o).rootDocs)
            && Objects.equals(explaining, ((HybridShardQuery) o).explaining);
    }

    @Override
    public int hashCode() {
        return Objects.hash(classHash(), dense, Arrays.hashCode(lexicalSeqNos), Arrays.hashCode(lexicalScores), fusion, k);
    }
}

package io.strata.query;

import io.strata.chunkindex.ChunkDocuments;
import org.apache.lucene.index.DocValues;
import org.apache.lucene.index.FieldInfo;
import org.apache.lucene.index.FloatVectorValues;
import org.apache.lucene.index.KnnVectorValues;
import org.apache.lucene.index.LeafReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.SortedNumericDocValues;
import org.apache.lucene.index.StoredFields;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.VectorScorer;
import org.apache.lucene.search.join.BitSetProducer;
import org.apache.lucene.util.BitSet;
import org.opensearch.index.mapper.MappedFieldType;
import org.opensearch.common.document.DocumentField;
import org.opensearch.common.lucene.search.Queries;
import org.opensearch.common.xcontent.XContentHelper;
import org.opensearch.core.common.bytes.BytesReference;
import org.opensearch.index.fieldvisitor.FieldsVisitor;
import org.opensearch.search.fetch.FetchContext;
import org.opensearch.search.fetch.FetchSubPhase;
import org.opensearch.search.fetch.FetchSubPhaseProcessor;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code explain_child}: for every returned parent, the chunk that gave it its score — the parent itself (level 0) or one
 * of its children at the counted levels — as the hit field {@value #FIELD} ({@code side, level, ordinal, text, start, end,
 * score}, and for structured documents the chunk's {@code section}, {@code section_level} and {@code merged_sections}).
 *
 * <p>Dense side: the best chunk is found from the vectors the shard holds (the parent's block), scored by the vector
 * format's own scorer in float; its {@code score} is the one the planned search computed for the parent (its MAX, so that
 * chunk's score), equal to the dense {@code _score} bit for bit. (Recomputed, a score differed from the graph search's by
 * one ulp in MultiGranularQueryIT: Lucene's HNSW search scores candidates through its bulk-scoring path.) On a quantized
 * vector field the chunks are scored from the raw floats the field keeps, with its similarity, as rescoring scores them
 * (the format's scorer would give the quantized scores, not the {@code _score} of a rescored search; with
 * {@code rescore: false} a hit's {@code _score} is the quantized graph's and its chunks' scores the floats').
 * Lexical side: the chunk the coordinator's lexical search found (its best inner hit, or the
 * parent's own text when that scored higher); on one shard fused there ({@link HybridShardQuery}), the same chunk scored
 * by that shard. Dense and lexical modes: that side's chunk, {@code score} = {@code _score}.
 * Hybrid mode: the chunk of the side that added more to the fused score ({@code side}), with {@code score} the fused score
 * (= {@code _score}), and under {@code dense} and {@code lexical} each side's own best chunk, raw score and share of the
 * fused score (a side that did not have the parent in its window has a share of 0; the lexical side then has no chunk).
 * Text and offsets come from the hit's {@code _source}.
 */
public final class BestChildFetchSubPhase implements FetchSubPhase {
    public static final String FIELD = ChunkDocuments.BEST_CHILD;

    @Override
    public FetchSubPhaseProcessor getProcessor(FetchContext context) {
        Query parsed = context.parsedQuery() == null ? null : context.parsedQuery().query();
        BitSetProducer roots = context.getQueryShardContext().bitsetFilter(Queries.newNonNestedFilter());
        ExplainedParents planned = QueryTrees.find(parsed, PlannedParentsQuery.class);
        if (planned == null) {
            planned = QueryTrees.find(parsed, HybridShardQuery.class);
        }
        MultiGranularQuery query = planned != null ? null : QueryTrees.find(parsed, MultiGranularQuery.class);
        if (planned == null ? query == null || !query.explainChild() : !planned.explainChild() && planned.evidence() == null) {
            return null; // nothing to explain: read no mapping
        }
        boolean fullPrecision;
        try {
            fullPrecision = DenseParentsQueryBuilder.quantized(context.getQueryShardContext(),
                ChunkDocuments.CHILDREN + "." + ChunkDocuments.EMBEDDING);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (planned != null) {
            EvidenceSentences sentences = null;
            if (planned.evidence() != null && planned.evidence().evidence().sentences() > 0) {
                MappedFieldType text = context.getQueryShardContext().getFieldType(ChunkDocuments.TEXT);
                if (text != null && text.getTextSearchInfo().isTokenized()) {
                    try {
                        sentences = EvidenceSentences.of(text.indexAnalyzer(), context.getQueryShardContext().getSearchAnalyzer(text),
                            ChunkDocuments.TEXT, planned.evidence().text());
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                }
            }
            return plannedProcessor(planned, roots, sentences, fullPrecision);
        }
        return new Processor(roots) {
            @Override
            Map<String, Object> explain(HitContext hit, String id, Map<String, Object> source, BitSet blockStarts) throws IOException {
                return onSide("dense", bestChunk(hit.reader(), hit.docId(), blockStarts, source, query.vector(), query.levels(),
                    fullPrecision));
            }
        };
    }

    /** The vector fields, left out of the {@code _source} read here (see {@link Processor#process}). */
    private static final String[] VECTORS = { ChunkDocuments.EMBEDDING, ChunkDocuments.CHILDREN + "." + ChunkDocuments.EMBEDDING };

    /** Reads the parents of each segment once, then explains each hit. */
    private abstract static class Processor implements FetchSubPhaseProcessor {
        private final BitSetProducer roots;
        private BitSet parents;
        private StoredFields storedFields;

        Processor(BitSetProducer roots) {
            this.roots = roots;
        }

        @Override
        public void setNextReader(LeafReaderContext readerContext) throws IOException {
            parents = roots.getBitSet(readerContext);
            storedFields = readerContext.reader().storedFields();
        }

        /**
         * The hit's {@code _source} without its vectors, read from the segment's stored fields (as the caller may read
         * them: field-level security filters them in the reader), and its {@code _id}. Not the search's own source lookup,
         * which reads the whole {@code _source}: with the k-NN plugin's derived source (the default of a k-NN index) that
         * has every vector of the parent and its children rebuilt and then parsed, for nothing, since only texts and
         * offsets are quoted; a read that excludes the vector fields is not given them. (In bin/strata-bench query at 10k
         * chunks the effect on an {@code explain_child} search was within the run-to-run noise.) The id is read here too:
         * with {@code stored_fields: ["_none_"]} the hit carries none, yet the planned parents are known by it.
         */
        @Override
        public void process(HitContext hit) throws IOException {
            FieldsVisitor visitor = new FieldsVisitor(true, new String[0], VECTORS);
            storedFields.document(hit.docId(), visitor);
            BytesReference bytes = visitor.source();
            Map<String, Object> source = bytes == null ? Map.of() : XContentHelper.convertToMap(bytes, false).v2(); // none: _source disabled
            String id = hit.hit().getId() != null ? hit.hit().getId() : visitor.id();
            Map<String, Object> out = explain(hit, id, source, parents);
            if (out != null) {
                hit.hit().setDocumentField(FIELD, new DocumentField(FIELD, List.of(out)));
            }
            Map<String, Object> evidence = evidence(hit, id, source, parents);
            if (evidence != null) {
                hit.hit().setDocumentField(ChunkDocuments.EVIDENCE, new DocumentField(ChunkDocuments.EVIDENCE, List.of(evidence)));
            }
        }

        abstract Map<String, Object> explain(HitContext hit, String id, Map<String, Object> source, BitSet parents) throws IOException;

        Map<String, Object> evidence(HitContext hit, String id, Map<String, Object> source, BitSet parents) throws IOException {
            return null;
        }
    }

    private static FetchSubPhaseProcessor plannedProcessor(ExplainedParents query, BitSetProducer roots, EvidenceSentences sentences,
                                                           boolean fullPrecision) {
        return new Processor(roots) {
            @Override
            Map<String, Object> explain(HitContext hit, String id, Map<String, Object> source, BitSet parents) throws IOException {
                PlannedParentsQueryBuilder.Parent parent = query.parent(id, hit.readerContext().docBase + hit.docId());
                if (parent == null || !query.explainChild()) {
                    return null;
                }
                return switch (query.mode()) {
                    case DENSE -> {
                        Map<String, Object> out = onSide("dense",
                            bestChunk(hit.reader(), hit.docId(), parents, source, query.vector(), query.levels(), fullPrecision));
                        if (out != null) {
                            out.put("score", parent.fused().dense()); // the search's own score of that chunk: see the class comment
                        }
                        yield out;
                    }
                    case LEXICAL -> {
                        PlannedParentsQueryBuilder.SideChunk chunk = parent.lexicalChunk();
                        yield onSide("lexical",
                            chunk == null ? null : chunkAt(source, chunk.level(), chunk.ordinal(), parent.fused().score()));
                    }
                    case HYBRID -> explainFused(bestChunk(hit.reader(), hit.docId(), parents, source, query.vector(), query.levels(),
                        fullPrecision), source, parent);
                };
            }

            @Override
            Map<String, Object> evidence(HitContext hit, String id, Map<String, Object> source, BitSet parents) throws IOException {
                PlannedParentsQueryBuilder.Parent parent = query.parent(id, hit.readerContext().docBase + hit.docId());
                PlannedParentsQueryBuilder.EvidenceSpec spec = query.evidence();
                if (parent == null || spec == null) {
                    return null;
                }
                return evidencePack(hit, source, parents, query, parent, spec, sentences, fullPrecision);
            }
        };
    }

    /**
     * The evidence pack of one parent ({@link Evidence}): each side's best chunks, best first, with raw and (hybrid
     * {@code min_max}) normalised scores, and the parent's best sentences for the query's words.
     */
    private static Map<String, Object> evidencePack(FetchSubPhase.HitContext hit, Map<String, Object> source, BitSet parents,
                                                    ExplainedParents query, PlannedParentsQueryBuilder.Parent parent,
                                                    PlannedParentsQueryBuilder.EvidenceSpec spec, EvidenceSentences sentences,
                                                    boolean fullPrecision) throws IOException {
        int n = spec.evidence().chunks();
        List<Map<String, Object>> dense = new ArrayList<>();
        if (query.mode() != MultiGranularQueryBuilder.Mode.LEXICAL) {
            List<float[]> scored = scoredChunks(hit.reader(), hit.docId(), parents, query.vector(), query.levels(), n, fullPrecision);
            for (int i = 0; i < scored.size(); i++) {
                float[] c = scored.get(i);
                // the best one's score is the one the planned search computed for the parent (see the class comment)
                float score = i == 0 && !Float.isNaN(parent.fused().dense()) ? parent.fused().dense() : c[2];
                Map<String, Object> chunk = chunkAt(source, (int) c[0], (int) c[1], score);
                if (chunk != null) {
                    putNormalised(chunk, spec.dense(score));
                    dense.add(chunk);
                }
            }
        }
        List<Map<String, Object>> lexical = new ArrayList<>();
        for (PlannedParentsQueryBuilder.SideChunk c : parent.lexicalChunks()) {
            Map<String, Object> chunk = chunkAt(source, c.level(), c.ordinal(), c.score());
            if (chunk != null) {
                putNormalised(chunk, spec.lexical(c.score()));
                lexical.add(chunk);
            }
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("dense", dense);
        out.put("lexical", lexical);
        List<Map<String, Object>> best = List.of();
        if (sentences != null && source.get(ChunkDocuments.TEXT) instanceof String text
            && source.get(ChunkDocuments.START) instanceof Number start && source.get(ChunkDocuments.END) instanceof Number end) {
            // only the source's part has sentences at source offsets (not a table piece's repeated header)
            String own = ChunkDocuments.sourcePart(text, start.intValue(), end.intValue());
            if (own != null) {
                best = sentences.best(own, start.intValue(), spec.evidence().sentences());
            }
        }
        out.put("sentences", best);
        return out;
    }

    private static void putNormalised(Map<String, Object> chunk, float normalised) {
        if (!Float.isNaN(normalised)) {
            chunk.put("normalized", normalised);
        }
    }

    /** {@code chunk} (null: none) as the explanation of the side that found it: {@code side} first, then the chunk. */
    private static Map<String, Object> onSide(String side, Map<String, Object> chunk) {
        if (chunk == null) {
            return null;
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("side", side);
        out.putAll(chunk);
        return out;
    }

    /** The hybrid explanation of one fused parent (see the class comment), given the dense side's best chunk (or null). */
    static Map<String, Object> explainFused(Map<String, Object> dense, Map<String, Object> source, PlannedParentsQueryBuilder.Parent parent) {
        Fusion.Fused f = parent.fused();
        if (dense != null) {
            dense.remove(ChunkDocuments.TEXT);
            if (!Float.isNaN(f.dense())) {
                dense.put("score", f.dense()); // the search's own score of that chunk: see the class comment
            }
            dense.put("share", f.denseShare());
        }
        Map<String, Object> lexical = null;
        PlannedParentsQueryBuilder.SideChunk chunk = parent.lexicalChunk();
        if (chunk != null && !Float.isNaN(f.lexical())) {
            lexical = chunkAt(source, chunk.level(), chunk.ordinal(), chunk.score());
            if (lexical != null) {
                lexical.remove(ChunkDocuments.TEXT);
                lexical.put("share", f.lexicalShare());
            }
        }
        Map<String, Object> winner = "lexical".equals(f.side()) && lexical != null ? lexical : dense != null ? dense : lexical;
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("side", winner == lexical ? "lexical" : "dense");
        if (winner != null) {
            int level = ((Number) winner.get(ChunkDocuments.LEVEL)).intValue();
            Map<String, Object> c = chunkAt(source, level, ((Number) winner.get(ChunkDocuments.ORDINAL)).intValue(), f.score());
            if (c != null) {
                out.putAll(c);
            }
        }
        out.put("score", f.score());
        out.put("dense", dense);
        out.put("lexical", lexical);
        return out;
    }

    /** The chunk of a chunk document at {@code level} (0: the parent) and {@code ordinal}, described with {@code score}. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> chunkAt(Map<String, Object> source, int level, int ordinal, float score) {
        if (level == 0) {
            return describe(source, 0, score);
        }
        if (source.get(ChunkDocuments.CHILDREN) instanceof List<?> children) {
            for (Object c : children) {
                if (c instanceof Map<?, ?> child && child.get(ChunkDocuments.LEVEL) instanceof Number l && l.intValue() == level
                    && child.get(ChunkDocuments.ORDINAL) instanceof Number o && o.intValue() == ordinal) {
                    return describe((Map<String, Object>) child, level, score);
                }
            }
        }
        return null;
    }

    /**
     * The best-scoring chunk of the parent document {@code parentDoc} (segment-relative) among {@code levels}, scored from
     * the segment's vectors with the field's similarity, as the graph search scores them ({@code fullPrecision}: from the raw
     * floats of a quantized field, as rescoring does); null without vectors. The block of a parent is its nested children,
     * then itself: the documents after the previous parent.
     */
    static Map<String, Object> bestChunk(LeafReader reader, int parentDoc, BitSet parents, Map<String, Object> source, float[] vector,
                                         List<Integer> levels, boolean fullPrecision) throws IOException {
        List<float[]> best = scoredChunks(reader, parentDoc, parents, vector, levels, 1, fullPrecision);
        return best.isEmpty() ? null : chunkAt(source, (int) best.get(0)[0], (int) best.get(0)[1], best.get(0)[2]);
    }

    /**
     * The {@code n} best-scoring chunks of the parent document {@code parentDoc} as {@code {level, ordinal, score}}, best
     * first (ties: the earlier document in the block); empty without vectors.
     */
    static List<float[]> scoredChunks(LeafReader reader, int parentDoc, BitSet parents, float[] vector, List<Integer> levels, int n,
                                      boolean fullPrecision) throws IOException {
        if (vector == null || parents == null) {
            return List.of();
        }
        List<float[]> all = new ArrayList<>();
        FieldInfo childField = reader.getFieldInfos().fieldInfo(ChunkDocuments.CHILDREN + "." + ChunkDocuments.EMBEDDING);
        FloatVectorValues childVectors = childField == null ? null : reader.getFloatVectorValues(childField.name);
        boolean selfInChildren = false;
        if (childVectors != null) {
            SortedNumericDocValues level = DocValues.getSortedNumeric(reader, ChunkDocuments.CHILDREN + "." + ChunkDocuments.LEVEL);
            SortedNumericDocValues ordinal = DocValues.getSortedNumeric(reader, ChunkDocuments.CHILDREN + "." + ChunkDocuments.ORDINAL);
            // the format's own scorer, the one the graph search and its exact fallback score with: the same float arithmetic
            // (of a quantized field, the quantized score: then the raw floats, as rescoring scores them)
            ChunkScorer scorer = ChunkScorer.of(childField, childVectors, vector, fullPrecision);
            DocIdSetIterator it = scorer == null ? DocIdSetIterator.empty() : scorer.iterator();
            int first = parentDoc == 0 ? 0 : parents.prevSetBit(parentDoc - 1) + 1;
            for (int doc = first; doc < parentDoc; doc++) {
                int at = it.docID() < doc ? it.advance(doc) : it.docID();
                if (at != doc || !level.advanceExact(doc)) {
                    continue;
                }
                int l = (int) level.nextValue();
                selfInChildren |= l == 0;
                if (!levels.contains(l)) {
                    continue;
                }
                float s = scorer.score();
                all.add(new float[] { l, l == 0 || !ordinal.advanceExact(doc) ? 0 : (int) ordinal.nextValue(), s });
            }
        }
        if (!selfInChildren && levels.contains(0)) {
            // format 1: the parent's own vector lives only in [embedding]
            FieldInfo parentField = reader.getFieldInfos().fieldInfo(ChunkDocuments.EMBEDDING);
            FloatVectorValues parentVectors = parentField == null ? null : reader.getFloatVectorValues(parentField.name);
            ChunkScorer scorer = parentVectors == null ? null : ChunkScorer.of(parentField, parentVectors, vector, fullPrecision);
            if (scorer != null) {
                DocIdSetIterator it = scorer.iterator();
                if (it.advance(parentDoc) == parentDoc) {
                    all.add(new float[] { 0, 0, scorer.score() });
                }
            }
        }
        // stable sort: among equal scores the earlier chunk stays first, as the strict > of a single scan kept it
        all.sort((a, b) -> Float.compare(b[2], a[2]));
        return all.size() > n ? List.copyOf(all.subList(0, n)) : all;
    }

    /** A vector field's documents with their score against the query: the format's scorer, or the raw floats' similarity. */
    private record ChunkScorer(DocIdSetIterator iterator, VectorScorer format, KnnVectorValues.DocIndexIterator raw,
                               FloatVectorValues values, VectorSimilarityFunction similarity, float[] vector) {
        static ChunkScorer of(FieldInfo field, FloatVectorValues values, float[] vector, boolean fullPrecision) throws IOException {
            if (fullPrecision) {
                KnnVectorValues.DocIndexIterator raw = values.iterator();
                return new ChunkScorer(raw, null, raw, values, field.getVectorSimilarityFunction(), vector);
            }
            VectorScorer format = values.scorer(vector);
            return format == null ? null : new ChunkScorer(format.iterator(), format, null, null, null, vector);
        }

        float score() throws IOException {
            return format != null ? format.score() : similarity.compare(vector, values.vectorValue(raw.index()));
        }
    }

    private static Map<String, Object> describe(Map<String, Object> chunk, int level, float score) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put(ChunkDocuments.LEVEL, level);
        out.put(ChunkDocuments.ORDINAL, chunk.get(ChunkDocuments.ORDINAL));
        out.put(ChunkDocuments.TEXT, chunk.get(ChunkDocuments.TEXT));
        out.put(ChunkDocuments.START, chunk.get(ChunkDocuments.START));
        out.put(ChunkDocuments.END, chunk.get(ChunkDocuments.END));
        // structured documents (format: markdown | html): where the child sits in the heading tree
        for (String key : List.of(ChunkDocuments.SECTION, ChunkDocuments.SECTION_LEVEL, ChunkDocuments.MERGED_SECTIONS)) {
            if (chunk.get(key) != null) {
                out.put(key, chunk.get(key));
            }
        }
        out.put("score", score);
        return out;
    }
}

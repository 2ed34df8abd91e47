package io.strata.query;

import io.strata.chunkindex.ChunkDocuments;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.QueryVisitor;
import org.opensearch.common.document.DocumentField;
import org.opensearch.search.fetch.FetchContext;
import org.opensearch.search.fetch.FetchSubPhase;
import org.opensearch.search.fetch.FetchSubPhaseProcessor;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code explain_child}: for every returned parent, the chunk that gave it its score — the parent itself
 * (level 0) or one of its children at the counted levels — as the hit field {@value #FIELD}
 * ({@code side, level, ordinal, text, start, end, score}).
 *
 * <p>Dense mode: computed exactly from the stored vectors of the hit's own source, with the query's scoring
 * ((1 + cos) / 2), so it agrees with {@code _score}. Hybrid mode: the chunk of the side that added more to the fused
 * score ({@code side}), with {@code score} the fused score (= {@code _score}), and under {@code dense} and {@code lexical}
 * each side's own best chunk, raw score and share of the fused score: the dense one computed here from the vectors, the
 * lexical one found by the coordinator's lexical search (a side that did not have the parent in its window has a share
 * of 0; the lexical side then has no chunk to show). Lexical mode answers with the inner hit {@value #FIELD} instead.
 */
public final class BestChildFetchSubPhase implements FetchSubPhase {
    public static final String FIELD = "strata_best_child";

    @Override
    public FetchSubPhaseProcessor getProcessor(FetchContext context) {
        Query parsed = context.parsedQuery() == null ? null : context.parsedQuery().query();
        FusedParentsQuery fused = find(parsed, FusedParentsQuery.class);
        if (fused != null) {
            return fused.explainChild() ? fusedProcessor(fused) : null;
        }
        MultiGranularQuery query = find(parsed, MultiGranularQuery.class);
        if (query == null || !query.explainChild()) {
            return null;
        }
        return new FetchSubPhaseProcessor() {
            @Override
            public void setNextReader(LeafReaderContext readerContext) {}

            @Override
            public void process(HitContext hit) {
                Map<String, Object> source = hit.sourceLookup().loadSourceIfNeeded();
                Map<String, Object> best = bestChunk(source, query.vector(), query.levels());
                if (best != null) {
                    Map<String, Object> out = new LinkedHashMap<>();
                    out.put("side", "dense");
                    out.putAll(best);
                    hit.hit().setDocumentField(FIELD, new DocumentField(FIELD, List.of(out)));
                }
            }
        };
    }

    private static FetchSubPhaseProcessor fusedProcessor(FusedParentsQuery query) {
        return new FetchSubPhaseProcessor() {
            @Override
            public void setNextReader(LeafReaderContext readerContext) {}

            @Override
            public void process(HitContext hit) {
                FusedParentsQueryBuilder.Parent parent = query.parent(hit.hit().getId());
                if (parent == null) {
                    return;
                }
                Map<String, Object> source = hit.sourceLookup().loadSourceIfNeeded();
                Map<String, Object> best = explainFused(source, parent, query.vector(), query.levels());
                hit.hit().setDocumentField(FIELD, new DocumentField(FIELD, List.of(best)));
            }
        };
    }

    /** The hybrid explanation of one fused parent (see the class comment). */
    static Map<String, Object> explainFused(Map<String, Object> source, FusedParentsQueryBuilder.Parent parent, float[] vector,
                                            List<Integer> levels) {
        Fusion.Fused f = parent.fused();
        Map<String, Object> dense = vector == null ? null : bestChunk(source, vector, levels);
        if (dense != null) {
            dense.remove(ChunkDocuments.TEXT);
            dense.put("share", f.denseShare());
        }
        Map<String, Object> lexical = null;
        FusedParentsQueryBuilder.SideChunk chunk = parent.lexicalChunk();
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
    static Map<String, Object> chunkAt(Map<String, Object> source, int level, int ordinal, double score) {
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

    /** The best-scoring chunk of a chunk document among {@code levels}, or null without vectors. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> bestChunk(Map<String, Object> source, float[] vector, List<Integer> levels) {
        Map<String, Object> best = null;
        double bestScore = -1;
        if (levels.contains(0) && source.get(ChunkDocuments.EMBEDDING) instanceof List<?> v) {
            bestScore = score(vector, v);
            best = describe(source, 0, bestScore);
        }
        if (source.get(ChunkDocuments.CHILDREN) instanceof List<?> children) {
            for (Object c : children) {
                if (ChunkDocuments.isSelfEntry(c)) {
                    continue; // the parent's own vector again (format 2), scored above with the parent's text and offsets
                }
                Map<String, Object> child = (Map<String, Object>) c;
                if (child.get(ChunkDocuments.LEVEL) instanceof Number level && levels.contains(level.intValue())
                    && child.get(ChunkDocuments.EMBEDDING) instanceof List<?> v) {
                    double s = score(vector, v);
                    if (s > bestScore) {
                        bestScore = s;
                        best = describe(child, level.intValue(), s);
                    }
                }
            }
        }
        return best;
    }

    private static Map<String, Object> describe(Map<String, Object> chunk, int level, double score) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put(ChunkDocuments.LEVEL, level);
        out.put(ChunkDocuments.ORDINAL, chunk.get(ChunkDocuments.ORDINAL));
        out.put(ChunkDocuments.TEXT, chunk.get(ChunkDocuments.TEXT));
        out.put(ChunkDocuments.START, chunk.get(ChunkDocuments.START));
        out.put(ChunkDocuments.END, chunk.get(ChunkDocuments.END));
        out.put("score", (float) score);
        return out;
    }

    /** Lucene's cosine score: (1 + cos) / 2. */
    static double score(float[] q, List<?> v) {
        double dot = 0;
        double nq = 0;
        double nv = 0;
        for (int i = 0; i < q.length && i < v.size(); i++) {
            double x = ((Number) v.get(i)).doubleValue();
            dot += q[i] * x;
            nq += q[i] * q[i];
            nv += x * x;
        }
        double cos = nq == 0 || nv == 0 ? 0 : dot / Math.sqrt(nq * nv);
        return (1 + cos) / 2;
    }

    private static <T extends Query> T find(Query query, Class<T> type) {
        if (query == null) {
            return null;
        }
        List<T> found = new java.util.ArrayList<>(1);
        query.visit(new QueryVisitor() {
            @Override
            public void visitLeaf(Query q) {
                if (type.isInstance(q) && found.isEmpty()) {
                    found.add(type.cast(q));
                }
            }
        });
        return found.isEmpty() ? null : found.get(0);
    }
}

package io.strata.query;

import io.strata.ingest.ChunkDocuments;
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
 * ({@code level, ordinal, text, start, end, score}). Computed exactly from the stored vectors of the
 * hit's own source, with the query's scoring ((1 + cos) / 2), so it agrees with {@code _score}.
 */
public final class BestChildFetchSubPhase implements FetchSubPhase {
    public static final String FIELD = "strata_best_child";

    @Override
    public FetchSubPhaseProcessor getProcessor(FetchContext context) {
        MultiGranularQuery query = find(context.parsedQuery() == null ? null : context.parsedQuery().query());
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
                    hit.hit().setDocumentField(FIELD, new DocumentField(FIELD, List.of(best)));
                }
            }
        };
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

    private static MultiGranularQuery find(Query query) {
        if (query == null) {
            return null;
        }
        MultiGranularQuery[] found = new MultiGranularQuery[1];
        query.visit(new QueryVisitor() {
            @Override
            public void visitLeaf(Query q) {
                if (q instanceof MultiGranularQuery m && found[0] == null) {
                    found[0] = m;
                }
            }
        });
        return found[0];
    }
}

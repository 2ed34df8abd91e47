package io.strata.quality;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Relevance on a SQuAD-kind dataset, where every question has an exact answer span in one source document: a parent
 * is relevant when it comes from that document ({@code source_id}) and its {@code [start, end)} (character offsets
 * into the source text, as the chunk documents record them) contains {@code [answerStart, answerEnd)}. When a parent
 * boundary cuts the answer, no parent contains it: the parents covering most of it are relevant instead (rule
 * {@link RetrievalMetrics.Rule#OVERLAP}, score = covered fraction), as ROUGE-L stands in for containment on GutenQA.
 */
public final class SpanRelevance {
    private SpanRelevance() {}

    /** A parent chunk as the chunk index holds it. */
    public record Parent(String id, String sourceId, int start, int end) {}

    public static RetrievalMetrics.Relevance relevant(String doc, int answerStart, int answerEnd, List<Parent> parents) {
        if (answerEnd <= answerStart) {
            throw new IllegalArgumentException("answer span [" + answerStart + ", " + answerEnd + ") is empty");
        }
        List<String> containing = new ArrayList<>();
        List<String> best = new ArrayList<>();
        int bestOverlap = 0;
        for (Parent p : parents) {
            if (!p.sourceId().equals(doc)) {
                continue;
            }
            if (p.start() <= answerStart && answerEnd <= p.end()) {
                containing.add(p.id());
            }
            int overlap = Math.min(answerEnd, p.end()) - Math.max(answerStart, p.start());
            if (overlap > 0 && overlap >= bestOverlap) {
                if (overlap > bestOverlap) {
                    best.clear();
                    bestOverlap = overlap;
                }
                best.add(p.id());
            }
        }
        if (!containing.isEmpty()) {
            return new RetrievalMetrics.Relevance(Set.copyOf(containing), RetrievalMetrics.Rule.CONTAINS, 1);
        }
        if (best.isEmpty()) {
            return new RetrievalMetrics.Relevance(Set.of(), RetrievalMetrics.Rule.NONE, 0);
        }
        return new RetrievalMetrics.Relevance(Set.copyOf(best), RetrievalMetrics.Rule.OVERLAP,
            (double) bestOverlap / (answerEnd - answerStart));
    }
}

package io.strata.quality;

import org.junit.Test;

import java.util.List;
import java.util.Set;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;

public class SpanRelevanceTests {
    // two documents; parents of a.txt: [0, 100), [100, 200), [150, 260) (overlapping), of b.txt: [0, 300)
    private static final List<SpanRelevance.Parent> PARENTS = List.of(
        new SpanRelevance.Parent("a.txt:0", "a.txt", 0, 100),
        new SpanRelevance.Parent("a.txt:1", "a.txt", 100, 200),
        new SpanRelevance.Parent("a.txt:2", "a.txt", 150, 260),
        new SpanRelevance.Parent("b.txt:0", "b.txt", 0, 300));

    @Test
    public void testRelevant_isEveryParentOfTheDocumentContainingTheAnswer_notOtherDocumentsAtTheSameOffsets() {
        RetrievalMetrics.Relevance r = SpanRelevance.relevant("a.txt", 160, 180, PARENTS);
        assertEquals(Set.of("a.txt:1", "a.txt:2"), r.ids());
        assertEquals(RetrievalMetrics.Rule.CONTAINS, r.rule());
        assertEquals(Set.of("b.txt:0"), SpanRelevance.relevant("b.txt", 160, 180, PARENTS).ids());
    }

    @Test
    public void testRelevant_answerTouchingBothEndsOfAParent_isContained() {
        // [start, end) half-open: [0, 100) contains exactly [0, 100); [100, 120) starts the next parent
        assertEquals(Set.of("a.txt:0"), SpanRelevance.relevant("a.txt", 0, 100, PARENTS).ids());
        assertEquals(Set.of("a.txt:1"), SpanRelevance.relevant("a.txt", 100, 120, PARENTS).ids());
    }

    @Test
    public void testRelevant_answerCutByABoundary_isTheParentCoveringMostOfIt() {
        // [90, 120): 10 characters in a.txt:0, 20 in a.txt:1
        RetrievalMetrics.Relevance r = SpanRelevance.relevant("a.txt", 90, 120, PARENTS);
        assertEquals(Set.of("a.txt:1"), r.ids());
        assertEquals(RetrievalMetrics.Rule.OVERLAP, r.rule());
        assertEquals(20.0 / 30, r.score(), 1e-12);
        // [95, 105): 5 and 5: both
        assertEquals(Set.of("a.txt:0", "a.txt:1"), SpanRelevance.relevant("a.txt", 95, 105, PARENTS).ids());
    }

    @Test
    public void testRelevant_documentWithoutParents_isNone() {
        RetrievalMetrics.Relevance r = SpanRelevance.relevant("c.txt", 0, 10, PARENTS);
        assertEquals(Set.of(), r.ids());
        assertEquals(RetrievalMetrics.Rule.NONE, r.rule());
        assertEquals(Set.of(), SpanRelevance.relevant("a.txt", 300, 310, PARENTS).ids());
    }

    @Test
    public void testRelevant_emptyAnswer_isRefused() {
        assertThrows(IllegalArgumentException.class, () -> SpanRelevance.relevant("a.txt", 10, 10, PARENTS));
    }
}

package io.strata.quality;

import org.junit.Test;

import java.util.List;
import java.util.Set;

import static org.junit.Assert.assertEquals;

public class RetrievalMetricsTests {

    @Test
    public void testDcgAndRecall_firstRelevantAtRank3() {
        List<String> ranking = List.of("a", "b", "c", "d");
        Set<String> relevant = Set.of("c");
        assertEquals(0, RetrievalMetrics.dcg(ranking, relevant, 1), 0);
        assertEquals(0, RetrievalMetrics.dcg(ranking, relevant, 2), 0);
        assertEquals(0.5, RetrievalMetrics.dcg(ranking, relevant, 5), 1e-12); // 1 / log2(4)
        assertEquals(0, RetrievalMetrics.recall(ranking, relevant, 2), 0);
        assertEquals(1, RetrievalMetrics.recall(ranking, relevant, 5), 0);
    }

    @Test
    public void testDcg_atRank1EqualsRecall_rank2IsOneOverLog2Of3() {
        assertEquals(1, RetrievalMetrics.dcg(List.of("x", "y"), Set.of("x"), 1), 0);
        assertEquals(1 / (Math.log(3) / Math.log(2)), RetrievalMetrics.dcg(List.of("x", "y"), Set.of("y"), 2), 1e-12);
    }

    @Test
    public void testDcg_countsOnlyTheFirstOfSeveralRelevantHits() {
        List<String> ranking = List.of("a", "b", "c");
        assertEquals(1, RetrievalMetrics.dcg(ranking, Set.of("a", "b"), 20), 0);
        assertEquals(0, RetrievalMetrics.dcg(ranking, Set.of("z"), 20), 0);
        assertEquals(0, RetrievalMetrics.recall(ranking, Set.of("z"), 20), 0);
    }

    @Test
    public void testRougeL_recallIsLcsOverReferenceTokens_ignoringCaseAndPunctuation() {
        List<String> ref = RougeL.tokens("'This was really his,' said Harriet.");
        assertEquals(List.of("this", "was", "really", "his", "said", "harriet"), ref);
        assertEquals(1, RougeL.recall(ref, RougeL.tokens("“This was really his,” said Harriet, blushing.")), 0);
        // LCS of [a b c d] in [b x d a]: "b d" → 2 of 4
        assertEquals(0.5, RougeL.recall(RougeL.tokens("a b c d"), RougeL.tokens("b x d a")), 0);
        assertEquals(0, RougeL.recall(List.of(), RougeL.tokens("a")), 0);
        assertEquals(3, RougeL.lcs(RougeL.tokens("the cat sat on"), RougeL.tokens("a cat sat on the mat")));
    }

    @Test
    public void testRelevant_verbatimEvidence_isEveryParentContainingIt_afterWhitespaceNormalisation() {
        List<String> ids = List.of("p0", "p1", "p2");
        List<String> texts = List.of("Emma smiled.", "She loved every body, was interested", "She loved every body, was interested too");
        RetrievalMetrics.Relevance r = RetrievalMetrics.relevant("She loved every\n body,  was interested", ids, texts);
        assertEquals(Set.of("p1", "p2"), r.ids());
        assertEquals(RetrievalMetrics.Rule.CONTAINS, r.rule());
    }

    @Test
    public void testRelevant_paraphrasedEvidence_isTheParentWithHighestRougeLRecall() {
        List<String> ids = List.of("p0", "p1", "p2");
        List<String> texts = List.of(
            RetrievalMetrics.normalize("It was the end of an old pencil, the part without any lead."),
            RetrievalMetrics.normalize("“It was the end of an old pencil,—the part without any lead. ‘This was really his,’ said Harriet.”"),
            RetrievalMetrics.normalize("Harriet said nothing of the pencil."));
        RetrievalMetrics.Relevance r = RetrievalMetrics.relevant(
            "It was the end of an old pencil,—the part without any lead. 'This was really his,' said Harriet.", ids, texts);
        assertEquals(Set.of("p1"), r.ids());
        assertEquals(RetrievalMetrics.Rule.ROUGE_L, r.rule());
        assertEquals(1, r.score(), 0);
    }

    @Test
    public void testMeanStd_isPopulationStandardDeviation() {
        double[] ms = RetrievalMetrics.meanStd(new double[] { 2, 4, 6 });
        assertEquals(4, ms[0], 1e-12);
        assertEquals(Math.sqrt(8.0 / 3), ms[1], 1e-12);
        assertEquals(0, RetrievalMetrics.meanStd(new double[] { 5 })[1], 0);
    }
}

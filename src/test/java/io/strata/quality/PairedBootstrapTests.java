package io.strata.quality;

import org.junit.Test;

import java.util.List;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

public class PairedBootstrapTests {

    @Test
    public void testPaired_identicalRows_giveZeroDifferenceAndZeroWidthInterval() {
        double[] a = { 1, 0, 0.5, 1, 0, 0.63 };
        PairedBootstrap.Interval i = PairedBootstrap.paired(a, a.clone());
        assertEquals(new PairedBootstrap.Interval(0, 0, 0), i);
        assertFalse(i.excludesZero());
    }

    @Test
    public void testPaired_constantShift_isThatShiftWithZeroWidth() {
        double[] b = { 0.1, 0.7, 0.3, 0.0, 0.9 };
        double[] a = new double[b.length];
        for (int q = 0; q < b.length; q++) {
            a[q] = b[q] + 0.25;
        }
        PairedBootstrap.Interval i = PairedBootstrap.paired(a, b);
        assertEquals(0.25, i.mean(), 1e-12);
        assertEquals(0.25, i.low(), 1e-12);
        assertEquals(0.25, i.high(), 1e-12);
        assertTrue(i.excludesZero());
    }

    @Test
    public void testPaired_twoQuestionsOneWonOneTied_spansZeroToOne() {
        // differences {1, 0}: a resample's mean is 0 (p 1/4), 0.5 (p 1/2) or 1 (p 1/4), so the 2.5th and 97.5th
        // percentiles of 10,000 resamples are 0 and 1, and the observed mean is 0.5
        PairedBootstrap.Interval i = PairedBootstrap.paired(new double[] { 1, 0 }, new double[] { 0, 0 });
        assertEquals(0.5, i.mean(), 0);
        assertEquals(0, i.low(), 0);
        assertEquals(1, i.high(), 0);
        assertFalse(i.excludesZero());
    }

    @Test
    public void testPaired_oneWinAmongFourQuestions_intervalFromBinomialQuantiles() {
        // differences {1, 0, 0, 0}: a resample's mean is j/4 with j ~ Binomial(4, 1/4); P(j = 0) = 0.32 > 2.5%, so the
        // 2.5th percentile is 0; P(j <= 2) = 0.949 < 97.5% < P(j <= 3) = 0.996, so the 97.5th percentile is 3/4
        PairedBootstrap.Interval i = PairedBootstrap.paired(new double[] { 1, 0, 0, 0 }, new double[4]);
        assertEquals(0.25, i.mean(), 0);
        assertEquals(0, i.low(), 0);
        assertEquals(0.75, i.high(), 0);
    }

    @Test
    public void testPaired_sameSeed_sameInterval_andOrderOfQuestionsDoesNotMatterForTheMean() {
        double[] a = { 1, 1, 0, 1, 0, 0, 1, 1, 0.5, 0.63 };
        double[] b = { 0, 1, 0, 0, 1, 0, 1, 0, 0.5, 1 };
        PairedBootstrap.Interval first = PairedBootstrap.paired(a, b);
        assertEquals(first, PairedBootstrap.paired(a.clone(), b.clone()));
        assertEquals((1 + 0 + 0 + 1 - 1 + 0 + 0 + 1 + 0 - 0.37) / 10, first.mean(), 1e-12);
        assertTrue(first.low() < first.mean() && first.mean() < first.high());
    }

    @Test
    public void testStratified_weightsDatasetsEquallyNotByQuestionCount() {
        // stratum 1: 2 questions, all +1; stratum 2: 8 questions, all 0 → (1 + 0) / 2, not 2 / 10
        double[] a1 = { 1, 1 };
        double[] b1 = { 0, 0 };
        double[] zeros = new double[8];
        PairedBootstrap.Interval i = PairedBootstrap.stratified(List.of(a1, zeros), List.of(b1, zeros.clone()));
        assertEquals(0.5, i.mean(), 0);
        // every resample keeps each stratum's mean (constant within a stratum), so the interval has zero width
        assertEquals(0.5, i.low(), 0);
        assertEquals(0.5, i.high(), 0);
    }

    @Test
    public void testPercentile_interpolatesLinearlyBetweenClosestRanks() {
        double[] sorted = { 1, 2, 3, 4 };
        assertEquals(2.5, PairedBootstrap.percentile(sorted, 50), 1e-12);
        assertEquals(1, PairedBootstrap.percentile(sorted, 0), 0);
        assertEquals(4, PairedBootstrap.percentile(sorted, 100), 0);
        assertEquals(1.075, PairedBootstrap.percentile(sorted, 2.5), 1e-12); // 0.025 * 3 = 0.075 past the first
    }

    @Test
    public void testClustered_twoClustersOfFourQuestions_intervalFromTheThreeClusterDraws() {
        // differences: cluster 7 = {1, 1, 1, 1}, cluster 9 = {0, 0, 0, 0}. A resample draws 2 clusters: both 7 (p 1/4) →
        // mean 1, one of each (p 1/2) → 0.5, both 9 (p 1/4) → 0; the 2.5th and 97.5th percentiles are 0 and 1
        double[] a = { 1, 0, 1, 0, 1, 0, 1, 0 };
        double[] b = new double[8];
        int[] clusters = { 7, 9, 7, 9, 7, 9, 7, 9 };
        PairedBootstrap.Interval c = PairedBootstrap.clustered(a, b, clusters);
        assertEquals(new PairedBootstrap.Interval(0.5, 0, 1), c);
        // as 8 independent questions: mean j/8, j ~ Binomial(8, 1/2); P(j <= 0) = 0.4% < 2.5% < P(j <= 1) = 3.5%, so the
        // 2.5th percentile is 1/8, and 7/8 the 97.5th by symmetry: narrower, as if the 8 questions were 8 pieces of evidence
        assertEquals(new PairedBootstrap.Interval(0.5, 0.125, 0.875), PairedBootstrap.paired(a, b));
    }

    @Test
    public void testClustered_questionsDuplicatedInsideTheirCluster_doNotNarrowTheInterval() {
        double[] a = { 1, 0, 1, 1, 0.5, 0, 1, 0.63, 0, 1, 1, 0 };
        double[] b = { 0, 0, 1, 0, 1, 1, 0, 1, 0, 0, 1, 0.5 };
        int[] clusters = { 0, 0, 1, 1, 1, 2, 3, 3, 4, 5, 5, 5 };
        double[] a2 = new double[2 * a.length];
        double[] b2 = new double[2 * a.length];
        int[] clusters2 = new int[2 * a.length];
        for (int q = 0; q < a.length; q++) { // each question asked twice, in its own cluster, the copies at the end
            a2[q] = a2[a.length + q] = a[q];
            b2[q] = b2[a.length + q] = b[q];
            clusters2[q] = clusters2[a.length + q] = clusters[q];
        }
        PairedBootstrap.Interval once = PairedBootstrap.clustered(a, b, clusters);
        PairedBootstrap.Interval twice = PairedBootstrap.clustered(a2, b2, clusters2);
        assertEquals(once.mean(), twice.mean(), 1e-12);
        assertEquals(once.low(), twice.low(), 1e-12);
        assertEquals(once.high(), twice.high(), 1e-12);
        // the question-level bootstrap takes the copies for new evidence and narrows (by about √2)
        PairedBootstrap.Interval naiveOnce = PairedBootstrap.paired(a, b);
        PairedBootstrap.Interval naiveTwice = PairedBootstrap.paired(a2, b2);
        assertTrue(naiveTwice + " vs " + naiveOnce, naiveTwice.high() - naiveTwice.low() < 0.8 * (naiveOnce.high() - naiveOnce.low()));
    }

    @Test
    public void testClustered_everyQuestionItsOwnCluster_isThePairedBootstrap() {
        double[] a = { 1, 1, 0, 1, 0, 0, 1, 1, 0.5, 0.63 };
        double[] b = { 0, 1, 0, 0, 1, 0, 1, 0, 0.5, 1 };
        assertEquals(PairedBootstrap.paired(a, b), PairedBootstrap.clustered(a, b, new int[] { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 }));
    }

    @Test
    public void testStratified_withClusters_resamplesEachDatasetsClusters() {
        // dataset 1: one cluster of 3 questions, all +1 (every draw keeps mean 1); dataset 2: clusters {1, 1} and {0, 0}:
        // means 1 (1/4), 0.5 (1/2), 0 (1/4). The combined mean (1 + m2) / 2 spans [0.5, 1]
        PairedBootstrap.Interval i = PairedBootstrap.stratified(List.of(new double[] { 1, 1, 1 }, new double[] { 1, 1, 0, 0 }),
            List.of(new double[3], new double[4]), List.of(new int[] { 5, 5, 5 }, new int[] { 1, 1, 2, 2 }));
        assertEquals(new PairedBootstrap.Interval(0.75, 0.5, 1), i);
    }

    @Test(expected = IllegalArgumentException.class)
    public void testClustered_clustersOfAnotherLength_areRefused() {
        PairedBootstrap.clustered(new double[] { 1, 0 }, new double[] { 1, 0 }, new int[] { 0 });
    }

    @Test(expected = IllegalArgumentException.class)
    public void testPaired_unpairedLengths_areRefused() {
        PairedBootstrap.paired(new double[] { 1, 0 }, new double[] { 1 });
    }
}

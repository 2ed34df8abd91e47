package io.strata.eval;

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

    @Test(expected = IllegalArgumentException.class)
    public void testPaired_unpairedLengths_areRefused() {
        PairedBootstrap.paired(new double[] { 1, 0 }, new double[] { 1 });
    }
}

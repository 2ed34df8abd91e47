package io.strata.quality;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Paired cluster bootstrap confidence interval of a difference of means (Efron and Tibshirani 1993, ch. 16; clusters
 * as in Field and Welsh 2007): both systems answered the same questions, so the per-question differences are
 * resampled, and the mean difference is recomputed on every resample; the 2.5th and 97.5th percentiles of those means
 * bound the 95% interval. Pairing removes the spread between easy and hard questions, which is most of the variance.
 *
 * <p>Questions that share a passage are not independent (SQuAD asks up to 24 questions of one paragraph): the unit
 * resampled is the cluster — a SQuAD paragraph, a COVID-QA article, one question of a book set, a {@code _compare}
 * question's {@code cluster} — with all its questions, and a resample's statistic is the mean over the questions it drew (sum of the drawn clusters' differences over their question count). Questions asked twice in one
 * cluster therefore leave the interval as it was; with every question its own cluster this is the plain paired
 * bootstrap.
 *
 * <p>Stratified form for several datasets: each dataset is resampled within itself (its own number of clusters) and
 * the statistic is the unweighted mean of the datasets' mean differences, so a 705-question set does not drown a
 * 30-question one. Deterministic: a fixed seed and {@link SplittableRandom}, whose sequence is specified across JVMs.
 */
public final class PairedBootstrap {
    public static final int RESAMPLES = 10_000;
    public static final long SEED = 12;

    /** The observed mean difference and the [2.5, 97.5] percentile bounds of its bootstrap distribution. */
    public record Interval(double mean, double low, double high) {
        /** True when the interval excludes 0 (the difference is beyond noise at 95%). */
        public boolean excludesZero() {
            return low > 0 || high < 0;
        }
    }

    private PairedBootstrap() {}

    /** 95% interval of mean(a − b) over paired per-question scores, each question its own cluster. */
    public static Interval paired(double[] a, double[] b) {
        return stratified(List.of(a), List.of(b), null, RESAMPLES, SEED);
    }

    /** 95% interval of mean(a − b), resampling the clusters ({@code clusters[q]}: question q's cluster, any ids). */
    public static Interval clustered(double[] a, double[] b, int[] clusters) {
        return stratified(List.of(a), List.of(b), List.of(clusters), RESAMPLES, SEED);
    }

    /** 95% interval of the unweighted mean over strata of mean(a_s − b_s), resampling within each stratum. */
    public static Interval stratified(List<double[]> a, List<double[]> b) {
        return stratified(a, b, null, RESAMPLES, SEED);
    }

    /** As {@link #stratified(List, List)}, resampling each stratum's clusters ({@code clusters} null: every question its own). */
    public static Interval stratified(List<double[]> a, List<double[]> b, List<int[]> clusters) {
        return stratified(a, b, clusters, RESAMPLES, SEED);
    }

    static Interval stratified(List<double[]> a, List<double[]> b, List<int[]> clusters, int resamples, long seed) {
        if (a.size() != b.size() || a.isEmpty() || (clusters != null && clusters.size() != a.size())) {
            throw new IllegalArgumentException("need the same number (> 0) of strata on both sides and of cluster lists, got " + a.size()
                + ", " + b.size() + " and " + (clusters == null ? "none" : clusters.size()));
        }
        List<double[]> sums = new ArrayList<>(); // per stratum, per cluster: the sum of its questions' differences
        List<int[]> counts = new ArrayList<>(); // per stratum, per cluster: its number of questions
        double observed = 0;
        for (int s = 0; s < a.size(); s++) {
            double[] as = a.get(s);
            double[] bs = b.get(s);
            int[] cs = clusters == null ? null : clusters.get(s);
            if (as.length != bs.length || as.length == 0 || (cs != null && cs.length != as.length)) {
                throw new IllegalArgumentException("stratum " + s + ": paired scores and their clusters need equal, non-zero lengths, got "
                    + as.length + ", " + bs.length + " and " + (cs == null ? as.length : cs.length));
            }
            Map<Integer, Integer> index = new LinkedHashMap<>(); // cluster id → its slot, in order of first appearance
            for (int q = 0; q < as.length; q++) {
                index.putIfAbsent(cs == null ? q : cs[q], index.size());
            }
            double[] sum = new double[index.size()];
            int[] count = new int[index.size()];
            double total = 0;
            for (int q = 0; q < as.length; q++) {
                int slot = index.get(cs == null ? q : cs[q]);
                sum[slot] += as[q] - bs[q];
                count[slot]++;
                total += as[q] - bs[q];
            }
            sums.add(sum);
            counts.add(count);
            observed += total / as.length;
        }
        observed /= a.size();
        SplittableRandom random = new SplittableRandom(seed);
        double[] means = new double[resamples];
        for (int r = 0; r < resamples; r++) {
            double mean = 0;
            for (int s = 0; s < sums.size(); s++) {
                double[] sum = sums.get(s);
                int[] count = counts.get(s);
                double drawnSum = 0;
                long drawnQuestions = 0;
                for (int i = 0; i < sum.length; i++) {
                    int c = random.nextInt(sum.length);
                    drawnSum += sum[c];
                    drawnQuestions += count[c];
                }
                mean += drawnSum / drawnQuestions;
            }
            means[r] = mean / sums.size();
        }
        Arrays.sort(means);
        return new Interval(observed, percentile(means, 2.5), percentile(means, 97.5));
    }

    /** The p-th percentile of sorted values, linear interpolation between closest ranks (numpy's default). */
    static double percentile(double[] sorted, double p) {
        double pos = p / 100 * (sorted.length - 1);
        int lo = (int) Math.floor(pos);
        int hi = Math.min(lo + 1, sorted.length - 1);
        return sorted[lo] + (pos - lo) * (sorted[hi] - sorted[lo]);
    }
}

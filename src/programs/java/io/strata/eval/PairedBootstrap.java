package io.strata.eval;

import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Paired bootstrap confidence interval of a difference of means (Efron and Tibshirani 1993, ch. 16): both systems
 * answered the same questions, so the questions are resampled with replacement and the mean of the per-question
 * differences is recomputed on every resample; the 2.5th and 97.5th percentiles of those means bound the 95% interval.
 * Pairing removes the spread between easy and hard questions, which is most of the variance here.
 *
 * <p>Stratified form for several datasets: each dataset is resampled within itself (its own size) and the statistic
 * is the unweighted mean of the datasets' mean differences, so a 705-question set does not drown a 30-question one.
 * Deterministic: a fixed seed and {@link SplittableRandom}, whose sequence is specified across JVMs.
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

    /** 95% interval of mean(a − b) over paired per-question scores, {@link #RESAMPLES} resamples, {@link #SEED}. */
    public static Interval paired(double[] a, double[] b) {
        return stratified(List.of(a), List.of(b), RESAMPLES, SEED);
    }

    /** 95% interval of the unweighted mean over strata of mean(a_s − b_s), resampling within each stratum. */
    public static Interval stratified(List<double[]> a, List<double[]> b) {
        return stratified(a, b, RESAMPLES, SEED);
    }

    static Interval stratified(List<double[]> a, List<double[]> b, int resamples, long seed) {
        if (a.size() != b.size() || a.isEmpty()) {
            throw new IllegalArgumentException("need the same number (> 0) of strata on both sides, got " + a.size() + " and " + b.size());
        }
        double[][] diffs = new double[a.size()][];
        double observed = 0;
        for (int s = 0; s < a.size(); s++) {
            if (a.get(s).length != b.get(s).length || a.get(s).length == 0) {
                throw new IllegalArgumentException("stratum " + s + ": paired scores need equal, non-zero lengths, got " + a.get(s).length
                    + " and " + b.get(s).length);
            }
            diffs[s] = new double[a.get(s).length];
            for (int i = 0; i < diffs[s].length; i++) {
                diffs[s][i] = a.get(s)[i] - b.get(s)[i];
            }
            observed += mean(diffs[s]);
        }
        observed /= diffs.length;
        SplittableRandom random = new SplittableRandom(seed);
        double[] means = new double[resamples];
        for (int r = 0; r < resamples; r++) {
            double sum = 0;
            for (double[] d : diffs) {
                double stratumSum = 0;
                for (int i = 0; i < d.length; i++) {
                    stratumSum += d[random.nextInt(d.length)];
                }
                sum += stratumSum / d.length;
            }
            means[r] = sum / diffs.length;
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

    private static double mean(double[] values) {
        double sum = 0;
        for (double v : values) {
            sum += v;
        }
        return sum / values.length;
    }
}

package io.strata.chunking;

import java.util.Arrays;

/** Small numeric helpers shared by the embedding-based strategies (and {@code _chunk}'s scores). */
public final class Vectors {
    private Vectors() {}

    /** Cosine similarity; the vectors need not be unit length (0 when either is zero). */
    public static double cosine(float[] a, float[] b) {
        if (a.length != b.length) {
            throw new IllegalArgumentException("vectors of different dimensions: " + a.length + " and " + b.length);
        }
        double dot = 0;
        double na = 0;
        double nb = 0;
        for (int i = 0; i < a.length; i++) {
            dot += (double) a[i] * b[i];
            na += (double) a[i] * a[i];
            nb += (double) b[i] * b[i];
        }
        return na == 0 || nb == 0 ? 0 : dot / Math.sqrt(na * nb);
    }

    static double mean(double[] v) {
        double s = 0;
        for (double x : v) {
            s += x;
        }
        return s / v.length;
    }

    /** Population standard deviation (numpy's default, ddof = 0). */
    static double std(double[] v) {
        double m = mean(v);
        double s = 0;
        for (double x : v) {
            s += (x - m) * (x - m);
        }
        return Math.sqrt(s / v.length);
    }

    /** The p-th percentile (p in [0, 100]) with linear interpolation between closest ranks (numpy's default). */
    static double percentile(double[] v, double p) {
        double[] sorted = v.clone();
        Arrays.sort(sorted);
        double rank = p / 100 * (sorted.length - 1);
        int lo = (int) Math.floor(rank);
        int hi = Math.min(lo + 1, sorted.length - 1);
        return sorted[lo] + (rank - lo) * (sorted[hi] - sorted[lo]);
    }
}

package io.strata.inference;

import java.util.Arrays;

/**
 * How late chunking covers a text longer than the model's context: the text's {@code n} tokens (special tokens and the
 * instruction prefix aside, which every window repeats) in windows of at most {@code w} tokens. One window when the
 * text fits; else {@code k} windows of exactly {@code w} tokens, the first at token 0 and the last ending at token
 * {@code n}, starts spread evenly between them, with {@code k} the fewest that keeps every overlap at least
 * {@code w / 4} tokens. The first window is then exactly the input {@link DjlEmbedder#embed} runs for the whole text
 * (the first tokens, truncated), which is how the parent's vector stays bitwise that of {@code embed}.
 *
 * <p>Each token's state comes from its {@link #owner} window: the one where it has most context, i.e. the largest
 * {@code min(left, right)} of the tokens it sees on each side, where a side reaching the text's own edge counts as full
 * (nothing more to see there). Ties go to the earlier window. This is BERT's "max context" rule for long SQuAD
 * documents, with the text's edges treated as complete context.
 *
 * <p>θ 500 parents (≈ 650 tokens for e5-small-v2, 512 context) take two windows; θ 300 (≈ 390) one.
 */
final class LateWindows {
    private final int n;
    private final int w;
    private final int[] starts;
    private final int[] owner;

    private LateWindows(int n, int w, int[] starts) {
        this.n = n;
        this.w = w;
        this.starts = starts;
        this.owner = new int[n];
        for (int b = 0; b < n; b++) {
            long best = Long.MIN_VALUE;
            for (int j = 0; j < starts.length; j++) {
                int s = starts[j];
                int e = end(j);
                if (b < s || b >= e) {
                    continue;
                }
                long left = s == 0 ? Long.MAX_VALUE : b - s;
                long right = e == n ? Long.MAX_VALUE : e - 1 - b;
                long score = Math.min(left, right);
                if (score > best) {
                    best = score;
                    owner[b] = j;
                }
            }
        }
    }

    /** The windows of {@code n} tokens, at most {@code w} each ({@code w >= 1}). */
    static LateWindows of(int n, int w) {
        if (n < 0 || w < 1) {
            throw new IllegalArgumentException("tokens must be >= 0 and window >= 1, got " + n + " and " + w);
        }
        if (n <= w) {
            return new LateWindows(n, w, new int[] { 0 });
        }
        int overlap = Math.max(1, w / 4);
        int stride = Math.max(1, w - overlap);
        int k = (n - w + stride - 1) / stride + 1; // the fewest windows whose overlaps are all >= overlap
        int[] starts = new int[k];
        for (int j = 0; j < k; j++) {
            starts[j] = (int) ((long) j * (n - w) / (k - 1));
        }
        return new LateWindows(n, w, starts);
    }

    int count() {
        return starts.length;
    }

    int start(int window) {
        return starts[window];
    }

    /** Exclusive. */
    int end(int window) {
        return Math.min(n, starts[window] + w);
    }

    /** The window token {@code b}'s state is taken from. */
    int owner(int b) {
        return owner[b];
    }

    @Override
    public String toString() {
        return "LateWindows[n=" + n + ", w=" + w + ", starts=" + Arrays.toString(starts) + "]";
    }
}

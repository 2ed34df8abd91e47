package io.strata.chunking;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * {@code perplexity}: Meta-Chunking's Perplexity Chunking (Zhao et al., §2.1, eq. 2–3) with its dynamic combination.
 *
 * <ol>
 *   <li>Each sentence x_i gets PPL(x_i) = the mean over its tokens of −log p(t | all preceding text) (eq. 2), read
 *       from one {@link CausalLm#logProbs} over the whole text. The model implementation does the sliding window for
 *       texts longer than its context (the paper's KV-cache truncation, §2.1), so memory stays proportional to the
 *       text.</li>
 *   <li>Sentence i (not the first or last) is a minimum when min(PPL(x_{i−1}), PPL(x_{i+1})) − PPL(x_i) &gt; θ, or
 *       PPL(x_{i−1}) − PPL(x_i) &gt; θ and PPL(x_{i+1}) = PPL(x_i) (eq. 3, θ = {@code threshold}, default 0 as in the
 *       paper's main "0+comb." setting, Table 3). A minimum is well predicted by what precedes it, so it closes
 *       its meta-chunk: the text is cut right after it.</li>
 *   <li>Meta-chunks are merged greedily up to {@code merge_words} words (the dynamic combination; default θ, at most
 *       θ; 0 keeps the meta-chunks, the paper's "direct PPL Chunking").</li>
 *   <li>A chunk still above θ = {@code max_words} words is split by {@link RecursiveSplitter}.</li>
 * </ol>
 *
 * <p><b>Overlap variant</b> ({@code overlap: true}, §4.2.1): the minimum sentence that closes a chunk is also given to
 * the next chunk, as its first sentence. This is the one strategy whose parents may overlap, which departs from the
 * {@link ChunkingStrategy#split} contract on purpose: consecutive parents then share exactly that sentence, parents
 * stay trimmed, ordered by start and ≤ θ words (the overlap is dropped where it would push the next parent above θ),
 * and together still cover all non-whitespace. Parents never overlap otherwise.
 *
 * <p>Where we differ or choose:
 * <ul>
 *   <li>Eq. 2 averages per-token "PPL"; like the authors' code we average the token negative log-likelihood (nats),
 *       i.e. the log of the sentence perplexity, which is the scale the paper's thresholds (0.5, 1.34) are on.</li>
 *   <li>Tokens are assigned to the sentence holding their first non-whitespace character; whitespace-only tokens
 *       and tokens without a score (the first one of a model without a start token) are skipped. A sentence with no
 *       scored token has PPL NaN and is never a minimum.</li>
 *   <li>Lengths for merging are words (our θ unit), not the paper's tokens/characters.</li>
 * </ul>
 */
public final class PerplexityStrategy extends ModelGuidedStrategy {
    public static final String TYPE = "perplexity";
    public static final String SIGNAL = "perplexity";
    public static final double MAX_THRESHOLD = 100;

    private final CausalLm lm;
    private final double threshold;
    private final int mergeWords;
    private final boolean overlap;

    public PerplexityStrategy(CausalLm lm, double threshold, int mergeWords, boolean overlap, int maxWords) {
        super(maxWords);
        this.lm = Objects.requireNonNull(lm);
        if (!(threshold >= 0 && threshold <= MAX_THRESHOLD)) {
            throw new IllegalArgumentException("threshold must be in [0, " + MAX_THRESHOLD + "], got " + threshold);
        }
        if (mergeWords < 0 || mergeWords > maxWords) {
            throw new IllegalArgumentException("merge words must be in [0, " + maxWords + "], got " + mergeWords);
        }
        this.threshold = threshold;
        this.mergeWords = mergeWords;
        this.overlap = overlap;
    }

    /** Reads {@code max_words}, {@code llm} / {@code llm_model_id}, {@code threshold}, {@code merge_words}, {@code overlap}. */
    static PerplexityStrategy parse(ChunkingConfig.Options options) {
        int theta = options.maxWords();
        CausalLm lm = options.causalLm();
        double threshold = options.doubleValue("threshold", 0, 0, MAX_THRESHOLD);
        int merge = options.intValue("merge_words", theta, 0, theta);
        boolean overlap = options.booleanValue("overlap", false);
        return new PerplexityStrategy(lm, threshold, merge, overlap, theta);
    }

    @Override
    public String type() {
        return TYPE;
    }

    public double threshold() {
        return threshold;
    }

    public int mergeWords() {
        return mergeWords;
    }

    public boolean overlap() {
        return overlap;
    }

    @Override
    public Segmentation segment(TextIndex text) {
        List<Span> units = SentenceUnits.of(text, splitter);
        int n = units.size();
        if (n <= 2) { // eq. 3 needs a sentence with two neighbours: no model call can change the result
            return Segmentation.of(n == 0 ? List.of() : mergeAndBound(text, units, List.of(n - 1)));
        }
        double[] ppl = sentencePerplexities(units, lm.logProbs(text.text()), text.text());
        List<Integer> cuts = new ArrayList<>();
        for (int i : minima(ppl, threshold)) {
            cuts.add(i);
        }
        cuts.add(n - 1);
        Segmentation.Evidence evidence = new Segmentation.Evidence(SIGNAL, SentenceUnits.ends(units), ppl, threshold);
        return new Segmentation(mergeAndBound(text, units, cuts), List.of(evidence));
    }

    /** Eq. 3: indexes of the minima of {@code ppl} (never the first or last sentence). */
    static int[] minima(double[] ppl, double threshold) {
        int[] out = new int[ppl.length];
        int m = 0;
        for (int i = 1; i + 1 < ppl.length; i++) {
            double before = ppl[i - 1];
            double here = ppl[i];
            double after = ppl[i + 1];
            // comparisons with NaN are false, so an unscored sentence is neither a minimum nor makes one
            if (Math.min(before, after) - here > threshold || (before - here > threshold && after == here)) {
                out[m++] = i;
            }
        }
        return Arrays.copyOf(out, m);
    }

    /** Eq. 2: mean token negative log-likelihood per unit. */
    static double[] sentencePerplexities(List<Span> units, CausalLm.TokenLogProbs lp, String text) {
        int[] starts = new int[units.size()];
        for (int i = 0; i < starts.length; i++) {
            starts[i] = units.get(i).start();
        }
        double[] sum = new double[units.size()];
        int[] count = new int[units.size()];
        for (int t = 0; t < lp.size(); t++) {
            double logProb = lp.logProbs()[t];
            if (Double.isNaN(logProb)) {
                continue;
            }
            int c = lp.tokenStarts()[t];
            int end = Math.min(lp.tokenEnds()[t], text.length());
            while (c < end && TextIndex.isWhitespace(text.charAt(c))) {
                c++;
            }
            if (c >= end) {
                continue;
            }
            int k = Arrays.binarySearch(starts, c);
            int unit = k >= 0 ? k : -k - 2; // last unit starting at or before c
            if (unit < 0 || c >= units.get(unit).end()) {
                continue; // cannot happen for a non-whitespace character; be safe with odd tokenizers
            }
            sum[unit] -= logProb;
            count[unit]++;
        }
        double[] out = new double[units.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = count[i] == 0 ? Double.NaN : sum[i] / count[i];
        }
        return out;
    }

    /** Merges the meta-chunks ending at {@code cuts}, bounds them by θ, and adds the overlap of the variant. */
    private List<Span> mergeAndBound(TextIndex text, List<Span> units, List<Integer> cuts) {
        List<Integer> merged = SentenceUnits.merge(text, units, cuts, mergeWords);
        List<Span> out = new ArrayList<>();
        int first = 0;
        for (int cut : merged) {
            Span chunk = new Span(units.get(first).start(), units.get(cut).end());
            List<Span> pieces = text.size(chunk) > maxWords() ? splitter.split(text, chunk) : List.of(chunk);
            for (int p = 0; p < pieces.size(); p++) {
                Span piece = pieces.get(p);
                if (overlap && p == 0 && first > 0) {
                    // §4.2.1: the minimum that closed the previous chunk opens this one too, if θ allows
                    int sharedStart = units.get(first - 1).start();
                    if (text.size(sharedStart, piece.end()) <= maxWords()) {
                        piece = new Span(sharedStart, piece.end());
                    }
                }
                out.add(piece);
            }
            first = cut + 1;
        }
        return out;
    }
}

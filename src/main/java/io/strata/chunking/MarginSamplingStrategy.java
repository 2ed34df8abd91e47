package io.strata.chunking;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * {@code margin_sampling}: Meta-Chunking's Margin Sampling Chunking (Zhao et al., §2.1, eq. 1) with its dynamic
 * combination.
 *
 * <p>Sentences are read in order. For each next sentence x_i the model answers the prompt of the paper's Table 5
 * (verbatim, with sentence_1 = X' and sentence_2 = x_i) and Margin(x_i) = P("1") − P("2"), the two answer
 * probabilities normalised over the two answers (a softmax over their log-probabilities from
 * {@link CausalLm#continuationLogProbs}). "1" is "split", so x_i starts a new chunk when the margin exceeds the
 * adaptive threshold: 0 for the first decision, then the mean of all earlier margins (§2.1: "initially assign it a
 * value of 0 and then adjust it by recording historical Margin and calculating their average").
 * X' is the previous sentence ({@code context: sentence}, default; the paper's "sent." rows) or the whole current
 * chunk ({@code context: chunk}; the "chunk" rows, slower, prompts grow up to θ words).
 *
 * <p>The defaults follow the authors' code (tools/margin_sampling_chunking.py of the Meta-Chunking repository) where it
 * is more specific than the text: {@code threshold_window} N = {@value #DEFAULT_THRESHOLD_WINDOW} keeps the threshold at
 * 0 until N margins are recorded, then uses the mean of the last N; {@code threshold_window: 0} is the text's mean of
 * all earlier margins. {@code margin: raw} (default) takes P("1") and P("2") over the whole vocabulary, as eq. 1 and the
 * code do; {@code margin: normalised} renormalises them over the two answers (a base model that puts little mass on
 * either answer still gives margins in [−1, 1]). No measurement chose between them: the only causal LM on this machine
 * is a 0.14M-parameter test fixture, so the defaults are the paper's as its authors run it. The authors' code also
 * wraps the question in Qwen's chat template: a model's {@code chat_template} (model.json) does that here.
 *
 * <p>Then, as for perplexity chunking, the chunks are merged greedily up to {@code merge_words} words (default θ,
 * the paper's "0+comb." setting of Table 3; 0 keeps them as decided). A sentence that would push the current chunk
 * above θ = {@code max_words} words starts a new chunk without asking the model (nothing is recorded for it), so no
 * parent exceeds θ; a single sentence above θ is cut into θ-word windows first.
 *
 * <p>Evidence: signal {@value #SIGNAL} (the margin at the end of the sentence before each decided boundary) and
 * {@value #THRESHOLD_SIGNAL} (the adaptive threshold it was compared with, at the same positions); the single
 * {@code threshold} field of the margin evidence is NaN because the threshold changes per position.
 */
public final class MarginSamplingStrategy extends ModelGuidedStrategy {
    public static final String TYPE = "margin_sampling";
    public static final String SIGNAL = "margin";
    public static final String THRESHOLD_SIGNAL = "margin_threshold";
    public static final List<String> CONTEXTS = List.of("sentence", "chunk");
    /** The two answers of Table 5: "1" = split, "2" = keep together. */
    static final List<String> ANSWERS = List.of("1", "2");

    /** {@code margin}: the first is the default. */
    public static final List<String> MARGINS = List.of("raw", "normalised");
    /** The authors' code: the mean of the last five margins. */
    public static final int DEFAULT_THRESHOLD_WINDOW = 5;

    private final CausalLm lm;
    private final boolean chunkContext;
    private final int mergeWords;
    /** 0: the mean of every earlier margin; N: 0 until N margins, then the mean of the last N. */
    private final int thresholdWindow;
    private final boolean rawMargins;

    public MarginSamplingStrategy(CausalLm lm, boolean chunkContext, int mergeWords, int maxWords) {
        this(lm, chunkContext, mergeWords, maxWords, 0, false);
    }

    public MarginSamplingStrategy(CausalLm lm, boolean chunkContext, int mergeWords, int maxWords, int thresholdWindow,
                                  boolean rawMargins) {
        super(maxWords);
        if (thresholdWindow < 0) {
            throw new IllegalArgumentException("threshold window must be >= 0, got " + thresholdWindow);
        }
        this.thresholdWindow = thresholdWindow;
        this.rawMargins = rawMargins;
        this.lm = Objects.requireNonNull(lm);
        if (mergeWords < 0 || mergeWords > maxWords) {
            throw new IllegalArgumentException("merge words must be in [0, " + maxWords + "], got " + mergeWords);
        }
        this.chunkContext = chunkContext;
        this.mergeWords = mergeWords;
    }

    /**
     * Reads {@code max_words}, {@code llm} / {@code llm_model_id}, {@code context}, {@code merge_words},
     * {@code threshold_window}, {@code margin}.
     */
    static MarginSamplingStrategy parse(ChunkingConfig.Options options) {
        int theta = options.maxWords();
        CausalLm lm = options.causalLm();
        boolean chunk = options.enumValue("context", CONTEXTS).equals("chunk");
        int merge = options.intValue("merge_words", theta, 0, theta);
        int window = options.intValue("threshold_window", DEFAULT_THRESHOLD_WINDOW, 0, 1000);
        boolean raw = options.enumValue("margin", MARGINS).equals("raw");
        return new MarginSamplingStrategy(lm, chunk, merge, theta, window, raw);
    }

    public int thresholdWindow() {
        return thresholdWindow;
    }

    public boolean rawMargins() {
        return rawMargins;
    }

    /** The prompt of Table 5 (Meta-Chunking, Appendix), verbatim, for X' = {@code first} and x_i = {@code second}. */
    public static String prompt(String first, String second) {
        String both = first + " " + second;
        return "This is a text chunking task. You are a text analysis expert. Please choose one of the following two "
            + "options based on the logical structure and semantic content of the provided sentence:\n\n"
            + "1. Split " + both + " into " + first + " and " + second + " two parts;\n"
            + "2. Keep " + both + " unsplit in its original form;\n\n"
            + "Please answer 1 or 2.";
    }

    @Override
    public String type() {
        return TYPE;
    }

    public boolean chunkContext() {
        return chunkContext;
    }

    public int mergeWords() {
        return mergeWords;
    }

    @Override
    public Segmentation segment(TextIndex text) {
        List<Span> units = SentenceUnits.of(text, splitter);
        int n = units.size();
        if (n == 0) {
            return Segmentation.of(List.of());
        }
        String source = text.text();
        List<Integer> cuts = new ArrayList<>();
        int[] positions = new int[n];
        double[] margins = new double[n];
        double[] thresholds = new double[n];
        int decided = 0;
        double marginSum = 0;
        int chunkStart = 0;
        for (int i = 1; i < n; i++) {
            if (text.size(units.get(chunkStart).start(), units.get(i).end()) > maxWords()) {
                cuts.add(i - 1); // θ bound: no question to ask
                chunkStart = i;
                continue;
            }
            Span context = chunkContext ? new Span(units.get(chunkStart).start(), units.get(i - 1).end()) : units.get(i - 1);
            double[] logProbs = lm.continuationLogProbs(prompt(context.of(source), units.get(i).of(source)), ANSWERS);
            if (logProbs.length != 2) {
                throw new IllegalStateException("causal LM [" + lm.name() + "] returned " + logProbs.length
                    + " log-probabilities for 2 answers");
            }
            double margin = rawMargins ? rawMargin(logProbs[0], logProbs[1]) : margin(logProbs[0], logProbs[1]);
            double threshold = threshold(margins, decided, marginSum);
            positions[decided] = units.get(i - 1).end();
            margins[decided] = margin;
            thresholds[decided] = threshold;
            decided++;
            marginSum += margin;
            if (margin > threshold) {
                cuts.add(i - 1);
                chunkStart = i;
            }
        }
        cuts.add(n - 1);
        List<Integer> merged = SentenceUnits.merge(text, units, cuts, mergeWords);
        List<Span> parents = new ArrayList<>(merged.size());
        int first = 0;
        for (int cut : merged) {
            parents.add(new Span(units.get(first).start(), units.get(cut).end()));
            first = cut + 1;
        }
        int[] at = Arrays.copyOf(positions, decided);
        return new Segmentation(parents, List.of(
            new Segmentation.Evidence(SIGNAL, at, Arrays.copyOf(margins, decided), Double.NaN),
            new Segmentation.Evidence(THRESHOLD_SIGNAL, at.clone(), Arrays.copyOf(thresholds, decided), Double.NaN)));
    }

    /** The adaptive threshold before decision {@code decided}: see the class comment. */
    private double threshold(double[] margins, int decided, double marginSum) {
        if (thresholdWindow == 0) {
            return decided == 0 ? 0 : marginSum / decided;
        }
        if (decided < thresholdWindow) {
            return 0;
        }
        double sum = 0;
        for (int k = decided - thresholdWindow; k < decided; k++) {
            sum += margins[k];
        }
        return sum / thresholdWindow;
    }

    /** Eq. 1 as written: P("1") − P("2"), each the model's probability over its whole vocabulary. */
    static double rawMargin(double logSplit, double logKeep) {
        double split = Double.isNaN(logSplit) ? 0 : Math.exp(logSplit);
        double keep = Double.isNaN(logKeep) ? 0 : Math.exp(logKeep);
        return split - keep;
    }

    /**
     * Eq. 1 with the two answers normalised: P("1") − P("2") where P(a) = exp(log p(a)) / (exp(log p("1")) +
     * exp(log p("2"))), which is tanh((log p("1") − log p("2")) / 2). 0 when the model gives neither any mass.
     */
    static double margin(double logSplit, double logKeep) {
        if (Double.isNaN(logSplit) || Double.isNaN(logKeep) || (logSplit == Double.NEGATIVE_INFINITY && logKeep == Double.NEGATIVE_INFINITY)) {
            return 0;
        }
        if (logKeep == Double.NEGATIVE_INFINITY) {
            return 1;
        }
        if (logSplit == Double.NEGATIVE_INFINITY) {
            return -1;
        }
        return Math.tanh((logSplit - logKeep) / 2);
    }
}

package io.strata.chunking;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * {@code logits_guided}: the Logits-Guided Chunker of the LGMGC paper (§3.1, eq. 1). LGMGC is this strategy with
 * the multi-granular children of {@link MultiGranularChunker}.
 *
 * <p>The text is read as a stream of windows of at most θ = {@code max_words} words made of whole sentences. For a
 * window c = s1 ⊕ … ⊕ sn one forward pass gives p([EOS] | ρ, s1 ⊕ … ⊕ sk) after every sentence k; the window is cut
 * after b = argmax_k of it (eq. 1), the text before b is a parent, and the rest is carried into the next window,
 * which is topped up with the following sentences to θ words again. The loop stops when the input falls below the
 * remainder threshold ({@code remainder_words}): that input is the last parent.
 *
 * <p>Where we differ from (or fill in) the paper:
 * <ul>
 *   <li>The paper builds the input as "remainder ⊕ next recursive chunk of θ words", which can reach 2θ words; we top
 *       the remainder up to θ words with whole sentences instead, so every window, and hence every parent, is at
 *       most θ words (the paper's "constrained by an upper bound"). A sentence above θ words is cut into θ-word
 *       windows first and those pieces count as sentences.</li>
 *   <li>The paper gives neither ρ nor the stopping threshold. ρ defaults to {@link #DEFAULT_PROMPT}, an instruction
 *       to continue the text as the paper describes it ({@code prompt} overrides it). The threshold defaults to
 *       θ/4 words, the smallest granularity of §3.2: a document tail shorter than that is not worth a forward
 *       pass and becomes the last parent as is. It only applies to the tail of the document, because before the
 *       tail every input is topped up to about θ words.</li>
 *   <li>A window of one sentence needs no forward pass (the argmax is that sentence).</li>
 *   <li>Ties in eq. 1 go to the earliest sentence; NaN probabilities never win.</li>
 * </ul>
 * Memory is proportional to the text: one window is scored at a time.
 */
public final class LogitsGuidedStrategy extends ModelGuidedStrategy {
    public static final String TYPE = "logits_guided";
    /** ρ: the paper's "prompt instructing the LLM to continue writing based on the provided sentence" (not given verbatim). */
    public static final String DEFAULT_PROMPT = "Continue writing the following text.\n\n";
    public static final String SIGNAL = "eos_probability";

    private final CausalLm lm;
    private final String prompt;
    private final int remainderWords;

    public LogitsGuidedStrategy(CausalLm lm, String prompt, int remainderWords, int maxWords) {
        super(maxWords);
        this.lm = Objects.requireNonNull(lm);
        this.prompt = Objects.requireNonNull(prompt);
        if (remainderWords < 0 || remainderWords > maxWords) {
            throw new IllegalArgumentException("remainder words must be in [0, " + maxWords + "], got " + remainderWords);
        }
        this.remainderWords = remainderWords;
    }

    /** Reads {@code max_words}, {@code llm} / {@code llm_model_id}, {@code prompt}, {@code remainder_words}. */
    static LogitsGuidedStrategy parse(ChunkingConfig.Options options) {
        int theta = options.maxWords();
        CausalLm lm = options.causalLm();
        String prompt = options.stringValue("prompt", DEFAULT_PROMPT);
        int remainder = options.intValue("remainder_words", theta / 4, 0, theta);
        return new LogitsGuidedStrategy(lm, prompt, remainder, theta);
    }

    @Override
    public String type() {
        return TYPE;
    }

    public String prompt() {
        return prompt;
    }

    public int remainderWords() {
        return remainderWords;
    }

    @Override
    public Segmentation segment(TextIndex text) {
        int theta = maxWords();
        List<Span> units = SentenceUnits.of(text, splitter);
        List<Span> parents = new ArrayList<>();
        List<Segmentation.Evidence> evidence = new ArrayList<>();
        int n = units.size();
        int first = 0;
        while (first < n) {
            int windowStart = units.get(first).start();
            int last = first;
            while (last + 1 < n && text.size(windowStart, units.get(last + 1).end()) <= theta) {
                last++;
            }
            boolean tail = last == n - 1;
            if (last == first || (tail && text.size(windowStart, units.get(last).end()) < remainderWords)) {
                parents.add(new Span(windowStart, units.get(last).end()));
                first = last + 1;
                continue;
            }
            int[] positions = new int[last - first + 1];
            int[] absolute = new int[positions.length];
            for (int k = 0; k < positions.length; k++) {
                absolute[k] = units.get(first + k).end();
                positions[k] = absolute[k] - windowStart;
            }
            String window = text.text().substring(windowStart, units.get(last).end());
            double[] eos = lm.eosProbabilities(prompt, window, positions);
            if (eos.length != positions.length) {
                throw new IllegalStateException("causal LM [" + lm.name() + "] returned " + eos.length
                    + " EOS probabilities for " + positions.length + " positions");
            }
            double[] shown = eos.clone();
            for (int k = 0; k < shown.length; k++) {
                shown[k] = CausalLm.isKnown(shown[k]) ? shown[k] : Double.NaN; // not known: shown as such
            }
            evidence.add(new Segmentation.Evidence(SIGNAL, absolute, shown, Double.NaN));
            int cut = decide(eos, lm.name());
            parents.add(new Span(windowStart, absolute[cut]));
            first += cut + 1;
        }
        return new Segmentation(parents, evidence);
    }

    /**
     * The window's cut (eq. 1: argmax of p(EOS)). A value the model could not give ({@link CausalLm#unknownBelow}, a remote
     * API that lists only its top alternatives) is below its bound: the argmax is decided when the best known value is at
     * least every such bound; otherwise no cut is faithful to the paper, and the document fails naming the model (we
     * deliberately do not read an unknown p(EOS) as 0, which cuts after the first sentence of every window).
     */
    static int decide(double[] eos, String model) {
        if (eos.length == 1) {
            return 0; // one sentence end: nothing to choose
        }
        double bound = 0;
        int unknown = 0;
        double[] known = eos.clone();
        for (int i = 0; i < eos.length; i++) {
            if (!CausalLm.isKnown(eos[i])) {
                bound = Math.max(bound, -eos[i]);
                unknown++;
                known[i] = Double.NaN;
            }
        }
        int best = argmax(known);
        if (unknown > 0 && (unknown == eos.length || !(known[best] >= bound))) {
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                "[strategy] [%s] cannot place a logits-guided cut: the model does not give the end-of-sequence probability at %d "
                    + "of %d sentence ends of a window (its answer lists only its most likely next tokens, and the end-of-sequence "
                    + "token is not among them), so the most likely end is unknown; use a model server that returns more "
                    + "alternatives (a higher [logprobs] limit) or the end-of-sequence token's probability, or an embedded causal "
                    + "LM ([strategy.llm])", model, unknown, eos.length));
        }
        return best;
    }

    /** Index of the largest value (eq. 1), the earliest on ties; the last index when every value is NaN. */
    static int argmax(double[] values) {
        int best = -1;
        for (int i = 0; i < values.length; i++) {
            if (!Double.isNaN(values[i]) && (best < 0 || values[i] > values[best])) {
                best = i;
            }
        }
        return best < 0 ? values.length - 1 : best;
    }
}

package io.strata.chunking;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * BertChunker (Luo, "BertChunker: Efficient and Trained Chunking for RAG"): a frozen encoder with a trained linear head
 * scores every token as the start of a new chunk (§2.1), and a chunk starts wherever that score passes a threshold
 * t_c (§2.2, eq. 1).
 *
 * <p>How this follows the paper and where it differs:
 * <ul>
 *   <li>{@code threshold} is a probability: p = σ(t) with t = logit(start) − logit(normal) (eq. 1), so the default
 *       0.5 is logit 0, the paper's t_c = 0, and a higher threshold gives fewer chunks, as in the paper. The shipped
 *       head's bias was shifted after training by its validation F1-best threshold, so for it 0.5 is that tuned
 *       operating point rather than the paper's raw t_c.</li>
 *   <li>Boundaries are snapped to <em>sentence</em> starts: a sentence's score is the highest of the (sub-word) tokens
 *       starting in its first word, and only sentence starts are candidates, so parents keep sentences whole (the
 *       multi-granular children never split a sentence). The paper lets any token start a chunk; but with the encoder
 *       frozen, a linear head cannot learn sentence segmentation as well as the segmenter we already run, so the
 *       shipped head was trained on sentence-start tokens only, to tell a change of source from a sentence that goes
 *       on (the paper's switches are sentence starts too, §2.3).</li>
 *   <li>Windows: the paper moves its 255-token window to the latest predicted start. Here windows of the head's
 *       {@link BoundaryScorer#windowTokens()} overlap by a quarter, and each word takes its score from the window in
 *       which it sits farther from the edge (the overlap is split at its middle), so every scored token has context
 *       on both sides except at the ends of the text. The number of calls no longer depends on the predictions.</li>
 *   <li>Parents never exceed θ = {@code max_words}: longer ones are split further by {@link RecursiveSplitter}
 *       (the paper has no size bound; the multi-granular chunker needs one).</li>
 * </ul>
 * Evidence: the chunk-start probability of every sentence start (but the first), compared with {@code threshold}.
 */
public final class BoundaryClassifierStrategy extends ModelGuidedStrategy {
    public static final String TYPE = "boundary_classifier";
    /** Logit 0 (the paper's t_c = 0) as a probability; the shipped head's bias puts its tuned threshold there. */
    public static final double DEFAULT_THRESHOLD = 0.5;
    public static final String SIGNAL = "chunk_start_probability";

    /** {@code boundaries}: which words may start a parent. */
    public static final List<String> BOUNDARIES = List.of("sentence", "token");
    /** {@code window}: how windows advance over a long text. */
    public static final List<String> WINDOWS = List.of("overlap", "latest_start");

    private final BoundaryScorer scorer;
    private final double threshold;
    private final boolean anyToken;
    private final boolean latestStart;

    public BoundaryClassifierStrategy(BoundaryScorer scorer, double threshold, int maxWords) {
        this(scorer, threshold, maxWords, false, false);
    }

    /**
     * @param anyToken    {@code boundaries: token}: any word the classifier fires on may start a parent, not only sentence
     *                    starts
     * @param latestStart {@code window: latest_start}: the paper's window, which moves to the latest predicted start
     */
    public BoundaryClassifierStrategy(BoundaryScorer scorer, double threshold, int maxWords, boolean anyToken, boolean latestStart) {
        super(maxWords);
        this.anyToken = anyToken;
        this.latestStart = latestStart;
        if (scorer.windowTokens() < 4) {
            throw new IllegalArgumentException("boundary model [" + scorer.name() + "] window must hold at least 4 tokens");
        }
        this.scorer = scorer;
        this.threshold = threshold;
    }

    /**
     * Keys: {@code model} (a head folder; default the bundled head), {@code threshold}, {@code max_words},
     * {@code boundaries} ({@code sentence} default, {@code token}), {@code window} ({@code overlap} default,
     * {@code latest_start}).
     */
    static BoundaryClassifierStrategy parse(ChunkingConfig.Options o) {
        double threshold = o.doubleValue("threshold", DEFAULT_THRESHOLD, 0, 1);
        int maxWords = o.maxWords();
        boolean anyToken = o.enumValue("boundaries", BOUNDARIES).equals("token");
        boolean latestStart = o.enumValue("window", WINDOWS).equals("latest_start");
        StrategyModels.Name name = o.modelName("model", "model_id");
        BoundaryScorer scorer = o.models().boundaryScorer(o.path(name != null && name.modelId() != null ? "model_id" : "model"), name);
        return new BoundaryClassifierStrategy(scorer, threshold, maxWords, anyToken, latestStart);
    }

    public boolean anyToken() {
        return anyToken;
    }

    public boolean latestStart() {
        return latestStart;
    }

    @Override
    public String type() {
        return TYPE;
    }

    public double threshold() {
        return threshold;
    }

    @Override
    public Segmentation segment(TextIndex text) {
        String s = text.text();
        int[] words = text.wordStartsIn(new Span(0, s.length()));
        boolean[] candidate = candidates(text, words);
        double[] p = latestStart ? latestStartProbabilities(s, words, candidate) : wordProbabilities(s, words);
        int[] candidates = new int[words.length];
        double[] values = new double[words.length];
        int n = 0;
        for (int w = 1; w < words.length; w++) {
            if (candidate[w]) {
                candidates[n] = words[w];
                values[n++] = p[w];
            }
        }
        candidates = Arrays.copyOf(candidates, n);
        values = Arrays.copyOf(values, n);
        List<Span> parents = new ArrayList<>();
        int from = words.length == 0 ? s.length() : words[0];
        for (int c = 0; c < n; c++) {
            if (values[c] > threshold) {
                parents.addAll(splitter.split(text, new Span(from, candidates[c])));
                from = candidates[c];
            }
        }
        if (from < s.length()) {
            parents.addAll(splitter.split(text, new Span(from, s.length())));
        }
        return new Segmentation(parents, List.of(new Segmentation.Evidence(SIGNAL, candidates, values, threshold)));
    }

    /**
     * Which words may start a parent: the first word of every sentence but the first ({@code boundaries: sentence}), or
     * every word but the first ({@code token}). A sub-word token the classifier fires on inside a word moves the
     * boundary to its word's start, so no word is cut in two.
     */
    private boolean[] candidates(TextIndex text, int[] words) {
        boolean[] candidate = new boolean[words.length];
        if (anyToken) {
            Arrays.fill(candidate, 1, words.length, true);
            return candidate;
        }
        for (int b : text.sentenceBoundaries()) {
            int w = Arrays.binarySearch(words, b);
            w = w >= 0 ? w : -w - 1;
            if (w > 0 && w < words.length) {
                candidate[w] = true;
            }
        }
        return candidate;
    }

    /**
     * The paper's window (§2.2): score a window, then move it to the latest predicted start (a candidate above the
     * threshold) and score on from there, so the number of calls depends on the predictions. Words up to that start are
     * decided by the window they were read in; the start keeps its score and opens the next window. Where the paper,
     * finding no start, moves to the window's end, we move to the last word the window reached and keep its score, so
     * no word is judged at position 0 of a window, without its left context (the paper never lets position 0 start a
     * chunk at all).
     */
    private double[] latestStartProbabilities(String s, int[] words, boolean[] candidate) {
        double[] p = new double[words.length];
        int first = 0; // first word of the current window
        int assignFrom = 0; // words before this are decided
        while (first < words.length) {
            Window scored = window(s, words, first);
            BoundaryScorer.Scores scores = scored.scores();
            int base = words[first];
            int n = scores.size();
            if (n == 0) {
                break;
            }
            int lastWord = wordAt(words, base + scores.starts()[n - 1]);
            boolean complete = scored.complete();
            double[] local = new double[lastWord - first + 1];
            for (int t = 0; t < n; t++) {
                int w = wordAt(words, base + scores.starts()[t]) - first;
                local[w] = Math.max(local[w], scores.probabilities()[t]);
            }
            int decidedTo = complete ? words.length - 1 : lastWord; // inclusive
            int next = -1;
            if (!complete) {
                for (int w = lastWord; w > Math.max(first, assignFrom - 1); w--) {
                    if (candidate[w] && local[w - first] > threshold) {
                        next = w;
                        break;
                    }
                }
                if (next < 0) {
                    next = Math.max(lastWord, first + 1); // one word longer than the window: step past it
                }
                decidedTo = Math.min(decidedTo, next);
            }
            for (int w = assignFrom; w <= decidedTo && w <= lastWord; w++) {
                p[w] = local[w - first];
            }
            if (complete) {
                break;
            }
            assignFrom = Math.max(assignFrom, decidedTo + 1);
            first = next;
        }
        return p;
    }

    /** Chunk-start probability of each word: the highest of the tokens starting in it, from the window that owns it. */
    private double[] wordProbabilities(String s, int[] words) {
        double[] p = new double[words.length];
        int overlap = scorer.windowTokens() / 4;
        int first = 0; // first word of the current window
        int ownFrom = 0; // words before this are owned by an earlier window
        while (first < words.length) {
            Window scored = window(s, words, first);
            BoundaryScorer.Scores scores = scored.scores();
            int base = words[first];
            int n = scores.size();
            boolean complete = scored.complete();
            int ownTo;
            int next;
            if (complete || n == 0) {
                ownTo = words.length;
                next = words.length;
            } else {
                // the next window starts `overlap` tokens back; the overlap is split at its middle
                next = wordAt(words, base + scores.starts()[Math.max(0, n - overlap)]);
                ownTo = wordAt(words, base + scores.starts()[Math.max(0, n - overlap / 2)]);
                if (next <= first) { // one word longer than the window: skip its tail (no word starts inside)
                    next = Math.max(first, wordAt(words, base + scores.starts()[n - 1])) + 1;
                }
                ownTo = Math.max(ownTo, next);
            }
            for (int t = 0; t < n; t++) {
                int w = wordAt(words, base + scores.starts()[t]);
                if (w >= ownFrom && w < ownTo) {
                    p[w] = Math.max(p[w], scores.probabilities()[t]);
                }
            }
            ownFrom = ownTo;
            first = next;
        }
        return p;
    }

    /** One window's scores, and whether it reached the end of the text. */
    private record Window(BoundaryScorer.Scores scores, boolean complete) {}

    /** Scores the window that starts at word {@code first}: every word is at least one token, so `window` words fill it. */
    private Window window(String s, int[] words, int first) {
        int window = scorer.windowTokens();
        int endWord = Math.min(words.length, first + window);
        int base = words[first];
        int end = endWord < words.length ? words[endWord] : s.length();
        BoundaryScorer.Scores scores = scorer.score(s.substring(base, end));
        int n = scores.size();
        boolean complete = endWord == words.length && (n < window || n == 0 || base + scores.ends()[n - 1] >= trimmedEnd(s, base, end));
        return new Window(scores, complete);
    }

    private static int trimmedEnd(String s, int from, int end) {
        while (end > from && TextIndex.isWhitespace(s.charAt(end - 1))) {
            end--;
        }
        return end;
    }

    /** Index of the word containing {@code offset}: the last word start at or before it. */
    private static int wordAt(int[] words, int offset) {
        int i = Arrays.binarySearch(words, offset);
        return i >= 0 ? i : Math.max(0, -i - 2);
    }

    @Override
    public String toString() {
        return String.format(Locale.ROOT, "%s(model=%s, threshold=%s, max_words=%d, boundaries=%s, window=%s)", TYPE, scorer.name(),
            threshold, maxWords(), anyToken ? "token" : "sentence", latestStart ? "latest_start" : "overlap");
    }
}

package io.strata.chunking;

import java.util.List;

/**
 * A text embedding model as the chunking core sees it: batches of texts to unit-length vectors. Blocking;
 * callers run it off request threads. Implementations live in the inference layer (embedded DJL engine,
 * ml-commons) and are thread-safe.
 */
public interface Embedder {
    /** Queries and passages are embedded differently by models with instruction prefixes (e.g. BGE). */
    enum Purpose { QUERY, PASSAGE }

    /** The model's name as referenced in configuration. */
    String name();

    int dimension();

    /** Longest input in model tokens, special tokens included; longer inputs are truncated. */
    int maxTokens();

    /** One L2-normalised vector per text, in order. */
    List<float[]> embed(List<String> texts, Purpose purpose);

    /** Model tokens of each text as it would be embedded (special tokens and prefix included, before truncation). */
    int[] tokenCounts(List<String> texts, Purpose purpose);

    /** A text and character spans of it ({@code [start, end)} relative to the text) to pool vectors for. */
    record SpannedText(String text, List<Span> spans) {
        public SpannedText {
            spans = List.copyOf(spans);
            for (Span s : spans) {
                if (s.end() > text.length()) {
                    throw new IllegalArgumentException("span " + s + " beyond the text's " + text.length() + " characters");
                }
            }
        }
    }

    /**
     * Why this model cannot {@link #embedSpans} (e.g. it gives no token states, or pools them in a way a span cannot
     * follow), or null when it can. Checked when a pipeline asks for late chunking.
     */
    default String spanPoolingProblem() {
        return "model [" + name() + "] does not give token states";
    }

    /**
     * Late chunking (Günther et al. 2024): each text goes through the model once; per text, its own vector exactly as
     * {@link #embed} gives it, then one L2-normalised vector per span, pooled from the token states of that same pass.
     * Only when {@link #spanPoolingProblem()} is null.
     */
    default List<List<float[]>> embedSpans(List<SpannedText> texts, Purpose purpose) {
        throw new UnsupportedOperationException(spanPoolingProblem());
    }
}

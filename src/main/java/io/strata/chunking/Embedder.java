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
}

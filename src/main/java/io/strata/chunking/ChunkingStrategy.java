package io.strata.chunking;

import java.util.List;

/**
 * Cuts a text into parent chunks. Implementations are immutable and thread-safe: one instance serves
 * every document of a pipeline.
 */
public interface ChunkingStrategy {
    /** The {@code strategy.type} this strategy is configured by. */
    String type();

    /**
     * What chunk documents record as their {@code strategy}: the type, plus the variant where one type has several (PIC's
     * Mean variant without an LLM is not the paper's summary variant, and its chunks say so).
     */
    default String label() {
        return type();
    }

    /** The parent size θ in words: the bound parents respect and the base of the child granularities. */
    int maxWords();

    /**
     * Parent spans of {@code text.text()}, ordered by start, each trimmed of surrounding whitespace, together covering
     * every non-whitespace character. They do not overlap, except where a strategy's own overlap option asks for it
     * (Meta-Chunking's overlap variant of {@code perplexity}, {@code fixed_token} with an {@code overlap_rate}); every
     * consumer (children, chunk documents, queries) treats parents independently, so overlap only duplicates text.
     */
    List<Span> split(TextIndex text);

    /** {@link #split} with the boundary evidence behind it; model-guided strategies override this and split with it. */
    default Segmentation segment(TextIndex text) {
        return Segmentation.of(split(text));
    }

    /**
     * Whether {@link #split} runs models (and so blocks on inference): callers then run it on an inference thread,
     * never on a transport or write thread.
     */
    default boolean usesModels() {
        return false;
    }
}

package io.strata.context;

/**
 * How a context is assembled: at most {@code budget} tokens; passages in {@code order}; joined by {@code separator}.
 *
 * @param order {@link Order#RANK}: the passage with the best-ranked hit first; {@link Order#DOCUMENT}: grouped by source
 *              document (documents by their best hit), in reading order inside a document
 */
public record ContextOptions(int budget, Order order, String separator) {
    public enum Order { RANK, DOCUMENT }

    public static final String DEFAULT_SEPARATOR = "\n\n";
}

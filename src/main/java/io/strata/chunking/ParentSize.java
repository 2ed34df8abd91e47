package io.strata.chunking;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * How large a parent may grow above the embedding model's window: the processor's (and {@code _chunk}'s)
 * {@code parents: {"max_tokens": N}}, parsed and validated here only. A parent of more embedded tokens than the model
 * reads, and at most {@code N}, is kept whole without a vector of its own: its children (each within the window) cover
 * every word of it and score it through the MAX ({@link TokenLimit}). Above {@code N} a parent is cut, and so is every
 * parent when {@code N} is at most the model's window (each parent then embedded whole). With {@code "vector": "mean"} such
 * a parent gets a vector after all: the mean of its finest children's vectors weighted by their lengths (no model call).
 */
public record ParentSize(int maxTokens, boolean meanVector) {
    public static final String FIELD = "parents";
    public static final int DEFAULT_MAX_TOKENS = 8192;
    /** A bound on the option: a parent is one chunk document, read whole by BM25, highlighting and the context packer. */
    public static final int MAX_MAX_TOKENS = 32768;
    public static final ParentSize DEFAULT = new ParentSize(DEFAULT_MAX_TOKENS, false);
    /** {@code parents.vector}: none, or the mean of its finest children's vectors. */
    public static final List<String> VECTORS = List.of("none", "mean");

    public ParentSize(int maxTokens) {
        this(maxTokens, false);
    }

    /** Parses {@code parents} (null: the default). */
    public static ParentSize parse(Object parents) {
        if (parents == null) {
            return DEFAULT;
        }
        if (!(parents instanceof Map<?, ?> raw)) {
            String reason = String.format(Locale.ROOT, "must be an object like {\"max_tokens\": %d}, got [%s]", DEFAULT_MAX_TOKENS, parents);
            throw new ConfigException(FIELD, "[" + FIELD + "] " + reason, reason);
        }
        Map<String, Object> map = new LinkedHashMap<>();
        raw.forEach((k, v) -> map.put(String.valueOf(k), v));
        ConfigMap c = new ConfigMap(null, FIELD, map);
        int max = c.intValue("max_tokens", DEFAULT_MAX_TOKENS, 1, MAX_MAX_TOKENS);
        Object vector = c.remove("vector");
        if (vector != null && !VECTORS.contains(vector)) {
            throw c.error("vector", String.format(Locale.ROOT, "must be one of %s, got [%s]", VECTORS, vector));
        }
        boolean mean = "mean".equals(vector);
        String unknown = c.firstUnknown();
        if (unknown != null) {
            throw c.error(unknown, String.format(Locale.ROOT, "is not an option of [%s]; supported: %s", FIELD, c.known()));
        }
        return max == DEFAULT_MAX_TOKENS && !mean ? DEFAULT : new ParentSize(max, mean);
    }
}

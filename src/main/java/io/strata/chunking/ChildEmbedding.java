package io.strata.chunking;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * How a pipeline embeds the children of a parent: the processor's {@code children: {"embedding": …}}, parsed and
 * validated here only.
 * <ul>
 *   <li>{@code separate} (the default): every child is embedded on its own, one forward pass per child, blind to its
 *       parent — as the LGMGC paper does.</li>
 *   <li>{@code late}: late chunking (Günther et al. 2024): one forward pass over the parent, each child's vector pooled
 *       from the token states of its own span ({@link Embedder#embedSpans}). The children cost no pass of their own and
 *       see their parent; the parent's vector is the same as with {@code separate}.</li>
 * </ul>
 * {@code children: {"keep_redundant": true}} writes every child the splitters cut, also those {@link ChildPolicy} leaves
 * out (a child repeating its parent's or a coarser child's span, a tiny child not joined to its neighbour): for comparing
 * retrieval with and without them only.
 */
public enum ChildEmbedding {
    SEPARATE, LATE;

    public static final String FIELD = "children";
    public static final String KEEP_REDUNDANT = "keep_redundant";

    /** The {@code children} object: how children are embedded, and whether children that add nothing are written too. */
    public record Options(ChildEmbedding embedding, boolean keepRedundant) {
        public static final Options DEFAULT = new Options(SEPARATE, false);
    }

    /** The name in configuration. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static List<String> labels() {
        return Arrays.stream(values()).map(ChildEmbedding::label).toList();
    }

    /** Parses {@code children} (null: {@link Options#DEFAULT}). */
    public static Options parseOptions(Object children) {
        if (children == null) {
            return Options.DEFAULT;
        }
        if (!(children instanceof Map<?, ?> raw)) {
            String reason = String.format(Locale.ROOT, "must be an object like {\"embedding\": \"late\"}, got [%s]", children);
            throw new ConfigException(FIELD, "[" + FIELD + "] " + reason, reason);
        }
        Map<String, Object> map = new LinkedHashMap<>();
        raw.forEach((k, v) -> map.put(String.valueOf(k), v));
        ConfigMap c = new ConfigMap(null, FIELD, map);
        Object value = c.remove("embedding");
        ChildEmbedding mode = SEPARATE;
        if (value != null) {
            mode = Arrays.stream(values()).filter(m -> m.label().equals(value)).findFirst().orElseThrow(() -> c.error("embedding",
                String.format(Locale.ROOT, "must be one of %s, got [%s]", labels(), value)));
        }
        boolean keepRedundant = c.booleanValue(KEEP_REDUNDANT, false);
        String unknown = c.firstUnknown();
        if (unknown != null) {
            throw c.error(unknown, String.format(Locale.ROOT, "is not an option of [%s]; supported: %s", FIELD, c.known()));
        }
        return new Options(mode, keepRedundant);
    }
}

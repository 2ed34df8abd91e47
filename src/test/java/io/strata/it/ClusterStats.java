package io.strata.it;

import java.io.IOException;
import java.util.Map;
import java.util.TreeMap;

/**
 * {@code GET _plugins/_strata/stats} summed over the nodes (counters are per node, and the REST client round-robins),
 * by dotted path ({@code ingest.failures.rejected}, {@code inference.models.standin-embed.errors}).
 */
@SuppressWarnings("unchecked")
final class ClusterStats {
    private ClusterStats() {}

    static Map<String, Long> summed() throws IOException {
        Map<String, Object> r = StrataRestTestCase.call("GET", "/_plugins/_strata/stats");
        Map<String, Long> sums = new TreeMap<>();
        for (Object node : ((Map<String, Object>) r.get("nodes")).values()) {
            add(sums, "", (Map<String, Object>) node);
        }
        return sums;
    }

    static long delta(Map<String, Long> before, Map<String, Long> after, String key) {
        return after.getOrDefault(key, 0L) - before.getOrDefault(key, 0L);
    }

    private static void add(Map<String, Long> sums, String prefix, Map<String, Object> values) {
        for (Map.Entry<String, Object> e : values.entrySet()) {
            if (e.getValue() instanceof Map<?, ?> m) {
                add(sums, prefix + e.getKey() + ".", (Map<String, Object>) m);
            } else if (e.getValue() instanceof Number n) {
                sums.merge(prefix + e.getKey(), n.longValue(), Long::sum);
            }
        }
    }
}

package io.strata.ingest;

import io.strata.chunking.ChildEmbedding;
import io.strata.chunking.MultiGranularChunker;
import io.strata.chunking.ParentSize;
import io.strata.model.ModelRef;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The identity of a {@code multi_granular_chunking} processor's chunking: a hash of everything that decides which chunks a
 * text is cut into and how they are embedded — the field, the format, the strategy (its type and θ as parsed, with θ's
 * unit, and its other options as written), the granularities, {@code parents.max_tokens}, the model reference (the default model resolved), how
 * children are embedded and the context headers' options. Not in it: {@code target_index}, {@code copy_fields},
 * {@code ignore_missing}, {@code max_chars} (where chunks go and which documents are taken, not how they are cut).
 *
 * <p>Options besides type and θ are hashed as written (keys sorted), so writing a default out where it was left out gives
 * another identity: a config change is then reported where there was none, never missed.
 */
final class ChunkConfigIdentity {
    /** Strategy options the parsed values below stand for. */
    private static final Set<String> PARSED_STRATEGY_KEYS = Set.of("type", "max_words", "max_tokens");

    private ChunkConfigIdentity() {}

    /**
     * @param strategy the processor's {@code strategy} option as written, copied before parsing (null: absent)
     * @param context the {@code context} option as written, copied before parsing (null: absent)
     */
    static String hash(String field, MultiGranularChunker chunker, Object strategy, ModelRef model, ChildEmbedding children,
                       Object context) {
        Map<String, Object> identity = new LinkedHashMap<>();
        identity.put("field", field);
        identity.put("format", chunker.format().value());
        identity.put("strategy", chunker.strategy().label());
        identity.put("theta", chunker.strategy().maxWords());
        identity.put("theta_unit", chunker.thetaInTokens() ? "tokens" : "words");
        // absent and {"type": …, "max_words": …} alone both leave no other option: the same identity
        Object options = strategy instanceof Map<?, ?> m ? withoutParsedKeys(m) : strategy == null ? Map.of() : strategy;
        identity.put("strategy_options", canonical(options));
        identity.put("granularities", chunker.granularities());
        if (!chunker.parentSize().equals(ParentSize.DEFAULT)) { // the default leaves earlier identities as they were
            identity.put("parents", chunker.parentSize().toString());
        }
        identity.put("model", model == null ? "none" : model.toString());
        identity.put("children", children.label());
        if (chunker.keepsRedundantChildren()) { // only when set: the identities of configs without it stay as they were
            identity.put("children_keep_redundant", true);
        }
        identity.put("context", canonical(context));
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            return HexFormat.of().formatHex(digest.digest(identity.toString().getBytes(StandardCharsets.UTF_8)), 0, 12);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Map<String, Object> withoutParsedKeys(Map<?, ?> strategy) {
        Map<String, Object> out = new LinkedHashMap<>();
        strategy.forEach((k, v) -> {
            if (!PARSED_STRATEGY_KEYS.contains(String.valueOf(k))) {
                out.put(String.valueOf(k), v);
            }
        });
        return out;
    }

    /** A deep copy with every map's keys sorted, whose {@code toString} is the same for equal configs. */
    static Object canonical(Object value) {
        if (value instanceof Map<?, ?> m) {
            Map<String, Object> out = new TreeMap<>();
            m.forEach((k, v) -> out.put(String.valueOf(k), canonical(v)));
            return out;
        }
        if (value instanceof List<?> l) {
            List<Object> out = new ArrayList<>(l.size());
            l.forEach(v -> out.add(canonical(v)));
            return out;
        }
        return value;
    }
}

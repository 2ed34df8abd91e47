package io.strata.chunkindex;

import io.strata.chunking.ConfigException;
import io.strata.chunking.ConfigMap;
import org.apache.lucene.codecs.lucene99.Lucene99HnswVectorsFormat;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * How a chunk index's vectors are indexed: the processor's {@code vectors} object, parsed and validated here only, applied
 * to both vector fields ({@code embedding}, {@code children.embedding}) when the chunk index is created. The values are
 * those the k-NN 3.4.0.0 Lucene engine accepts (checked on a node): space types {@code cosinesimil}, {@code l2},
 * {@code innerproduct}; HNSW {@code m} and {@code ef_construction} within Lucene's own bounds (k-NN takes any number in the
 * mapping and fails the first write beyond them); the encoder {@code sq} (scalar quantization) with {@code bits} 7 only
 * (1, 4 and 8 are refused by this engine; {@code binary} and {@code flat} are not Lucene encoders), or {@code none}
 * (full-precision floats, the default). {@code sq} 7 bits, which {@code multi_granular} rescores with the floats the field
 * keeps, holds recall and retrieval for 0.27× the bytes the graph search holds, but costs latency: at 150,000 parents the
 * dense k 10 p50 is 1.23× float's, and at 100,000 chunks the default hybrid query's 1.48× (docs/measurements.md), so floats
 * stay the default and sq is the option for corpora whose vectors outgrow memory. An option left unset accepts what an
 * existing chunk index has (a pipeline without {@code vectors} keeps writing into an sq chunk index); m and
 * ef_construction are k-NN's defaults (16, 100) when unset.
 */
public record VectorOptions(String spaceType, Integer m, Integer efConstruction, Integer sqBits) {
    public static final String FIELD = "vectors";
    public static final List<String> SPACE_TYPES = List.of("cosinesimil", "l2", "innerproduct");
    public static final String DEFAULT_SPACE_TYPE = "cosinesimil";
    /** k-NN's defaults for the Lucene engine, which an index without the parameter gets. */
    static final int DEFAULT_M = 16;
    static final int DEFAULT_EF_CONSTRUCTION = 100;
    public static final List<String> ENCODERS = List.of("sq", "none");
    public static final List<Integer> SQ_BITS = List.of(7);
    /** {@link #sqBits} of {@code "encoder": {"name": "none"}}: full-precision floats asked for (null: unset). */
    public static final int FLOAT = 0;
    /** The encoder a chunk index created with none set gets: floats. */
    static final int DEFAULT_SQ_BITS = FLOAT;

    /** Nothing configured: an existing chunk index is taken as it is, a new one gets the defaults. */
    public static final VectorOptions DEFAULT = new VectorOptions(null, null, null, null);
    /** {@code "encoder": {"name": "none"}} alone: full-precision floats and k-NN's graph defaults. */
    public static final VectorOptions FLOATS = new VectorOptions(null, null, null, FLOAT);

    /** Parses the processor's {@code vectors} (null: {@link #DEFAULT}). */
    public static VectorOptions parse(Object value) {
        if (value == null) {
            return DEFAULT;
        }
        Map<String, Object> map = object(FIELD, value, "{\"encoder\": {\"name\": \"none\"}, \"m\": 16}");
        ConfigMap c = new ConfigMap(null, FIELD, map);
        String spaceType = c.has("space_type") ? c.enumValue("space_type", SPACE_TYPES) : null;
        Integer m = c.has("m") ? c.intValue("m", DEFAULT_M, 2, Lucene99HnswVectorsFormat.MAXIMUM_MAX_CONN) : null;
        Integer ef = c.has("ef_construction")
            ? c.intValue("ef_construction", DEFAULT_EF_CONSTRUCTION, 2, Lucene99HnswVectorsFormat.MAXIMUM_BEAM_WIDTH) : null;
        Integer bits = null;
        Object encoder = c.remove("encoder");
        if (encoder != null) {
            ConfigMap e = new ConfigMap(null, FIELD + ".encoder", object(FIELD + ".encoder", encoder, "{\"name\": \"sq\", \"bits\": 7}"));
            String name = e.enumValue("name", ENCODERS);
            bits = "none".equals(name) ? null : e.intValue("bits", SQ_BITS.get(0), 0, Integer.MAX_VALUE);
            if (bits == null) {
                if (e.has("bits")) {
                    throw e.error("bits", "is an option of encoder [sq] only; encoder [none] keeps full-precision floats");
                }
                bits = FLOAT;
            } else if (!SQ_BITS.contains(bits)) {
                throw e.error("bits", String.format(Locale.ROOT, "must be one of %s for encoder [sq] (the k-NN Lucene engine's), got [%d]",
                    SQ_BITS, bits));
            }
            rejectUnknown(e, FIELD + ".encoder");
        }
        rejectUnknown(c, FIELD);
        return new VectorOptions(spaceType, m, ef, bits);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> object(String field, Object value, String example) {
        if (!(value instanceof Map<?, ?> raw)) {
            String reason = String.format(Locale.ROOT, "must be an object like %s, got [%s]", example, value);
            throw new ConfigException(field, "[" + field + "] " + reason, reason);
        }
        Map<String, Object> map = new LinkedHashMap<>();
        raw.forEach((k, v) -> map.put(String.valueOf(k), v));
        return map;
    }

    private static void rejectUnknown(ConfigMap c, String field) {
        String unknown = c.firstUnknown();
        if (unknown != null) {
            throw c.error(unknown, String.format(Locale.ROOT, "is not an option of [%s]; supported: %s", field, c.known()));
        }
    }

    public boolean isDefault() {
        return equals(DEFAULT);
    }

    /** The encoder's bits a new chunk index gets ({@link #FLOAT}: none). */
    public int effectiveSqBits() {
        return sqBits == null ? DEFAULT_SQ_BITS : sqBits;
    }

    public String effectiveSpaceType() {
        return spaceType == null ? DEFAULT_SPACE_TYPE : spaceType;
    }

    /** The configuration's short name, as the bench prints it: {@code float}, {@code sq7}, with non-default graph parameters. */
    public String label() {
        return (effectiveSqBits() == FLOAT ? "float" : "sq" + effectiveSqBits()) + (m == null ? "" : " m" + m) + (efConstruction == null ? ""
            : " ef" + efConstruction) + (spaceType == null ? "" : " " + spaceType);
    }

    /** The {@code knn_vector} definition of a vector field of {@code dimension} with these options. */
    public Map<String, Object> vectorField(int dimension) {
        Map<String, Object> method = new LinkedHashMap<>();
        method.put("name", "hnsw");
        method.put("engine", "lucene");
        method.put("space_type", effectiveSpaceType());
        Map<String, Object> parameters = new LinkedHashMap<>();
        if (m != null) {
            parameters.put("m", m);
        }
        if (efConstruction != null) {
            parameters.put("ef_construction", efConstruction);
        }
        if (effectiveSqBits() != FLOAT) {
            parameters.put("encoder", Map.of("name", "sq", "parameters", Map.of("bits", effectiveSqBits())));
        }
        if (!parameters.isEmpty()) {
            method.put("parameters", parameters);
        }
        return Map.of("type", "knn_vector", "dimension", dimension, "method", method);
    }

    /**
     * Whether a {@code knn_vector} field definition (as {@code GET _mapping} shows it) quantizes its vectors: it names an
     * encoder in {@code method.parameters}. Such a field keeps its raw floats too, which full-precision rescoring reads.
     */
    public static boolean quantized(Map<?, ?> field) {
        return field.get("method") instanceof Map<?, ?> method && method.get("parameters") instanceof Map<?, ?> parameters
            && parameters.get("encoder") instanceof Map<?, ?> encoder && encoder.get("name") != null
            && !"flat".equals(String.valueOf(encoder.get("name")));
    }

    /**
     * The first option that the existing vector field {@code field} (its mapping as the index returns it) does not have, as
     * an error naming it, or null: an existing chunk index keeps its graph, since a vector field's method cannot change.
     * Only options the processor sets are compared (an unset one accepts the index's).
     */
    public String differenceFrom(Map<?, ?> field, String target, String name) {
        Map<?, ?> method = field.get("method") instanceof Map<?, ?> mm ? mm : Map.of();
        Map<?, ?> parameters = method.get("parameters") instanceof Map<?, ?> p ? p : Map.of();
        Object existingSpace = method.get("space_type") != null ? method.get("space_type") : field.get("space_type");
        Object existingM = parameters.get("m") != null ? parameters.get("m") : DEFAULT_M;
        Object existingEf = parameters.get("ef_construction") != null ? parameters.get("ef_construction") : DEFAULT_EF_CONSTRUCTION;
        Object existingBits = null;
        String existingEncoder = "none";
        if (parameters.get("encoder") instanceof Map<?, ?> enc) {
            existingEncoder = String.valueOf(enc.get("name"));
            existingBits = enc.get("parameters") instanceof Map<?, ?> ep && ep.get("bits") != null ? ep.get("bits")
                : "sq".equals(existingEncoder) ? SQ_BITS.get(0) : null;
        }
        if (spaceType != null && existingSpace != null && !spaceType.equals(String.valueOf(existingSpace))) {
            return differs("space_type", spaceType, existingSpace, target, name);
        }
        if (m != null && !String.valueOf(m).equals(String.valueOf(existingM))) {
            return differs("m", m, existingM, target, name);
        }
        if (efConstruction != null && !String.valueOf(efConstruction).equals(String.valueOf(existingEf))) {
            return differs("ef_construction", efConstruction, existingEf, target, name);
        }
        if (sqBits != null && sqBits == FLOAT && !existingEncoder.equals("none")) {
            return differs("encoder", "none (full-precision floats)", existingEncoder + (existingBits == null ? "" : " " + existingBits + " bits"),
                target, name);
        }
        if (sqBits != null && sqBits != FLOAT
            && !(Objects.equals("sq", existingEncoder) && String.valueOf(sqBits).equals(String.valueOf(existingBits)))) {
            return differs("encoder", "sq " + sqBits + " bits", existingEncoder.equals("none") ? "none (full-precision floats)"
                : existingEncoder + (existingBits == null ? "" : " " + existingBits + " bits"), target, name);
        }
        return null;
    }

    private static String differs(String option, Object wanted, Object existing, String target, String name) {
        return String.format(Locale.ROOT, "[%s.%s] is [%s] but chunk index [%s] exists with [%s] for [%s]; a vector field's method "
            + "cannot change: use another [target_index], or delete [%s] and re-index its source to rebuild it", FIELD, option, wanted,
            target, existing, name, target);
    }
}

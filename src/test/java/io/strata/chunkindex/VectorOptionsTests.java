package io.strata.chunkindex;

import io.strata.chunking.ConfigException;
import org.junit.Test;

import java.util.Map;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/**
 * The processor's {@code vectors} as parsed: the mapping a new chunk index gets (floats when the encoder is unset or
 * {@code none}, sq 7 bits when asked for), the bench's labels, and which existing vector fields an option accepts.
 */
public class VectorOptionsTests {
    /** A field as {@code GET _mapping} shows one made without an encoder (k-NN writes {@code parameters} empty). */
    private static final Map<String, Object> FLOAT_FIELD = Map.of("type", "knn_vector", "dimension", 384, "method",
        Map.of("name", "hnsw", "engine", "lucene", "space_type", "cosinesimil", "parameters", Map.of()));
    private static final Map<String, Object> SQ_FIELD = Map.of("type", "knn_vector", "dimension", 384, "method",
        Map.of("name", "hnsw", "engine", "lucene", "space_type", "cosinesimil", "parameters",
            Map.of("encoder", Map.of("name", "sq", "parameters", Map.of("bits", 7)))));

    @SuppressWarnings("unchecked")
    private static Map<String, Object> parameters(VectorOptions options) {
        Map<String, Object> method = (Map<String, Object>) options.vectorField(384).get("method");
        return (Map<String, Object>) method.getOrDefault("parameters", Map.of());
    }

    @Test
    public void testUnset_createsFloats_asNoneDoes_andSqIsAskedFor() {
        VectorOptions none = VectorOptions.parse(Map.of("encoder", Map.of("name", "none")));
        for (Object unset : new Object[] { null, Map.of() }) {
            VectorOptions options = VectorOptions.parse(unset);
            assertNull(String.valueOf(unset), parameters(options).get("encoder"));
            assertFalse(String.valueOf(unset), VectorOptions.quantized(options.vectorField(384)));
            assertEquals(String.valueOf(unset), none.vectorField(384), options.vectorField(384));
        }
        assertEquals("float", VectorOptions.parse(null).label());
        assertEquals("float m24", VectorOptions.parse(Map.of("m", 24)).label());

        assertNull(parameters(none).get("encoder"));
        assertEquals("float", none.label());
        assertEquals(Map.of("type", "knn_vector", "dimension", 384, "method", Map.of("name", "hnsw", "engine", "lucene", "space_type",
            "cosinesimil")), none.vectorField(384));
        assertEquals(none, VectorOptions.FLOATS);
        assertEquals("float m32", VectorOptions.parse(Map.of("encoder", Map.of("name", "none"), "m", 32)).label());

        VectorOptions sq = VectorOptions.parse(Map.of("encoder", Map.of("name", "sq", "bits", 7)));
        assertEquals(Map.of("name", "sq", "parameters", Map.of("bits", 7)), parameters(sq).get("encoder"));
        assertTrue(VectorOptions.quantized(sq.vectorField(384)));
        assertEquals("sq7 m24", VectorOptions.parse(Map.of("encoder", Map.of("name", "sq"), "m", 24)).label());
    }

    @Test
    public void testBitsWithNone_andAnUnknownEncoder_are400sNamingTheFieldAndTheAllowedValues() {
        ConfigException bits = assertThrows(ConfigException.class,
            () -> VectorOptions.parse(Map.of("encoder", Map.of("name", "none", "bits", 7))));
        assertEquals("vectors.encoder.bits", bits.field());
        assertTrue(bits.getMessage(), bits.getMessage().startsWith("[vectors.encoder.bits] ") && bits.getMessage().contains("[sq]")
            && bits.getMessage().contains("[none]"));
        ConfigException name = assertThrows(ConfigException.class,
            () -> VectorOptions.parse(Map.of("encoder", Map.of("name", "float"))));
        assertTrue(name.getMessage(), name.getMessage().startsWith("[vectors.encoder.name] must be one of [sq, none], got [float]"));
    }

    @Test
    public void testAnUnsetEncoder_acceptsTheExistingIndex_andASetOneNamesTheDifference() {
        VectorOptions unset = VectorOptions.parse(null);
        assertNull(unset.differenceFrom(FLOAT_FIELD, "c", "embedding"));
        assertNull(unset.differenceFrom(SQ_FIELD, "c", "embedding"));
        assertNull("m unset too", VectorOptions.parse(Map.of("m", 16)).differenceFrom(FLOAT_FIELD, "c", "embedding"));

        VectorOptions none = VectorOptions.parse(Map.of("encoder", Map.of("name", "none")));
        assertNull(none.differenceFrom(FLOAT_FIELD, "c", "embedding"));
        String onSq = none.differenceFrom(SQ_FIELD, "c", "embedding");
        assertTrue(onSq, onSq != null && onSq.startsWith("[vectors.encoder] is [none (full-precision floats)] but chunk index [c] exists "
            + "with [sq 7 bits] for [embedding]"));

        VectorOptions sq = VectorOptions.parse(Map.of("encoder", Map.of("name", "sq")));
        assertNull(sq.differenceFrom(SQ_FIELD, "c", "embedding"));
        String onFloat = sq.differenceFrom(FLOAT_FIELD, "c", "embedding");
        assertTrue(onFloat, onFloat != null && onFloat.startsWith("[vectors.encoder] is [sq 7 bits] but chunk index [c] exists with "
            + "[none (full-precision floats)]"));
    }
}

package io.strata.chunkindex.generations;

import org.junit.Test;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;

/** What a rebuild takes from a stored chunk document: the wanted keys' vectors, none whose vector it cannot read. */
public class VectorReuseTests {
    @Test
    public void testCollect_takesWantedKeysWithTheirVectors_andNothingHiddenOrUnwanted() {
        Map<String, Object> doc = Map.of("vector_key", "p", "embedding", List.of(0.5, 0.25), "children", List.of(
            Map.of("level", 0, "embedding", List.of(0.5, 0.25)),
            Map.of("level", 1, "vector_key", "a", "embedding", List.of(1.0, 0.0)),
            Map.of("level", 1, "vector_key", "b", "embedding", List.of(0.0, 1.0)),
            Map.of("level", 2, "vector_key", "c")));   // its vector hidden (field-level security): nothing to reuse
        Map<String, float[]> found = new HashMap<>();
        VectorReuse.collect(doc, Set.of("p", "a", "c"), found);
        assertEquals(Set.of("p", "a"), found.keySet());
        assertArrayEquals(new float[] { 0.5f, 0.25f }, found.get("p"), 0f);
        assertArrayEquals(new float[] { 1f, 0f }, found.get("a"), 0f);
    }
}

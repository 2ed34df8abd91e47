package io.strata.demo;

import org.junit.Test;

import java.util.List;
import java.util.Map;

import static org.junit.Assert.assertEquals;

/** What the demo prints of the chunk documents per level. */
public class DemoTests {

    /** The terms aggregation orders its buckets by count (0, 2, 1 in the demo: θ/4 children outnumber θ/2 ones). */
    @Test
    public void testLevelLines_listTheLevelsInOrder_whateverTheBucketOrder() {
        Map<String, Object> response = Map.of(
            "hits", Map.of("total", Map.of("value", 31)),
            "aggregations", Map.of("children", Map.of("levels", Map.of("buckets", List.of(
                Map.of("key", 2, "doc_count", 118),
                Map.of("key", 1, "doc_count", 60),
                Map.of("key", 0, "doc_count", 31))))));
        assertEquals(List.of("level 0: 31 parents", "level 1: 60 children", "level 2: 118 children"), Demo.levelLines(response));
    }
}

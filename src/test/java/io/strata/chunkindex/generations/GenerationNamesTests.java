package io.strata.chunkindex.generations;

import org.junit.Test;

import java.util.List;
import java.util.OptionalInt;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;

public class GenerationNamesTests {
    @Test
    public void testNext_withoutAnyGeneration_isOne() {
        assertEquals(1, GenerationNames.next("books-chunks", List.of("books", "books-chunksX", "other-g4")));
    }

    @Test
    public void testNext_afterAConcreteChunkIndexOfTheName_isTwo() {
        assertEquals(2, GenerationNames.next("books-chunks", List.of("books", "books-chunks")));
    }

    @Test
    public void testNext_isOneAboveTheHighestGeneration_notAboveLookalikes() {
        assertEquals(8, GenerationNames.next("books-chunks",
            List.of("books-chunks", "books-chunks-g2", "books-chunks-g7", "books-chunks-g07", "books-chunks-g9x", "books-chunks-gx",
                "books-chunks-g2-g40", "books-chunks-g0")));
    }

    @Test
    public void testGenerationOf_readsOnlyTheSuffixOfThisChunkIndex() {
        assertEquals(OptionalInt.of(3), GenerationNames.generationOf("a", "a-g3"));
        assertEquals(OptionalInt.of(1), GenerationNames.generationOf("a", "a"));
        assertEquals(OptionalInt.empty(), GenerationNames.generationOf("a", "ab-g3"));
        assertEquals(OptionalInt.empty(), GenerationNames.generationOf("a-g", "a-g3"));
    }

    @Test
    public void testName_refusesGenerationZero() {
        assertEquals("books-chunks-g2", GenerationNames.name("books-chunks", 2));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> GenerationNames.name("books-chunks", 0));
        assertEquals("[generation] must be at least 1, got [0]", e.getMessage());
    }
}

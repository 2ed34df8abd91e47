package io.strata.chunkindex.generations;

import org.junit.Test;
import org.opensearch.Version;
import org.opensearch.cluster.metadata.IndexMetadata;
import org.opensearch.cluster.metadata.Metadata;
import org.opensearch.common.settings.Settings;
import org.opensearch.core.index.Index;

import java.util.Map;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

/** The skip decision of a resumed rebuild, and which generation a re-issue resumes. */
public class ResumeCheckTests {
    private static final long SEQ_NO = 21; // chunk version 42

    @Test
    public void testComplete_whenEveryChunkIsAtTheVersionOfTheStoredOperation_isSkipped() {
        assertTrue(ResumeCheck.complete(SEQ_NO, 42L, Map.of(0, 42L, 1, 42L, 2, 42L)));
        assertTrue("a repair's version of the same operation", ResumeCheck.complete(SEQ_NO, 43L, Map.of(0, 43L, 1, 43L)));
    }

    @Test
    public void testComplete_whenChunkZeroIsMissingOrOfAnotherOperation_isRedone() {
        assertFalse("no commit: the writer died before it", ResumeCheck.complete(SEQ_NO, null, Map.of(1, 42L, 2, 42L)));
        assertFalse("an older operation's chunks", ResumeCheck.complete(SEQ_NO, 40L, Map.of(0, 40L)));
        assertFalse("a newer operation's (the source changed since)", ResumeCheck.complete(SEQ_NO - 1, 42L, Map.of(0, 42L)));
        assertFalse("a hand edit above the repair version", ResumeCheck.complete(SEQ_NO, 44L, Map.of(0, 44L)));
    }

    @Test
    public void testComplete_whenTheWriterDiedBeforeOrDuringItsSweep_isRedone() {
        // committed at 42 over 2 chunks; the chunks 2..3 of an earlier pass's operation (at 30) were not swept yet
        assertFalse(ResumeCheck.complete(SEQ_NO, 42L, Map.of(0, 42L, 1, 42L, 2, 30L, 3, 30L)));
        // the sweep deleted chunk 2 and died: chunk 3 of the older operation is left past a gap
        assertFalse(ResumeCheck.complete(SEQ_NO, 42L, Map.of(0, 42L, 1, 42L, 3, 30L)));
    }

    @Test
    public void testComplete_whenTheSearchDidNotSeeChunkZeroAsTheRealtimeReadDid_isRedone() {
        assertFalse(ResumeCheck.complete(SEQ_NO, 42L, Map.of()));
        assertFalse(ResumeCheck.complete(SEQ_NO, 42L, Map.of(1, 42L)));
    }

    private static IndexMetadata generation(String name, String sourceUuid, String state, String config) throws java.io.IOException {
        String meta = "{\"_meta\": {\"" + GenerationBuilder.GENERATION_META + "\": {\"generation\": 1, \"source_index\": \"books\", "
            + "\"source_index_uuid\": \"" + sourceUuid + "\", \"config\": \"" + config + "\""
            + (state == null ? "" : ", \"state\": \"" + state + "\"") + "}}}";
        return IndexMetadata.builder(name).settings(Settings.builder().put(IndexMetadata.SETTING_VERSION_CREATED, Version.CURRENT)
            .put(IndexMetadata.SETTING_INDEX_UUID, name + "-uuid")).numberOfShards(1).numberOfReplicas(0).putMapping(meta).build();
    }

    @Test
    public void testUnfinished_isTheHighestBuildingGenerationOfThisSourceIncarnation() throws java.io.IOException {
        Metadata metadata = Metadata.builder()
            .put(generation("books-chunks-g2", "u1", "complete", "c1"), false)
            .put(generation("books-chunks-g3", "u1", "building", "c2"), false)
            .put(generation("books-chunks-g4", "u0", "building", "c2"), false) // an earlier index of the same name
            .put(generation("books-chunksx-g5", "u1", "building", "c2"), false) // another chunk index's
            .put(generation("books-chunks-g1", "u1", null, "c0"), false) // recorded before states: complete
            .build();
        GenerationRecord.Unfinished unfinished = GenerationRecord.unfinished(metadata, "books-chunks", "u1");
        assertEquals("books-chunks-g3", unfinished.index());
        assertEquals(3, unfinished.generation());
        assertNull(GenerationRecord.unfinished(metadata, "books-chunks", "u2"));
    }

    @Test
    public void testConfigProblem_namesBothConfigsAndHowToProceed() {
        GenerationRecord.Unfinished unfinished = new GenerationRecord.Unfinished("books-chunks-g3", 3,
            GenerationRecord.about(3, new Index("books", "u1"), "c2", "p", GenerationRecord.BUILDING));
        assertNull(ResumeCheck.configProblem(unfinished, "books", "p", "c2"));
        String problem = ResumeCheck.configProblem(unfinished, "books", "p", "c9");
        assertTrue(problem, problem.contains("[books-chunks-g3]") && problem.contains("[c2]") && problem.contains("[c9]")
            && problem.contains("DELETE books-chunks-g3") && problem.contains("[p]"));
    }
}

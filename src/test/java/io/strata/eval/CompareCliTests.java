package io.strata.eval;

import io.strata.compare.CompareQuestion;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;

public class CompareCliTests {
    @Rule
    public TemporaryFolder folder = new TemporaryFolder();

    private Path file(String text) throws IOException {
        Path f = folder.newFile("q.jsonl").toPath();
        Files.writeString(f, text);
        return f;
    }

    @Test
    public void testRead_linesBecomeQuestions_blankLinesSkipped() throws IOException {
        Path f = file("{\"question\": \"Who married Miss Taylor?\", \"source_id\": \"emma-1\", \"span\": [10, 40]}\n\n"
            + "{\"question\": \"Who is Harriet?\", \"source_id\": \"emma-3\", \"cluster\": \"c\"}\n");
        assertEquals(List.of(new CompareQuestion("Who married Miss Taylor?", "emma-1", 10, 40, "emma-1"),
            new CompareQuestion("Who is Harriet?", "emma-3", -1, -1, "c")), CompareCli.read(f));
    }

    @Test
    public void testRead_aBadLine_namesTheFileTheLineAndTheField() throws IOException {
        Path f = file("{\"question\": \"Who?\", \"source_id\": \"d1\"}\n{\"question\": \"Who?\", \"source_id\": \"d1\", \"span\": [4]}\n");
        assertEquals(f + " line 2: [span] must be [start, end]: two integers with 0 <= start < end (character offsets into the source "
            + "document's text), got [[4]]", assertThrows(IllegalArgumentException.class, () -> CompareCli.read(f)).getMessage());
        Path g = folder.newFile("g.jsonl").toPath();
        Files.writeString(g, "{\"question\": \"Who?\"}\n");
        assertEquals(g + " line 1: [source_id] required property is missing",
            assertThrows(IllegalArgumentException.class, () -> CompareCli.read(g)).getMessage());
        Path h = folder.newFile("h.jsonl").toPath();
        Files.writeString(h, "{\"question\": \"Who?\", \"source_id\": \"d1\"}\nnot json\n");
        assertEquals(true, assertThrows(IllegalArgumentException.class, () -> CompareCli.read(h)).getMessage()
            .startsWith(h + " line 2: not a JSON object"));
    }

    @Test
    public void testMarkdown_showsBothSides_theDifferenceWithItsInterval_andWhoFoundEachQuestion() {
        Map<String, Object> answer = Map.of(
            "a", Map.of("index", "books-chunks", "source_index", "books", "dcg@1", 50.0, "dcg@k", 60.0, "recall@k", 75.0),
            "b", Map.of("index", "books-v2-chunks", "source_index", "books-v2", "dcg@1", 75.0, "dcg@k", 80.0, "recall@k", 75.0),
            "difference", Map.of(
                "dcg@1", Map.of("mean", 25.0, "low", 5.0, "high", 50.0, "excludes_zero", true),
                "dcg@k", Map.of("mean", 20.0, "low", -3.25, "high", 40.0, "excludes_zero", false),
                "recall@k", Map.of("mean", 0.0, "low", 0.0, "high", 0.0, "excludes_zero", false)),
            "k", 10, "questions", 2, "clusters", 2, "resamples", 10000, "seed", 12,
            "per_question", List.of(
                Map.of("question", "Who | what?", "source_id", "d1", "a", Map.of("rank", 1), "b", Map.of("rank", 0)),
                Map.of("question", "Where?", "source_id", "d2", "a", Map.of("rank", 0), "b", Map.of("rank", 3))));
        String md = CompareCli.markdown(answer);
        String[] lines = md.split("\n");
        assertEquals("| | A: books-chunks | B: books-v2-chunks | B − A [95% CI] |", lines[0]);
        assertEquals("| DCG@1 | 50.0 | 75.0 | **+25.0 [+5.0, +50.0]** |", lines[2]);
        assertEquals("| DCG@10 | 60.0 | 80.0 | +20.0 [−3.3, +40.0] |", lines[3]);
        assertEquals("| Recall@10 | 75.0 | 75.0 | 0.0 [0.0, 0.0] |", lines[4]);
        assertEquals("| 1 | Who \\| what? | d1 | 1 | – | A |", lines[lines.length - 2]);
        assertEquals("| 2 | Where? | d2 | – | 3 | B |", lines[lines.length - 1]);
    }
}

package io.strata.eval;

import org.junit.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

public class EvalRowsTests {
    private static final String STRATEGY = "\"strategy\": {\"type\": \"recursive\", \"max_words\": \"$theta\"}";

    private static List<EvalRows.Row> parse(String json) {
        return EvalRows.parse(json, "rows.json", null, null);
    }

    @Test
    public void testQueryFor_replacesQuestionInEveryString_andAddsKOnlyWhenAbsent() {
        EvalRows.Row row = parse("{\"rows\": [{\"name\": \"e5\", " + STRATEGY + ", \"query\": {\"query_text\": \"query: $question\", "
            + "\"filter\": {\"bool\": {\"should\": [{\"match\": {\"text\": \"$question\"}}]}}, \"levels\": [0]}}]}").get(0);
        Map<String, Object> body = row.queryFor("Who is Emma?", 100);
        assertEquals("query: Who is Emma?", body.get("query_text"));
        assertEquals(Map.of("bool", Map.of("should", List.of(Map.of("match", Map.of("text", "Who is Emma?"))))), body.get("filter"));
        assertEquals(List.of(0), body.get("levels"));
        assertEquals(100, body.get("k"));
        // the row's own query is untouched: the next question gets a fresh copy
        assertEquals("query: $question", row.query().get("query_text"));

        EvalRows.Row withK = parse("{\"rows\": [{\"name\": \"k\", " + STRATEGY + ", \"query\": {\"match\": \"$question\", \"k\": 7}}]}").get(0);
        assertEquals(7, withK.queryFor("q", 100).get("k"));
    }

    @Test
    public void testQueryFor_questionWithDollarAndBackslash_isInsertedLiterally() {
        EvalRows.Row row = parse("{\"rows\": [{\"name\": \"a\", " + STRATEGY + "}]}").get(0);
        assertEquals("cost $1 \\n?", row.queryFor("cost $1 \\n?", 10).get("query_text"));
    }

    @Test
    public void testParse_absentQuery_isDenseQueryText_andAbsentBaselineIsTheFirstRow() {
        List<EvalRows.Row> rows = parse("{\"rows\": [{\"name\": \"a\", " + STRATEGY + "}, {\"name\": \"b\", " + STRATEGY
            + ", \"granularities\": [], \"model\": \"e5-small-v2\"}]}");
        assertEquals(Map.of("query_text", "$question"), rows.get(0).query());
        assertNull(rows.get(0).granularities());
        assertNull(rows.get(0).model());
        assertEquals(List.of(), rows.get(1).granularities());
        assertEquals("e5-small-v2", rows.get(1).model());
        assertEquals("a", rows.get(0).baseline());
        assertEquals("a", rows.get(1).baseline());
    }

    @Test
    public void testParse_rowBaselineOverridesTheFileBaseline_andOverrideOptionBeatsBoth() {
        String json = "{\"baseline\": \"b\", \"rows\": [{\"name\": \"a\", " + STRATEGY + "}, {\"name\": \"b\", " + STRATEGY
            + "}, {\"name\": \"c\", " + STRATEGY + ", \"baseline\": \"a\"}]}";
        List<EvalRows.Row> rows = parse(json);
        assertEquals(List.of("b", "b", "a"), rows.stream().map(EvalRows.Row::baseline).toList());
        assertEquals(List.of("c", "c", "c"), EvalRows.parse(json, "rows.json", null, "c").stream().map(EvalRows.Row::baseline).toList());
    }

    @Test
    public void testParse_unknownBaseline_namesTheRowTheOptionAndTheRows() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> parse("{\"rows\": [{\"name\": \"a\", " + STRATEGY
            + ", \"baseline\": \"Dense\"}]}"));
        assertEquals("[rows.json] row [a]: [baseline] [Dense] is not a row; rows: [a]", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> EvalRows.parse("{\"rows\": [{\"name\": \"a\", " + STRATEGY + "}]}",
            "rows.json", null, "zz"));
        assertEquals("[rows.json] [--baseline] [zz] is not a row; rows: [a]", e.getMessage());
    }

    @Test
    public void testParse_badRows_areRefusedWithTheFieldAndWhatIsAllowed() {
        assertTrue(message("{\"rows\": [{\"name\": \"a\", " + STRATEGY + ", \"levels\": [0]}]}")
            .contains("unknown key [levels]; supported: [_comment, baseline, granularities, model, name, processor, query, source_index, strategy, thetas] "
                + "(query levels go inside [query])"));
        assertTrue(message("{\"rows\": [{\"name\": \"a\", " + STRATEGY + ", \"query\": {\"match\": \"fixed\"}}]}")
            .contains("[query] must use \"$question\""));
        assertTrue(message("{\"rows\": [{\"name\": \"a\", " + STRATEGY + "}, {\"name\": \"a\", " + STRATEGY + "}]}")
            .contains("row name [a] appears twice"));
        assertTrue(message("{\"rows\": [{\"name\": \"a\"}]}").contains("row [a]: [strategy] must be a strategy object with a [type]"));
        assertTrue(message("{\"rows\": [{\"name\": \"a\", " + STRATEGY + ", \"thetas\": [0]}]}")
            .contains("[thetas] must be a non-empty list of positive integers"));
        assertTrue(message("{\"rows\": []}").contains("needs [rows]"));
        assertTrue(message("{\"row\": []}").contains("unknown key [row]; supported: [_comment, baseline, rows]"));
    }

    @Test
    public void testSelect_onlyKeepsMatchingRowsAndTheirBaselines() {
        String json = "{\"baseline\": \"Dense MG\", \"rows\": [{\"name\": \"Dense MG\", " + STRATEGY + "}, {\"name\": \"Lexical MG\", "
            + STRATEGY + "}, {\"name\": \"Hybrid\", " + STRATEGY + ", \"baseline\": \"Lexical MG\"}]}";
        assertEquals(List.of("Dense MG", "Lexical MG", "Hybrid"),
            EvalRows.parse(json, "rows.json", "Hybrid", null).stream().map(EvalRows.Row::name).toList());
        assertEquals(List.of("Dense MG", "Lexical MG"),
            EvalRows.parse(json, "rows.json", "Lexical", null).stream().map(EvalRows.Row::name).toList());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> EvalRows.parse(json, "rows.json", "BM25", null));
        assertEquals("[--only] [BM25] matches no row of [rows.json]; rows: [Dense MG, Lexical MG, Hybrid]", e.getMessage());
    }

    @Test
    public void testThetasOn_rowThetasFilterTheDatasets_elseTheRowsFirstTheta() {
        EvalRows.Row all = parse("{\"rows\": [{\"name\": \"a\", " + STRATEGY + "}]}").get(0);
        EvalRows.Row some = parse("{\"rows\": [{\"name\": \"a\", " + STRATEGY + ", \"thetas\": [300, 500]}]}").get(0);
        assertEquals(List.of(200, 300), all.thetasOn(List.of(200, 300)));
        assertEquals(List.of(300), some.thetasOn(List.of(200, 300)));
        assertEquals(List.of(300), some.thetasOn(List.of(200)));
        assertEquals(Map.of("type", "recursive", "max_words", 300), all.strategyAt(300));
    }

    @Test
    public void testSourceIndex_isPartOfTheIngestKey_andMustBeAnObject() throws Exception {
        List<EvalRows.Row> rows = EvalRows.parse(Files.readString(Path.of("src/test/resources/eval/rows-analysis.json")),
            "rows-analysis.json", null, null);
        EvalDataset d = new EvalDataset("d", EvalDataset.Kind.SPANS, "x", List.of(new EvalDataset.Document("a.txt", "text", "a")), List.of());
        Map<String, String> keys = new java.util.LinkedHashMap<>();
        for (EvalRows.Row r : rows) {
            keys.put(r.name(), RetrievalEval.ingestFor(d, r, 300).key());
        }
        assertEquals(keys.get("Hybrid MG (default)"), keys.get("Lexical MG"));
        assertEquals(keys.get("Hybrid MG english"), keys.get("Lexical MG english"));
        assertFalse(keys.get("Hybrid MG (default)").equals(keys.get("Hybrid MG english")));
        assertEquals(Map.of("mappings", Map.of("properties", Map.of("body", Map.of("type", "text", "analyzer", "english")))),
            rows.get(1).sourceIndex());
        IllegalArgumentException e = org.junit.Assert.assertThrows(IllegalArgumentException.class, () -> EvalRows.parse(
            "{\"rows\": [{\"name\": \"a\", \"strategy\": {\"type\": \"recursive\"}, \"source_index\": \"english\"}]}", "f", null, null));
        assertTrue(e.getMessage(), e.getMessage().contains("[f] row [a]: [source_index] must be a create-index body"));
    }

    @Test
    public void testBundledRowsFiles_parse_andTheDefaultRowsShareOneIngest() throws Exception {
        List<EvalRows.Row> rows = EvalRows.parse(Files.readString(Path.of("src/test/resources/eval/rows.json")), "rows.json", null, null);
        assertEquals(List.of("Hybrid MG (default)", "Hybrid parents-only", "Dense MG", "Dense parents-only", "Lexical MG",
            "Lexical parents-only", "Hybrid RRF (k 60, unweighted)"), rows.stream().map(EvalRows.Row::name).toList());
        // each parents-only row is compared with MG in its own mode; the rest with the default
        assertEquals(List.of("Hybrid MG (default)", "Hybrid MG (default)", "Hybrid MG (default)", "Dense MG", "Hybrid MG (default)",
            "Lexical MG", "Hybrid MG (default)"), rows.stream().map(EvalRows.Row::baseline).toList());
        EvalDataset d = new EvalDataset("d", EvalDataset.Kind.SPANS, "x", List.of(new EvalDataset.Document("a.txt", "text", "a")), List.of());
        assertEquals(1, rows.stream().map(r -> {
            try {
                return RetrievalEval.ingestFor(d, r, 200).key();
            } catch (java.io.IOException e) {
                throw new AssertionError(e);
            }
        }).distinct().count());
        // every other bundled rows file parses too (each names its own rows and baselines)
        try (var files = Files.list(Path.of("src/test/resources/eval"))) {
            List<Path> rowsFiles = files.filter(f -> f.getFileName().toString().matches("rows-.*\\.json")).toList();
            assertEquals("rows-analysis, -children, -chunking-rules, -context, -fusion, -granularity, -large-parents, -late, -models, "
                + "-strategies, -vectors", 11,
                rowsFiles.size());
            for (Path file : rowsFiles) {
                EvalRows.parse(Files.readString(file), file.getFileName().toString(), null, null);
            }
        }
    }

    @Test
    public void testProcessorOptions_goIntoTheIngestKey_andMayNotSetTheRowsOwnKeys() throws Exception {
        List<EvalRows.Row> rows = parse("{\"rows\": [{\"name\": \"a\", " + STRATEGY + "}, {\"name\": \"b\", " + STRATEGY
            + ", \"processor\": {\"children\": {\"embedding\": \"late\"}}}]}");
        EvalDataset d = new EvalDataset("d", EvalDataset.Kind.SPANS, "x", List.of(new EvalDataset.Document("a.txt", "text", "a")), List.of());
        RetrievalEval.Ingest plain = RetrievalEval.ingestFor(d, rows.get(0), 200);
        RetrievalEval.Ingest late = RetrievalEval.ingestFor(d, rows.get(1), 200);
        assertEquals(Map.of(), plain.options());
        assertEquals(Map.of("children", Map.of("embedding", "late")), late.options());
        assertTrue(!plain.key().equals(late.key()) && !plain.index().equals(late.index()));
        String m = message("{\"rows\": [{\"name\": \"a\", " + STRATEGY + ", \"processor\": {\"model\": \"x\"}}]}");
        assertTrue(m, m.contains("[processor] must not set [model]"));
    }

    @Test
    public void testIngestKey_differsByModelDatasetAndTheta() throws Exception {
        List<EvalRows.Row> rows = parse("{\"rows\": [{\"name\": \"a\", " + STRATEGY + "}, {\"name\": \"b\", " + STRATEGY
            + ", \"model\": \"e5-small-v2\"}]}");
        EvalDataset d1 = new EvalDataset("d1", EvalDataset.Kind.SPANS, "x", List.of(new EvalDataset.Document("a.txt", "text", "a")), List.of());
        EvalDataset d2 = new EvalDataset("d2", EvalDataset.Kind.SPANS, "x", List.of(new EvalDataset.Document("a.txt", "text", "a")), List.of());
        RetrievalEval.Ingest base = RetrievalEval.ingestFor(d1, rows.get(0), 200);
        assertTrue(base.index().startsWith("eval-d1-recursive-200-"));
        assertTrue(!base.key().equals(RetrievalEval.ingestFor(d1, rows.get(1), 200).key()));
        assertTrue(!base.index().equals(RetrievalEval.ingestFor(d1, rows.get(1), 200).index()));
        assertTrue(!base.key().equals(RetrievalEval.ingestFor(d2, rows.get(0), 200).key()));
        assertTrue(!base.key().equals(RetrievalEval.ingestFor(d1, rows.get(0), 300).key()));
        assertEquals("e5-small-v2", RetrievalEval.ingestFor(d1, rows.get(1), 200).model());
    }

    private static String message(String json) {
        return assertThrows(IllegalArgumentException.class, () -> parse(json)).getMessage();
    }
}

package io.strata.eval;

import io.strata.quality.SpanRelevance;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

public class EvalDatasetTests {
    @Rule
    public TemporaryFolder tmp = new TemporaryFolder();

    @Test
    public void testBundledDatasets_loadWithTheirKindsCountsAndDefaultThetas() throws Exception {
        EvalDataset emma = EvalDataset.fromFolder(RetrievalEval.BUNDLED.resolve("gutenqa-emma"), null);
        assertEquals(EvalDataset.Kind.BOOK, emma.kind());
        assertEquals(55, emma.documents().size()); // the chapters
        assertEquals(30, emma.questions().size());
        assertEquals(List.of(200, 300, 500), emma.defaultThetas());
        EvalDataset squad = EvalDataset.fromFolder(RetrievalEval.BUNDLED.resolve("squad2-dev-sample"), null);
        assertEquals(EvalDataset.Kind.SPANS, squad.kind());
        assertEquals(5, squad.documents().size());
        assertEquals(705, squad.questions().size());
        assertEquals(List.of(200, 300), squad.defaultThetas());
        EvalDataset.Question q = squad.questions().get(0);
        assertEquals("56ddde6b9a695914005b9628", q.id());
        assertEquals("France", text(squad, q.doc()).substring(q.answerStart(), q.answerEnd()));
    }

    @Test
    public void testBundledDatasets_clusters_squadByParagraph_covidByArticle_emmaByQuestion() throws Exception {
        EvalDataset emma = EvalDataset.fromFolder(RetrievalEval.BUNDLED.resolve("gutenqa-emma"), null);
        assertEquals(30, emma.clusterCount());
        assertEquals("tuning set: the defaults were chosen on it", emma.role());
        EvalDataset squad = EvalDataset.fromFolder(RetrievalEval.BUNDLED.resolve("squad2-dev-sample"), null);
        // oracle: the distinct (doc, paragraph_start) pairs of questions.jsonl, read here on their own
        java.util.Set<String> paragraphs = new java.util.HashSet<>();
        for (String line : Files.readAllLines(RetrievalEval.BUNDLED.resolve("squad2-dev-sample/questions.jsonl"))) {
            Map<String, Object> q = org.opensearch.common.xcontent.XContentHelper.convertToMap(
                org.opensearch.common.xcontent.json.JsonXContent.jsonXContent, line, false);
            paragraphs.add(q.get("doc") + "|" + q.get("paragraph_start"));
        }
        assertEquals(173, paragraphs.size());
        assertEquals(173, squad.clusterCount());
        int[] clusters = squad.clusters();
        for (int i = 0; i < clusters.length; i++) {
            for (int j = i + 1; j < clusters.length; j++) {
                EvalDataset.Question a = squad.questions().get(i);
                EvalDataset.Question b = squad.questions().get(j);
                assertEquals(a.cluster().equals(b.cluster()), clusters[i] == clusters[j]);
            }
        }
        assertTrue(squad.questions().stream().noneMatch(q -> q.half() != null));

        EvalDataset covid = EvalDataset.fromFolder(RetrievalEval.BUNDLED.resolve("covid-qa-sample"), null);
        assertEquals(92, covid.clusterCount()); // its articles
        List<String> docs = covid.documents().stream().map(EvalDataset.Document::id).toList();
        for (EvalDataset.Question q : covid.questions()) {
            assertEquals(q.doc(), q.cluster());
            // the documented rule: articles in file-name order, alternately tuning and confirmation
            assertEquals(docs.indexOf(q.doc()) % 2 == 0 ? EvalDataset.TUNING : EvalDataset.CONFIRMATION, q.half());
        }
        long tuning = covid.questions().stream().filter(q -> EvalDataset.TUNING.equals(q.half())).count();
        assertEquals("split by article: tuning half (46 articles, " + tuning + " questions), confirmation half (46 articles, "
            + (1235 - tuning) + " questions)", covid.role());
    }

    @Test
    public void testSpans_answerOffsetsInCodePoints_becomeUtf16Offsets() throws Exception {
        // code points: "Emoji " 6, 😀 1, " then " 6 → "Paris" at 13..18 (UTF-16: 14..19)
        Path dir = spansFolder("set", "Emoji 😀 then Paris is the answer.",
            "{\"id\": \"q1\", \"question\": \"Which city?\", \"doc\": \"a.txt\", \"answer\": \"Paris\", \"answer_start\": 13, \"answer_end\": 18}");
        EvalDataset d = EvalDataset.fromFolder(dir, null);
        EvalDataset.Question q = d.questions().get(0);
        assertEquals(14, q.answerStart());
        assertEquals(19, q.answerEnd());
        assertEquals("set", d.name());
        assertEquals(new EvalDataset.Document("a.txt", "Emoji 😀 then Paris is the answer.", "a"), d.documents().get(0));
    }

    @Test
    public void testSpans_offsetsThatDoNotMatchTheAnswer_orAnUnknownDoc_areRefusedNamingTheQuestion() throws Exception {
        Path dir = spansFolder("bad", "Paris is the answer.",
            "{\"id\": \"q1\", \"question\": \"?\", \"doc\": \"a.txt\", \"answer\": \"Paris\", \"answer_start\": 1, \"answer_end\": 6}");
        String m = assertThrows(IllegalArgumentException.class, () -> EvalDataset.fromFolder(dir, null)).getMessage();
        assertTrue(m, m.contains("question [q1]: [answer] [Paris] is not the text at [answer_start, answer_end) of [a.txt], which is [aris ]"));
        Files.writeString(dir.resolve("questions.jsonl"),
            "{\"question\": \"?\", \"doc\": \"b.txt\", \"answer_start\": 0, \"answer_end\": 5}\n");
        m = assertThrows(IllegalArgumentException.class, () -> EvalDataset.fromFolder(dir, null)).getMessage();
        assertTrue(m, m.contains("question #0: [doc] [b.txt] is not a file of") && m.endsWith("files: [a.txt]"));
    }

    @Test
    public void testBook_splitRegexCutsDocuments_andAFolderWithNeitherKindIsRefused() throws Exception {
        Path dir = tmp.newFolder("book").toPath();
        Files.writeString(dir.resolve("book.txt"), "# One\n\nfirst text\n\n# Two\n\nsecond text\n");
        Files.writeString(dir.resolve("questions.jsonl"), "{\"question\": \"?\", \"evidence\": \"second text\"}\n");
        EvalDataset d = EvalDataset.fromFolder(dir, "(?m)(?=^# )");
        assertEquals(List.of("doc-0", "doc-1"), d.documents().stream().map(EvalDataset.Document::id).toList());
        assertTrue(d.documents().get(1).text().startsWith("# Two"));
        EvalDataset.Parents parents = new EvalDataset.Parents(
            List.of(new SpanRelevance.Parent("doc-0:0", "doc-0", 0, 20), new SpanRelevance.Parent("doc-1:0", "doc-1", 0, 20)),
            List.of("# One first text", "# Two second text"));
        assertEquals(java.util.Set.of("doc-1:0"), d.relevant(d.questions().get(0), parents).ids());

        Path empty = tmp.newFolder("empty").toPath();
        String m = assertThrows(IllegalArgumentException.class, () -> EvalDataset.fromFolder(empty, null)).getMessage();
        assertTrue(m, m.contains("holds neither docs/ (SQuAD kind"));
    }

    @Test
    public void testThetasOption_allDatasets_perDataset_andErrors() throws Exception {
        EvalDataset emma = EvalDataset.fromFolder(RetrievalEval.BUNDLED.resolve("gutenqa-emma"), null);
        EvalDataset squad = EvalDataset.fromFolder(RetrievalEval.BUNDLED.resolve("squad2-dev-sample"), null);
        List<EvalDataset> both = List.of(emma, squad);
        assertEquals(Map.of("gutenqa-emma", List.of(200, 300, 500), "squad2-dev-sample", List.of(200, 300)),
            RetrievalEval.thetas(null, both));
        assertEquals(Map.of("gutenqa-emma", List.of(300), "squad2-dev-sample", List.of(300)), RetrievalEval.thetas("300", both));
        assertEquals(Map.of("gutenqa-emma", List.of(200, 500), "squad2-dev-sample", List.of(200, 300)),
            RetrievalEval.thetas("gutenqa-emma=200,500", both));
        String m = assertThrows(IllegalArgumentException.class, () -> RetrievalEval.thetas("emma=200", both)).getMessage();
        assertEquals("[--thetas] [emma=200]: expected DATASET=θ,θ with a dataset of [gutenqa-emma, squad2-dev-sample]", m);
        m = assertThrows(IllegalArgumentException.class, () -> RetrievalEval.thetas("200,x", both)).getMessage();
        assertEquals("[--thetas] must be positive integers separated by commas, got [200,x]", m);
    }

    @Test
    public void testOptions_unknownOptionNamesTheSupportedOnes() {
        String m = assertThrows(IllegalArgumentException.class, () -> RetrievalEval.options(new String[] { "--theta", "300" })).getMessage();
        assertTrue(m, m.startsWith("unknown option [--theta]; supported: [--baseline, --context, --context-tokenizer, --corpus, --data, --docs, --k,"));
        m = assertThrows(IllegalArgumentException.class, () -> RetrievalEval.options(new String[] { "--k" })).getMessage();
        assertEquals("[--k] needs a value", m);
    }

    /** A SQuAD-kind folder with one document, docs/a.txt, and one question line. */
    private Path spansFolder(String name, String text, String question) throws Exception {
        Path dir = tmp.newFolder(name).toPath();
        Files.createDirectories(dir.resolve("docs"));
        Files.writeString(dir.resolve("docs/a.txt"), text);
        Files.writeString(dir.resolve("questions.jsonl"), question + "\n");
        return dir;
    }

    private static String text(EvalDataset d, String doc) {
        return d.documents().stream().filter(x -> x.id().equals(doc)).findFirst().orElseThrow().text();
    }
}

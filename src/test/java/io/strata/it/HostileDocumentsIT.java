package io.strata.it;

import io.strata.chaos.HostileChecks;
import io.strata.chaos.HostileDocuments;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Hostile documents ({@link HostileDocuments}, seed 44, scale 1: nestings 10^5 deep, a 10^6-character token, 10^5
 * one-word paragraphs, combining marks, bidi controls, lone surrogates, NUL) sent to {@code _chunk} and through a pipeline
 * of each format ({@code embed: false}: the same chunk documents, without the embedding work of 10^5 words): after each the cluster is up with every node, each answer is a 2xx or a 4xx naming its limit within
 * {@link HostileChecks#MAX_MS}, and the chunk documents equal {@code _chunk} of the stored text ({@link HostileChecks}).
 * On the code before the nesting limit, the first Markdown document (10^5 nested block quotes) made the node exit on a
 * StackOverflowError. {@code bin/strata-chaos hostile} runs the same checks with other seeds and scales.
 */
public class HostileDocumentsIT extends StrataRestTestCase {
    public void testHostileDocuments_nodeStaysUp_answersInTime_chunksEqualTheOracle() throws IOException {
        HostileChecks checks = new HostileChecks(client(), "hostile", false);
        checks.setUp();
        List<String> problems = new ArrayList<>();
        long start = System.nanoTime();
        for (HostileDocuments.Doc doc : HostileDocuments.generate(44, 1)) {
            HostileChecks.Outcome outcome = checks.check(doc, doc.name());
            logger.info("hostile: {}", outcome);
            if (!outcome.problems().isEmpty()) {
                problems.add(outcome.toString());
            }
        }
        logger.info(String.format(Locale.ROOT, "hostile: every document in %,d ms", (System.nanoTime() - start) / 1_000_000));
        assertTrue(String.join("\n", problems), problems.isEmpty());
    }

    /**
     * {@code _chunk} with a model-guided strategy makes a model call per sentence: a text above its limit for them is a 400
     * naming the limit, before the work (on the code before the limit, 200,000 characters of Emma with [semantic] took
     * the preview minutes of inference on the node).
     */
    public void testChunkPreview_modelGuidedStrategyOnALongText_refusedBeforeTheWork() throws IOException {
        HostileChecks checks = new HostileChecks(client(), "hostile-preview", false);
        String emma = io.strata.chunking.TestTexts.emma();
        String text = emma.length() >= 200_000 ? emma.substring(0, 200_000) : emma.repeat(200_000 / emma.length() + 1).substring(0, 200_000);
        HostileChecks.Answer a = checks.send("POST", "/_plugins/_strata/_chunk", "{\"text\": " + HostileDocuments.jsonString(text)
            + ", \"strategy\": {\"type\": \"semantic\", \"max_words\": 300}}");
        assertEquals(a.error(), 400, a.status());
        assertTrue(a.error(), a.raw().contains("more than the preview limit of 100000 for a model-guided strategy ([semantic]"));
        assertTrue("answered in " + a.ms() + " ms", a.ms() < 5_000);
    }

    /** Request bodies, processor configurations and source documents 10^5 objects deep: XContent's depth limit, a 400. */
    public void testJsonNested10e5Deep_refusedByXContentsDepthLimit_nodeUp() throws IOException {
        HostileChecks checks = new HostileChecks(client(), "hostile-json", false);
        String deep = "{\"a\": ".repeat(100_000) + "1" + "}".repeat(100_000);
        List<String> problems = new ArrayList<>();
        List<String[]> requests = List.of(
            new String[] {"POST", "/_plugins/_strata/_chunk", "{\"text\": \"x\", \"document\": " + deep + "}"},
            new String[] {"PUT", "/_ingest/pipeline/hostile-json", "{\"processors\": [{\"multi_granular_chunking\": {\"field\": "
                + "\"body\", \"target_index\": \"hostile-json-chunks\", \"strategy\": " + deep + "}}]}"},
            new String[] {"PUT", "/hostile-json/_doc/1?pipeline=hostile-json-ok", "{\"body\": \"x\", \"meta\": " + deep + "}"});
        checks.send("PUT", "/_ingest/pipeline/hostile-json-ok", "{\"processors\": [{\"multi_granular_chunking\": {\"field\": "
            + "\"body\", \"target_index\": \"hostile-json-chunks\"}}]}");
        for (String[] r : requests) {
            HostileChecks.Answer a = checks.send(r[0], r[1], r[2]);
            if (a.status() != 400 || !a.raw().contains("nesting depth")) {
                problems.add(r[1] + " answered " + a.status() + ": " + a.error());
            }
            assertEquals(200, checks.send("GET", "/_cluster/health?timeout=10s", null).status());
        }
        assertTrue(String.join("\n", problems), problems.isEmpty());
    }
}

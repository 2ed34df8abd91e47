package io.strata.it;

import org.opensearch.client.Request;
import org.opensearch.client.RequestOptions;
import org.opensearch.client.ResponseException;
import org.opensearch.client.WarningsHandler;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A chunking config has an identity, recorded with every document's chunks: {@code _reconcile} reports documents chunked
 * under another config than their pipeline's current one ({@code config_drift}), and a pipeline's {@code target_index}
 * cannot move away from a chunk index that holds chunks. Oracle: which documents were written before the change (all of
 * them drifted, the updated one not), and {@code _chunk} of the stored text with the old and the new options.
 */
@SuppressWarnings("unchecked")
public class ChunkConfigIT extends StrataRestTestCase {

    private static String text(int doc) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            b.append("Document ").append(doc).append(" sentence ").append(i)
                .append(" tells of Highbury, Hartfield and the long walks to Donwell Abbey in the summer. ");
        }
        return b.toString().strip();
    }

    private static String options(String target, String strategy, String extra) {
        return "{\"field\": \"body\", \"target_index\": \"" + target + "\", \"embed\": false, \"granularities\": [0.5], "
            + "\"strategy\": " + strategy + extra + "}";
    }

    private static Map<String, Object> reconcile(String index, boolean dryRun) throws IOException {
        return call("POST", "/_plugins/_strata/_reconcile?index=" + index + (dryRun ? "&dry_run=true" : ""));
    }

    private static void assertDrift(Map<String, Object> report, int checked, int configDrift) {
        assertEquals(report.toString(), checked, ((Number) report.get("checked")).intValue());
        assertEquals(report.toString(), configDrift, ((Number) report.get("config_drift")).intValue());
        for (String kind : List.of("missing", "stale", "orphans", "duplicates")) {
            assertEquals(kind + ": " + report, 0, ((Number) report.get(kind)).intValue());
        }
    }

    private static Map<String, Object> summary(String index, String id) throws IOException {
        return (Map<String, Object>) ((Map<String, Object>) call("GET", "/" + index + "/_doc/" + id).get("_source")).get("strata");
    }


    public void testChangingThetaInThePipeline_reportsEveryOldDocumentAsConfigDrift_untilItIsRechunked() throws Exception {
        String source = "cfg-src";
        String chunks = "cfg-src-chunks";
        String theta30 = "{\"type\": \"recursive\", \"max_words\": 30}";
        putPipeline("cfg", options(chunks, theta30, ""));
        Map<String, Map<String, Object>> docs = new LinkedHashMap<>();
        for (int i = 1; i <= 6; i++) {
            docs.put("d" + i, Map.of("body", text(i), "title", "doc " + i));
        }
        assertEquals(false, bulk(source, "cfg", docs).get("errors"));
        assertDrift(reconcile(source, true), 6, 0);

        // only what decides how chunks are cut or embedded is the config: a limit on the input is not
        putPipeline("cfg", options(chunks, theta30, ", \"max_chars\": 100000, \"ignore_missing\": true"));
        assertDrift(reconcile(source, true), 6, 0);

        putPipeline("cfg", options(chunks, "{\"type\": \"recursive\", \"max_words\": 15}", ""));
        assertDrift(reconcile(source, true), 6, 6);

        // an update of an unrelated field re-chunks the document under the current config: that one is in step again
        update("/" + source + "/_update/d1?refresh=true", "{\"doc\": {\"title\": \"renamed\"}}");
        Map<String, Object> afterUpdate = reconcile(source, true);
        assertDrift(afterUpdate, 6, 5);
        // the documents by the config they were chunked under: the one updated, and the five before the change
        Object current = summary(source, "d1").get("config");
        Object before = summary(source, "d2").get("config");
        assertNotEquals(current, before);
        for (int i = 3; i <= 6; i++) {
            assertEquals(before, summary(source, "d" + i).get("config"));
        }
        assertEquals(Map.of(current, 1, before, 5), afterUpdate.get("configs"));
        assertEquals(cutByChunkApi(text(1), Map.of("type", "recursive", "max_words", 15), List.of(0.5)),
            chunkShape(chunksOf(chunks, "d1")));
        assertEquals(cutByChunkApi(text(2), Map.of("type", "recursive", "max_words", 30), List.of(0.5)),
            chunkShape(chunksOf(chunks, "d2")));

        // reported, never rewritten in place by _reconcile (that would mix configs while it runs)
        Map<String, Object> run = reconcile(source, false);
        assertDrift(run, 6, 5);
        assertEquals(run.toString(), 0, ((Number) run.get("fixed")).intValue());
        assertEquals(cutByChunkApi(text(2), Map.of("type", "recursive", "max_words", 30), List.of(0.5)),
            chunkShape(chunksOf(chunks, "d2")));

        // another strategy type is another config too (the summary's strategy no longer agrees with the processor)
        putPipeline("cfg", options(chunks, "{\"type\": \"paragraph\", \"max_words\": 15}", ""));
        assertDrift(reconcile(source, true), 6, 6);
    }

    public void testMovingTargetIndexAwayFromChunksItWrote_isA400_andChangesNothing() throws Exception {
        String source = "tgt-src";
        String chunks = "tgt-src-chunks";
        String strategy = "{\"type\": \"recursive\", \"max_words\": 30}";
        putPipeline("tgt", options(chunks, strategy, ""));
        Map<String, Map<String, Object>> docs = new LinkedHashMap<>();
        for (int i = 1; i <= 3; i++) {
            docs.put("d" + i, Map.of("body", text(i)));
        }
        assertEquals(false, bulk(source, "tgt", docs).get("errors"));
        int before = count(chunks);
        assertTrue("chunks written: " + before, before >= 6);

        ResponseException e = callFailing("PUT", "/_ingest/pipeline/tgt",
            "{\"processors\": [{\"multi_granular_chunking\": " + options("tgt-src-chunks-v2", strategy, "") + "}]}");
        assertEquals(400, e.getResponse().getStatusLine().getStatusCode());
        String message = e.getMessage();
        for (String named : List.of("[target_index]", "[tgt]", "[" + chunks + "]", "[tgt-src-chunks-v2]", "[" + source + "]")) {
            assertTrue(named + " in: " + message, message.contains(named));
        }
        // nothing changed: the stored pipeline, the chunk index, and an update still writes where the chunks are
        Map<String, Object> stored = call("GET", "/_ingest/pipeline/tgt");
        assertTrue(stored.toString(), stored.toString().contains("target_index=" + chunks + ","));
        update("/" + source + "/_update/d1?refresh=true", "{\"doc\": {\"title\": \"renamed\"}}");
        assertEquals(before, count(chunks));
        assertEquals(404, callFailing("GET", "/tgt-src-chunks-v2/_count", null).getResponse().getStatusLine().getStatusCode());

        // a template that still names the same chunk index for this source, and another option changed, is accepted
        putPipeline("tgt", options("{{_index}}-chunks", "{\"type\": \"recursive\", \"max_words\": 20}", ""));
        // a pipeline whose chunk index holds nothing yet may point anywhere
        putPipeline("tgt-fresh", options("fresh-chunks", strategy, ""));
        putPipeline("tgt-fresh", options("fresh-chunks-v2", strategy, ""));
    }
}

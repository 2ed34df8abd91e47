package io.strata.it;

import org.opensearch.client.Request;
import org.opensearch.client.RequestOptions;
import org.opensearch.client.WarningsHandler;
import org.opensearch.client.ResponseException;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The chunk index stays in step with its source documents along every write path a user has, against an oracle computed
 * in the test: the source documents as the test last wrote them, each cut with {@code _chunk} using the pipeline's own
 * configuration. After every step each chunk index holds exactly the chunks of the current source texts — the same
 * documents (nothing orphaned, nothing missing), and per document the same parents in order with the same text, offsets
 * and children. Write paths: index, create, mixed {@code _bulk}, {@code _update} (partial, script, upsert, scripted
 * delete), {@code _update_by_query}, {@code _delete_by_query}, {@code _reindex} into a piped index, a write alias, rollover
 * and an alias swap with {@code "target_index": "{{_index}}-chunks"}, custom routing, object and dotted field paths,
 * {@code index.default_pipeline} and {@code index.final_pipeline}; then document deletes, index deletes and
 * {@code _reconcile} (which finds nothing to fix). A text kept out of {@code _source} is refused with a 400 naming it.
 * Chunking without vectors ({@code embed: false}): the vectors do not decide where chunks go.
 */
@SuppressWarnings("unchecked")
public class LifecycleConformanceIT extends StrataRestTestCase {
    private static final String CHUNKING = "\"embed\": false, \"strategy\": {\"type\": \"recursive\", \"max_words\": 20}, "
        + "\"granularities\": [0.5]";

    /** Chunk index → source id → the text its chunks must be cut from. */
    private final Map<String, Map<String, String>> oracle = new TreeMap<>();
    private final Map<String, List<Object>> cut = new HashMap<>();

    /** A text of {@code sentences} sentences (a sentence is 12 words: 20-word parents hold one or two). */
    private static String text(String tag, int sentences) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < sentences; i++) {
            b.append("In version ").append(tag).append(" sentence ").append(i).append(" Emma walks from Hartfield to Highbury today. ");
        }
        return b.toString().strip();
    }

    private static void pipeline(String name, String field, String target) throws IOException {
        putPipeline(name, "{\"field\": \"" + field + "\", \"target_index\": \"" + target + "\", " + CHUNKING + "}");
    }

    private void expect(String chunkIndex, String id, String text) {
        oracle.computeIfAbsent(chunkIndex, k -> new TreeMap<>()).put(id, text);
    }

    private void gone(String chunkIndex, String id) {
        oracle.computeIfAbsent(chunkIndex, k -> new TreeMap<>()).remove(id);
    }

    /** Every chunk index the oracle knows holds exactly the chunks of its documents' current texts. */
    private void check(String when) throws IOException {
        for (var entry : oracle.entrySet()) {
            String chunkIndex = entry.getKey();
            Map<String, List<Map<String, Object>>> actual = new TreeMap<>();
            if (indexExists(chunkIndex)) {
                refresh(chunkIndex);
                Map<String, Object> r = call("POST", "/" + chunkIndex + "/_search",
                    "{\"size\": 10000, \"_source\": {\"excludes\": [\"embedding\", \"children.embedding\"]}, "
                        + "\"sort\": [{\"source_id\": \"asc\"}, {\"ordinal\": \"asc\"}]}"); // children's texts too
                for (Object hit : (List<Object>) ((Map<String, Object>) r.get("hits")).get("hits")) {
                    Map<String, Object> h = (Map<String, Object>) hit;
                    Map<String, Object> chunk = (Map<String, Object>) h.get("_source");
                    // <source_id>:<ordinal>, and @<shard> for a routed document off the shard its _id alone routes to
                    String id = (String) h.get("_id");
                    String expectedId = chunk.get("source_id") + ":" + chunk.get("ordinal");
                    assertTrue(when + ": chunk id " + id, id.equals(expectedId)
                        || (chunk.get("source_routing") != null && id.matches(java.util.regex.Pattern.quote(expectedId) + "@\\d+")));
                    actual.computeIfAbsent((String) chunk.get("source_id"), k -> new ArrayList<>()).add(chunk);
                }
            }
            assertEquals(when + ": the documents with chunks in [" + chunkIndex + "]", entry.getValue().keySet(), actual.keySet());
            for (var doc : entry.getValue().entrySet()) {
                assertEquals(when + ": the chunks of [" + doc.getKey() + "] in [" + chunkIndex + "]", cutOf(doc.getValue()),
                    chunkShape(actual.get(doc.getKey())));
            }
        }
    }

    /** What {@code _chunk} cuts from {@code text} with the pipelines' configuration: per parent its ordinal, text, offsets, children. */
    private List<Object> cutOf(String text) throws IOException {
        List<Object> known = cut.get(text);
        if (known != null) {
            return known;
        }
        List<Object> out = cutByChunkApi(text, Map.of("type", "recursive", "max_words", 20), List.of(0.5));
        cut.put(text, out);
        return out;
    }

    /** {@code _reconcile} (dry run, then for real) finds and fixes nothing. */
    private static void assertReconcileClean(String index) throws IOException {
        for (String dry : List.of("&dry_run=true", "")) {
            Map<String, Object> r = call("POST", "/_plugins/_strata/_reconcile?index=" + index + dry);
            for (String k : List.of("orphans", "missing", "stale", "duplicates", "fixed")) {
                assertEquals(k + " in " + r, 0, ((Number) r.get(k)).intValue());
            }
            assertEquals(r.toString(), List.of(), r.get("failures"));
        }
    }

    /** A bulk request (NDJSON lines) that must succeed item by item. */
    private static List<Map<String, Object>> bulkOk(String params, String... lines) throws IOException {
        Request request = new Request("POST", "/_bulk?refresh=true" + params);
        request.setJsonEntity(String.join("\n", lines) + "\n");
        Map<String, Object> r = entityAsMap(client().performRequest(request));
        assertEquals(r.toString(), false, r.get("errors"));
        return (List<Map<String, Object>>) r.get("items");
    }

    private static String action(String op, String index, String id) {
        return json(Map.of(op, Map.of("_index", index, "_id", id)));
    }


    private static String body(String text) {
        return json(Map.of("body", text));
    }

    // ---- index, create, mixed _bulk, deletes

    public void testIndexCreateAndMixedBulk_thenDocumentDelete_reconcileAndIndexDelete() throws Exception {
        pipeline("lc-a", "body", "lc-a-chunks");
        String c = "lc-a-chunks";
        call("PUT", "/lc-a/_doc/1?pipeline=lc-a&refresh=true", body(text("a1", 3)));
        expect(c, "1", text("a1", 3));
        call("PUT", "/lc-a/_create/2?pipeline=lc-a&refresh=true", body(text("a2", 1)));
        expect(c, "2", text("a2", 1));
        check("index and create");

        // a create of an existing id fails: its prepared chunks are never written
        ResponseException conflict = callFailing("PUT", "/lc-a/_create/2?pipeline=lc-a&refresh=true", body(text("never stored", 4)));
        assertEquals(409, conflict.getResponse().getStatusLine().getStatusCode());
        check("a failed create");

        // one bulk: overwrite 1 with fewer parents, write 3 twice (the later write wins), delete 2, create 4
        bulkOk("&pipeline=lc-a", action("index", "lc-a", "1"), body(text("a1 short", 1)),
            action("index", "lc-a", "3"), body(text("a3 first", 4)),
            action("delete", "lc-a", "2"),
            action("index", "lc-a", "3"), body(text("a3 second", 2)),
            action("create", "lc-a", "4"), body(text("a4", 5)));
        expect(c, "1", text("a1 short", 1));
        expect(c, "3", text("a3 second", 2));
        gone(c, "2");
        expect(c, "4", text("a4", 5));
        check("mixed bulk");

        // written without the pipeline: no summary, so no chunks
        call("PUT", "/lc-a/_doc/4?pipeline=_none&refresh=true", body(text("a4 plain", 2)));
        gone(c, "4");
        check("an index request that ran no pipeline");

        call("DELETE", "/lc-a/_doc/3?refresh=true");
        gone(c, "3");
        check("document delete");
        assertReconcileClean("lc-a");

        call("DELETE", "/lc-a");
        assertFalse("the chunk index goes with its source index", indexExists(c));
        oracle.remove(c);
    }

    /**
     * A change stream batched into bulks (as connectors and CDC sinks send it): several writes, updates and deletes of one
     * document in one bulk, the first bulk into an index whose chunk index it creates. A delete after a write in the first
     * bulk left the written chunks (the new chunk index was not yet registered when the delete was planned), and an update
     * after a write failed its item with a 400 and left the document's summary and chunks of two different texts (the
     * bulk's record of the written text refused the summary the update stored). Random sequences, three bulks.
     */
    public void testAChangeStreamBatch_writesUpdatesAndDeletesOfOneDocumentInOneBulk() throws Exception {
        pipeline("lc-cdc", "body", "lc-cdc-chunks");
        String c = "lc-cdc-chunks";
        Map<String, String> state = new TreeMap<>();
        for (int round = 0; round < 3; round++) {
            List<String> lines = new ArrayList<>();
            for (int doc = 0; doc < 8; doc++) {
                String id = "d" + doc;
                int ops = 1 + random().nextInt(4);
                for (int op = 0; op < ops; op++) {
                    String text = text("r" + round + " d" + doc + " op" + op, 1 + random().nextInt(4));
                    int kind = random().nextInt(3);
                    if (kind == 0 || (kind == 1 && !state.containsKey(id))) {
                        lines.add(action("index", "lc-cdc", id));
                        lines.add(body(text));
                        state.put(id, text);
                    } else if (kind == 1) {
                        lines.add(action("update", "lc-cdc", id));
                        lines.add(json(Map.of("doc", Map.of("body", text))));
                        state.put(id, text);
                    } else {
                        lines.add(action("delete", "lc-cdc", id));
                        state.remove(id);
                    }
                }
            }
            bulkOk("&pipeline=lc-cdc", lines.toArray(String[]::new));
            for (int doc = 0; doc < 8; doc++) {
                String id = "d" + doc;
                if (state.containsKey(id)) {
                    expect(c, id, state.get(id));
                } else {
                    gone(c, id);
                }
            }
            check("change-stream bulk " + round + ": " + lines);
        }
        assertReconcileClean("lc-cdc");
    }

    /**
     * A processor with an {@code if} condition (only public documents chunked, so only they are retrievable): an update
     * that makes a document fail the condition removes its chunks, as a write of it through the pipeline would skip the
     * processor. It used to keep them — the stored summary carried over, and the node re-chunked from it — so a document
     * made private stayed retrievable. With the index's default pipeline (which OpenSearch 3.4 runs on updates) and with a
     * pipeline named per request (which updates do not run), single and in a bulk, with the condition's parameters.
     */
    public void testAConditionalProcessor_anUpdateThatFailsTheCondition_removesTheChunks() throws Exception {
        String processor = "\"field\": \"body\", \"target_index\": \"{{_index}}-chunks\", " + CHUNKING;
        putPipeline("lc-if", "{\"if\": {\"source\": \"ctx.visibility == params.shown\", \"params\": {\"shown\": \"public\"}}, "
            + processor + "}");
        call("PUT", "/lc-if-default", "{\"settings\": {\"index.default_pipeline\": \"lc-if\"}}");
        for (String index : List.of("lc-if-default", "lc-if-request")) {
            String c = index + "-chunks";
            String param = index.endsWith("request") ? "&pipeline=lc-if" : "";
            bulkOk(param, action("index", index, "a"), json(Map.of("body", text("a", 3), "visibility", "public")),
                action("index", index, "b"), json(Map.of("body", text("b", 2), "visibility", "private")),
                action("index", index, "c"), json(Map.of("body", text("c", 2), "visibility", "public")));
            expect(c, "a", text("a", 3));
            expect(c, "c", text("c", 2));
            check(index + ": written");

            update("/" + index + "/_update/a?refresh=true", "{\"doc\": {\"visibility\": \"private\"}}");
            bulkOk(param, action("update", index, "c"), "{\"doc\": {\"visibility\": \"private\", \"body\": \"" + text("c2", 2) + "\"}}");
            gone(c, "a");
            gone(c, "c");
            check(index + ": made private");
            assertNull("no summary left", ((Map<String, Object>) call("GET", "/" + index + "/_doc/a").get("_source")).get("strata"));

            if (index.endsWith("default")) {
                // the default pipeline runs on the updated document: made public, it is chunked
                update("/" + index + "/_update/b?refresh=true", "{\"doc\": {\"visibility\": \"public\"}}");
                expect(c, "b", text("b", 2));
                check(index + ": made public");
            }
            assertReconcileClean(index);
        }
    }

    // ---- updates

    public void testUpdates_partialScriptUpsertAndScriptedDelete_withAndWithoutADefaultPipeline() throws Exception {
        pipeline("lc-u", "body", "{{_index}}-chunks");
        // one index whose pipeline is its default, one written with ?pipeline= only
        call("PUT", "/lc-u-default", "{\"settings\": {\"index.default_pipeline\": \"lc-u\"}}");
        for (String index : List.of("lc-u-default", "lc-u-param")) {
            String c = index + "-chunks";
            String pipe = index.equals("lc-u-param") ? "?pipeline=lc-u&refresh=true" : "?refresh=true";
            call("PUT", "/" + index + "/_doc/1" + pipe, json(Map.of("body", text("u1", 2), "title", "one")));
            expect(c, "1", text("u1", 2));
            check(index + ": indexed");

            update("/" + index + "/_update/1?refresh=true", json(Map.of("doc", Map.of("body", text("u1 partial", 4)))));
            expect(c, "1", text("u1 partial", 4));
            check(index + ": partial update of the text");

            update("/" + index + "/_update/1?refresh=true", json(Map.of("doc", Map.of("title", "uno"))));
            check(index + ": partial update of another field");

            update("/" + index + "/_update/1?refresh=true", json(Map.of("script",
                Map.of("source", "ctx._source.body = params.b", "params", Map.of("b", text("u1 script", 1))))));
            expect(c, "1", text("u1 script", 1));
            check(index + ": scripted update");

            // upsert of a new document runs the index's default pipeline on the upsert document (none for lc-u-param)
            update("/" + index + "/_update/2?refresh=true", json(Map.of("doc", Map.of("title", "x"),
                "upsert", Map.of("body", text("u2 upsert", 3)))));
            if (index.equals("lc-u-default")) {
                expect(c, "2", text("u2 upsert", 3));
            }
            check(index + ": upsert");

            // the same in a _bulk: a partial update and a script
            bulkOk("", json(Map.of("update", Map.of("_index", index, "_id", "1"))),
                json(Map.of("doc", Map.of("body", text("u1 bulk", 3)))),
                json(Map.of("update", Map.of("_index", index, "_id", "1"))),
                json(Map.of("script", Map.of("source", "ctx._source.body = ctx._source.body + ' Then it rained.'"))));
            expect(c, "1", text("u1 bulk", 3) + " Then it rained.");
            check(index + ": updates in a bulk");

            update("/" + index + "/_update/1?refresh=true", json(Map.of("script", Map.of("source", "ctx.op = 'delete'"))));
            gone(c, "1");
            check(index + ": scripted delete");
            assertReconcileClean(index);
        }
    }

    /** {@code method path} answered with an error status (warnings allowed): the status and the body. */
    private static ResponseException failing(String method, String path, String body) {
        Request request = new Request(method, path);
        if (body != null) {
            request.setJsonEntity(body);
        }
        RequestOptions.Builder options = RequestOptions.DEFAULT.toBuilder();
        options.setWarningsHandler(WarningsHandler.PERMISSIVE);
        request.setOptions(options);
        return expectThrows(ResponseException.class, () -> client().performRequest(request));
    }

    private static void writeBlock(String index, boolean on) throws IOException {
        call("PUT", "/" + index + "/_settings", "{\"index.blocks.write\": " + on + "}");
    }

    /**
     * A client that retries a write whose chunks failed (an error, a lost connection) resends the same request: the update
     * is then a noop and the delete finds nothing, yet the chunks are still those the first attempt could not replace.
     */
    public void testARetriedUpdate_afterTheFirstAttemptsChunksFailed_bringsThemInStep() throws Exception {
        pipeline("lc-r", "body", "{{_index}}-chunks");
        call("PUT", "/lc-r", "{\"settings\": {\"index.default_pipeline\": \"lc-r\"}}");
        String c = "lc-r-chunks";
        call("PUT", "/lc-r/_doc/1?refresh=true", body(text("r1", 3)));
        expect(c, "1", text("r1", 3));
        check("indexed");

        String partial = json(Map.of("doc", Map.of("body", text("r1 retried", 5)), "doc_as_upsert", true));
        // chunk documents (each with nested children; not the processor's write check, an empty document) are refused
        call("PUT", "/" + c + "/_settings", "{\"index.mapping.nested_objects.limit\": 1}");
        ResponseException first = failing("POST", "/lc-r/_update/1?refresh=true", partial);
        String answer = org.apache.hc.core5.http.io.entity.EntityUtils.toString(first.getResponse().getEntity());
        assertTrue(answer, answer.contains("_reconcile"));
        call("PUT", "/" + c + "/_settings", "{\"index.mapping.nested_objects.limit\": null}");
        Request retry = new Request("POST", "/lc-r/_update/1?refresh=true");
        retry.setJsonEntity(partial);
        RequestOptions.Builder options = RequestOptions.DEFAULT.toBuilder();
        options.setWarningsHandler(WarningsHandler.PERMISSIVE);
        retry.setOptions(options);
        assertEquals("noop", entityAsMap(client().performRequest(retry)).get("result"));
        expect(c, "1", text("r1 retried", 5));
        check("a retried update answered noop");
        assertReconcileClean("lc-r");
    }

    public void testARetriedDelete_afterTheFirstAttemptsChunkDeleteFailed_removesTheChunks() throws Exception {
        pipeline("lc-rd", "body", "lc-rd-chunks");
        String c = "lc-rd-chunks";
        call("PUT", "/lc-rd/_doc/1?pipeline=lc-rd&refresh=true", body(text("rd1", 3)));
        call("PUT", "/lc-rd/_doc/2?pipeline=lc-rd&refresh=true", body(text("rd2", 2)));
        expect(c, "1", text("rd1", 3));
        expect(c, "2", text("rd2", 2));
        check("indexed");

        writeBlock(c, true);
        failing("DELETE", "/lc-rd/_doc/1?refresh=true", null);
        writeBlock(c, false);
        ResponseException again = failing("DELETE", "/lc-rd/_doc/1?refresh=true", null);
        assertEquals(404, again.getResponse().getStatusLine().getStatusCode());
        gone(c, "1");
        check("a retried delete answered not_found");
        assertReconcileClean("lc-rd");
    }

    // ---- by query and reindex

    public void testUpdateByQuery_deleteByQuery_andReindexIntoAPipedIndex() throws Exception {
        pipeline("lc-q", "body", "{{_index}}-chunks");
        call("PUT", "/lc-q", "{\"settings\": {\"index.default_pipeline\": \"lc-q\"}}");
        for (int i = 1; i <= 6; i++) {
            call("PUT", "/lc-q/_doc/" + i, json(Map.of("body", text("q" + i, 1 + i % 3), "n", i)));
            expect("lc-q-chunks", String.valueOf(i), text("q" + i, 1 + i % 3));
        }
        refresh("lc-q");
        check("indexed");

        call("POST", "/lc-q/_update_by_query?refresh=true", json(Map.of("query", Map.of("range", Map.of("n", Map.of("lte", 3))),
            "script", Map.of("source", "ctx._source.body = ctx._source.body + ' And again.'"))));
        for (int i = 1; i <= 3; i++) {
            expect("lc-q-chunks", String.valueOf(i), text("q" + i, 1 + i % 3) + " And again.");
        }
        check("_update_by_query");

        call("POST", "/lc-q/_delete_by_query?refresh=true", json(Map.of("query", Map.of("range", Map.of("n", Map.of("gte", 5))))));
        gone("lc-q-chunks", "5");
        gone("lc-q-chunks", "6");
        check("_delete_by_query");

        // _reindex into an index whose default pipeline chunks into its own chunk index
        call("PUT", "/lc-q-copy", "{\"settings\": {\"index.default_pipeline\": \"lc-q\"}}");
        call("POST", "/_reindex?refresh=true", json(Map.of("source", Map.of("index", "lc-q"), "dest", Map.of("index", "lc-q-copy"))));
        for (var doc : oracle.get("lc-q-chunks").entrySet()) {
            expect("lc-q-copy-chunks", doc.getKey(), doc.getValue());
        }
        check("_reindex");
        assertReconcileClean("lc-q");
        assertReconcileClean("lc-q-copy");

        call("DELETE", "/lc-q-copy");
        assertFalse(indexExists("lc-q-copy-chunks"));
        assertTrue(indexExists("lc-q-chunks"));
        oracle.remove("lc-q-copy-chunks");
        check("the copy deleted");
    }

    // ---- aliases, rollover, alias swap

    public void testWriteAliasRolloverAndSwap_withATemplatedTargetIndex() throws Exception {
        pipeline("lc-r", "body", "{{_index}}-chunks");
        call("PUT", "/lc-r-000001", "{\"settings\": {\"index.default_pipeline\": \"lc-r\"}, "
            + "\"aliases\": {\"lc-r\": {\"is_write_index\": true}}}");
        call("PUT", "/lc-r/_doc/a?refresh=true", body(text("ra", 2)));
        call("PUT", "/lc-r/_doc/b?refresh=true", body(text("rb", 3)));
        expect("lc-r-000001-chunks", "a", text("ra", 2));
        expect("lc-r-000001-chunks", "b", text("rb", 3));
        check("through the write alias");
        Map<String, Object> chunk = (Map<String, Object>) call("GET", "/lc-r-000001-chunks/_doc/a:0").get("_source");
        assertEquals("chunks name the concrete index", "lc-r-000001", chunk.get("source_index"));

        call("DELETE", "/lc-r/_doc/a?refresh=true");
        gone("lc-r-000001-chunks", "a");
        check("deleted through the write alias");

        // rollover: the new write index gets its own chunk index, the old one keeps its chunks
        call("PUT", "/lc-r-000002", "{\"settings\": {\"index.default_pipeline\": \"lc-r\"}}");
        call("POST", "/_aliases", "{\"actions\": [{\"add\": {\"index\": \"lc-r-000001\", \"alias\": \"lc-r\", \"is_write_index\": false}},"
            + " {\"add\": {\"index\": \"lc-r-000002\", \"alias\": \"lc-r\", \"is_write_index\": true}}]}");
        bulkOk("", action("index", "lc-r", "c"), body(text("rc", 1)), action("index", "lc-r", "b"), body(text("rb new", 2)));
        expect("lc-r-000002-chunks", "c", text("rc", 1));
        expect("lc-r-000002-chunks", "b", text("rb new", 2)); // b now also in the new index: its own chunks there
        check("after the rollover");

        call("POST", "/lc-r/_rollover", "{\"settings\": {\"index.default_pipeline\": \"lc-r\"}}");
        call("PUT", "/lc-r/_doc/d?refresh=true", body(text("rd", 2)));
        expect("lc-r-000003-chunks", "d", text("rd", 2));
        check("after _rollover");

        // alias swap: the alias moves wholly to another index
        call("PUT", "/lc-r-swap", "{\"settings\": {\"index.default_pipeline\": \"lc-r\"}}");
        call("POST", "/_aliases", "{\"actions\": [{\"remove\": {\"index\": \"lc-r-*\", \"alias\": \"lc-r\"}},"
            + " {\"add\": {\"index\": \"lc-r-swap\", \"alias\": \"lc-r\", \"is_write_index\": true}}]}");
        call("PUT", "/lc-r/_doc/e?refresh=true", body(text("re", 1)));
        expect("lc-r-swap-chunks", "e", text("re", 1));
        check("after the swap");
        for (String index : List.of("lc-r-000001", "lc-r-000002", "lc-r-000003", "lc-r-swap")) {
            assertReconcileClean(index);
        }

        call("DELETE", "/lc-r-000001");
        assertFalse(indexExists("lc-r-000001-chunks"));
        oracle.remove("lc-r-000001-chunks");
        check("the first index deleted");
    }

    public void testAFixedTargetIndexWrittenFromTwoConcreteIndices_failsTheItemSuggestingTheTemplate() throws Exception {
        pipeline("lc-f", "body", "lc-f-chunks");
        call("PUT", "/lc-f-1/_doc/a?pipeline=lc-f&refresh=true", body(text("fa", 2)));
        expect("lc-f-chunks", "a", text("fa", 2));
        ResponseException e = callFailing("PUT", "/lc-f-2/_doc/b?pipeline=lc-f&refresh=true", body(text("fb", 2)));
        assertEquals(400, e.getResponse().getStatusLine().getStatusCode());
        assertTrue(e.getMessage(), e.getMessage().contains("[target_index] [lc-f-chunks] already holds the chunks of index [lc-f-1]"));
        assertTrue(e.getMessage(), e.getMessage().contains("{{_index}}-chunks"));
        assertFalse("nothing written", indexExists("lc-f-2"));
        check("refused");
    }

    // ---- routing, object and dotted paths, final pipeline

    public void testCustomRouting_objectAndDottedFields_andAFinalPipeline() throws Exception {
        pipeline("lc-o", "doc.body", "{{_index}}-chunks");
        call("PUT", "/lc-o", "{\"settings\": {\"number_of_shards\": 3, \"index.final_pipeline\": \"lc-o\"}}");
        String c = "lc-o-chunks";
        call("PUT", "/lc-o/_doc/1?routing=r1&refresh=true", json(Map.of("doc", Map.of("body", text("o1", 3)))));
        call("PUT", "/lc-o/_doc/2?routing=r2&refresh=true", json(Map.of("doc.body", text("o2", 2)))); // a dotted key
        call("PUT", "/lc-o/_doc/3?refresh=true", json(Map.of("doc", Map.of("body", text("o3", 1), "tags", List.of("x")))));
        expect(c, "1", text("o1", 3));
        expect(c, "2", text("o2", 2));
        expect(c, "3", text("o3", 1));
        check("routed, object and dotted");

        update("/lc-o/_update/1?routing=r1&refresh=true", json(Map.of("doc", Map.of("doc", Map.of("body", text("o1 new", 1))))));
        expect(c, "1", text("o1 new", 1));
        bulkOk("", json(Map.of("update", Map.of("_index", "lc-o", "_id", "2", "routing", "r2"))),
            json(Map.of("script", Map.of("source", "ctx._source['doc.body'] = params.b", "params", Map.of("b", text("o2 new", 4))))));
        expect(c, "2", text("o2 new", 4));
        check("routed updates");
        assertReconcileClean("lc-o");

        call("DELETE", "/lc-o/_doc/2?routing=r2&refresh=true");
        gone(c, "2");
        check("routed delete");
        assertReconcileClean("lc-o");
    }

    public void testATextKeptOutOfSource_isRefusedAtTheFirstWrite_withNothingWritten() throws Exception {
        pipeline("lc-x", "body", "lc-x-chunks");
        call("PUT", "/lc-x", "{\"mappings\": {\"_source\": {\"excludes\": [\"body\"]}}}");
        ResponseException e = callFailing("PUT", "/lc-x/_doc/1?pipeline=lc-x&refresh=true", body(text("x", 2)));
        assertEquals(400, e.getResponse().getStatusLine().getStatusCode());
        assertTrue(e.getMessage(), e.getMessage().contains("field [body] is kept out of [_source] in index [lc-x]"));
        assertEquals(0, count("lc-x"));
        assertFalse(indexExists("lc-x-chunks"));
    }
}

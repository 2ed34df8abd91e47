package io.strata.it;

import org.opensearch.client.Request;
import org.opensearch.client.ResponseException;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The caller-view check of {@code _reconcile} and {@code _rebuild} (its 403 when document- or field-level security hides
 * part of the source) compares the caller's counts with the node's. On a plain cluster, with writes and deletes running
 * and each shard copy refreshing on its own schedule, the two can disagree for an instant: that must never be taken for a
 * restriction. Oracle: a plain cluster restricts nobody, so every call answers 200.
 */
public class CallerViewUnderWritesIT extends StrataRestTestCase {
    private static final String SOURCE = "cvw-src";

    private static String text(int doc) {
        return ("Document " + doc + " tells of Highbury and Hartfield, of Mr. Knightley's walks and of the weather in Surrey. ")
            .repeat(3).strip();
    }

    public void testReconcileDuringWritesAndDeletes_onAPlainClusterIsNeverRefusedAsRestricted() throws Exception {
        int nodes = ((Map<?, ?>) call("GET", "/_nodes/_all/none").get("nodes")).size();
        // replicas refresh on their own schedule: a search may read a copy a refresh behind the primary the node counts
        call("PUT", "/" + SOURCE, "{\"settings\": {\"number_of_shards\": 2, \"number_of_replicas\": " + Math.min(1, nodes - 1)
            + ", \"refresh_interval\": \"200ms\"}}");
        call("GET", "/_cluster/health/" + SOURCE + "?wait_for_status=" + (nodes > 1 ? "green" : "yellow") + "&timeout=60s");
        putPipeline("cvw", "{\"field\": \"body\", \"target_index\": \"" + SOURCE + "-chunks\", \"embed\": false, "
            + "\"strategy\": {\"type\": \"recursive\", \"max_words\": 20}, \"granularities\": [0.5]}");
        call("PUT", "/" + SOURCE + "/_settings", "{\"index.default_pipeline\": \"cvw\"}");

        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<Exception> writerFailure = new AtomicReference<>();
        Thread writer = new Thread(() -> {
            int next = 0;
            try {
                while (!stop.get()) {
                    StringBuilder body = new StringBuilder();
                    for (int i = 0; i < 5; i++, next++) {
                        body.append(json(Map.of("index", Map.of("_index", SOURCE, "_id", "d" + next)))).append('\n');
                        body.append(json(Map.of("body", text(next)))).append('\n');
                        if (next >= 10 && next % 2 == 0) {
                            body.append(json(Map.of("delete", Map.of("_index", SOURCE, "_id", "d" + (next - 10))))).append('\n');
                        }
                    }
                    Request bulk = new Request("POST", "/_bulk"); // no refresh: each copy refreshes on its own
                    bulk.setJsonEntity(body.toString());
                    client().performRequest(bulk);
                }
            } catch (Exception e) {
                writerFailure.set(e);
            }
        }, "cvw-writer");
        writer.start();
        List<String> refused = new ArrayList<>();
        int calls = 0;
        try {
            Thread.sleep(1000);
            for (; calls < 25; calls++) {
                try {
                    call("POST", "/_plugins/_strata/_reconcile?index=" + SOURCE + "&dry_run=true");
                } catch (ResponseException e) {
                    refused.add(e.getResponse().getStatusLine().getStatusCode() + " " + e.getMessage());
                }
            }
        } finally {
            stop.set(true);
            writer.join(30_000);
        }
        assertNull("the writer failed: " + writerFailure.get(), writerFailure.get());
        assertEquals("no call refused on a plain cluster (" + calls + " calls during writes): " + refused, List.of(), refused);
    }
}

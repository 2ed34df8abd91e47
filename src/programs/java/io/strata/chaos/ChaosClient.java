package io.strata.chaos;

import io.strata.demo.Connection;
import io.strata.demo.JsonRest;
import org.apache.hc.core5.util.Timeout;
import org.opensearch.client.Request;
import org.opensearch.client.Response;
import org.opensearch.client.ResponseException;
import org.opensearch.client.RestClient;
import org.opensearch.common.xcontent.XContentHelper;
import org.opensearch.core.common.bytes.BytesArray;
import org.opensearch.core.xcontent.MediaTypeRegistry;

import java.io.Closeable;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The chaos runs' client, behaving like a real one: requests go round-robin over all nodes, a connection failure moves on
 * to the next node, and requests or bulk items failing with 429 or 5xx (node gone, shard unavailable, back-pressure) are
 * sent again, with back-off, until acknowledged. A whole bulk whose connection died is resent: every item has an explicit
 * {@code _id}, so resending an index or delete is idempotent. Also kills and restarts nodes ({@code bin/strata-node}).
 */
final class ChaosClient implements Closeable {
    final List<RestClient> clients = new ArrayList<>();
    private final AtomicInteger next = new AtomicInteger();
    private final String name;
    final AtomicLong connRetries = new AtomicLong();
    final AtomicLong requestRetries = new AtomicLong();
    final AtomicLong itemRetries = new AtomicLong();
    final AtomicLong errors = new AtomicLong();
    final Map<String, AtomicLong> retryReasons = new ConcurrentHashMap<>();
    final List<String> errorSamples = Collections.synchronizedList(new ArrayList<>());
    /** Per document id, what each write of it was answered, in order (for the post-mortem of a drifted document). */
    final Map<String, List<String>> history = new ConcurrentHashMap<>();

    private void record(String id, String what) {
        history.computeIfAbsent(id, k -> Collections.synchronizedList(new ArrayList<>())).add(what);
    }

    /** The answer to one write, as the history keeps it. */
    @SuppressWarnings("unchecked")
    private void recordAnswer(String op, Map<String, Object> item, int attempt) {
        Object error = item.get("error");
        record(String.valueOf(item.get("_id")), String.format(java.util.Locale.ROOT, "%s %s %s [%s] _seq_no %s%s%s", op, item.get("status"),
            item.get("result"), item.get("_index"), item.get("_seq_no"), attempt > 0 ? " (attempt " + (attempt + 1) + ")" : "",
            error instanceof Map<?, ?> m ? " " + ((Map<String, Object>) m).get("type") + ": " + ((Map<String, Object>) m).get("reason") : ""));
    }
    final AtomicInteger kills = new AtomicInteger();

    ChaosClient(String name, List<String> nodes) {
        this.name = name;
        for (String node : nodes) {
            clients.add(Connection.builder(node)
                .setRequestConfigCallback(c -> c.setConnectTimeout(Timeout.ofSeconds(3)).setResponseTimeout(Timeout.ofSeconds(90)))
                .build());
        }
    }

    void node(String verb, int i) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("bin/strata-node", verb, "--name", name, "--node", Integer.toString(i)).inheritIO().start();
        if (p.waitFor() != 0) {
            throw new IllegalStateException("bin/strata-node " + verb + " --node " + i + " failed");
        }
    }

    /** Kills node {@code i} with SIGKILL, restarts it 1–4 s later; returns the seconds from the kill until it is back. */
    double killAndRestart(int i, java.util.SplittableRandom random) throws IOException, InterruptedException {
        long k0 = System.nanoTime();
        node("kill", i);
        kills.incrementAndGet();
        Thread.sleep(1000 + random.nextInt(3000));
        node("restart", i);
        return (System.nanoTime() - k0) / 1e9;
    }

    private void retryReason(String reason) {
        retryReasons.computeIfAbsent(reason, k -> new AtomicLong()).incrementAndGet();
    }

    /** One request, round-robin over the nodes; connection failures and 429/5xx answers are retried (bounded). */
    Response send(String method, String path, String body) throws IOException, InterruptedException {
        IOException last = null;
        for (int attempt = 0; attempt < 120; attempt++) {
            RestClient c = clients.get(Math.floorMod(next.getAndIncrement(), clients.size()));
            Request request = new Request(method, path);
            if (body != null) {
                request.setEntity(new org.apache.hc.core5.http.io.entity.StringEntity(body,
                    org.apache.hc.core5.http.ContentType.create(path.contains("_bulk") ? "application/x-ndjson" : "application/json")));
            }
            try {
                return c.performRequest(request);
            } catch (ResponseException e) {
                int status = e.getResponse().getStatusLine().getStatusCode();
                if (status == 404 && "DELETE".equals(method)) {
                    return e.getResponse(); // already gone: what a delete wants
                }
                // a version conflict of an update (another writer of the same document first) is retried like a real client would
                boolean conflict = status == 409 && path.contains("/_update/");
                if (status != 429 && status < 500 && !conflict) {
                    throw e;
                }
                requestRetries.incrementAndGet();
                retryReason("request_" + status);
                last = e;
            } catch (IOException e) {
                connRetries.incrementAndGet();
                retryReason("connection");
                last = e;
            }
            Thread.sleep(Math.min(2000, 100L << Math.min(attempt, 5)));
        }
        throw last;
    }

    Map<String, Object> call(String method, String path, String body) throws IOException {
        try {
            Response r = send(method, path, body);
            return XContentHelper.convertToMap(new BytesArray(r.getEntity().getContent().readAllBytes()), true, MediaTypeRegistry.JSON).v2();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }

    /** A single request; a refusal other than 429/5xx (and 404 for a delete) counts as an error. */
    void single(String method, String path, String body) throws IOException, InterruptedException {
        try {
            Response r = send(method, path, body);
            Map<String, Object> answer = XContentHelper.convertToMap(new BytesArray(r.getEntity().getContent().readAllBytes()), true,
                MediaTypeRegistry.JSON).v2();
            answer.put("status", r.getStatusLine().getStatusCode());
            recordAnswer(method + " " + path.replaceAll("\\?.*", ""), answer, 0);
        } catch (ResponseException e) {
            errors.incrementAndGet();
            errorSamples.add(method + " " + path + ": " + e.getMessage());
        }
    }

    /** Sends NDJSON bulk lines (action + optional source), resending the items that fail with 429/5xx until acknowledged. */
    @SuppressWarnings("unchecked")
    void bulk(String path, String ndjson) throws IOException, InterruptedException {
        List<String> items = new ArrayList<>();
        String[] lines = ndjson.split("\n");
        for (int i = 0; i < lines.length; i++) {
            boolean delete = lines[i].startsWith("{\"delete\"");
            items.add(delete ? lines[i] + "\n" : lines[i] + "\n" + lines[++i] + "\n");
        }
        for (int attempt = 0; !items.isEmpty(); attempt++) {
            if (attempt == 60) {
                errors.addAndGet(items.size());
                errorSamples.add("gave up on " + items.size() + " items after 60 attempts");
                return;
            }
            if (attempt > 0) {
                Thread.sleep(Math.min(2000, 100L << Math.min(attempt, 5)));
            }
            Map<String, Object> r;
            try {
                r = call("POST", path, String.join("", items));
            } catch (ResponseException e) {
                errors.addAndGet(items.size());
                errorSamples.add("bulk: " + e.getMessage());
                return;
            }
            List<Map<String, Object>> answers = (List<Map<String, Object>>) r.get("items");
            List<String> retry = new ArrayList<>();
            for (int i = 0; i < answers.size(); i++) {
                Map<String, Object> item = (Map<String, Object>) answers.get(i).values().iterator().next();
                int status = ((Number) item.get("status")).intValue();
                recordAnswer("bulk " + answers.get(i).keySet().iterator().next(), item, attempt);
                if (status < 300 || (status == 404 && answers.get(i).containsKey("delete"))) {
                    continue;
                }
                if (status == 429 || status >= 500 || (status == 409 && answers.get(i).containsKey("update"))) {
                    itemRetries.incrementAndGet();
                    Object err = item.get("error");
                    retryReason("item_" + status + (err instanceof Map<?, ?> m ? "_" + m.get("type") : ""));
                    retry.add(items.get(i));
                } else {
                    errors.incrementAndGet();
                    errorSamples.add(item.get("_id") + ": " + status + " " + item.get("error"));
                }
            }
            items = retry;
        }
    }

    @SuppressWarnings("unchecked")
    List<Map<String, Object>> scrollAll(String index, String body) throws IOException {
        List<Map<String, Object>> hits = new ArrayList<>();
        Map<String, Object> r = call("POST", "/" + index + "/_search?scroll=2m", body);
        while (true) {
            List<Map<String, Object>> page = (List<Map<String, Object>>) ((Map<String, Object>) r.get("hits")).get("hits");
            if (page.isEmpty()) {
                break;
            }
            hits.addAll(page);
            r = call("POST", "/_search/scroll", JsonRest.json(Map.of("scroll", "2m", "scroll_id", r.get("_scroll_id"))));
        }
        call("DELETE", "/_search/scroll", JsonRest.json(Map.of("scroll_id", r.get("_scroll_id"))));
        return hits;
    }

    /** Counts of retries, as the runs report them. */
    String retries() {
        return String.format(java.util.Locale.ROOT, "retries %d (connection %d, request %d, item %d) %s",
            connRetries.get() + requestRetries.get() + itemRetries.get(), connRetries.get(), requestRetries.get(), itemRetries.get(),
            retryReasons);
    }

    @Override
    public void close() throws IOException {
        for (RestClient c : clients) {
            c.close();
        }
    }
}

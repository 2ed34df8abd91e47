package io.strata.demo;

import io.strata.chunking.TestTexts;
import org.apache.hc.core5.http.HttpHost;
import org.opensearch.client.Request;
import org.opensearch.client.Response;
import org.opensearch.client.RestClient;
import org.opensearch.common.xcontent.XContentFactory;
import org.opensearch.common.xcontent.XContentHelper;
import org.opensearch.common.xcontent.json.JsonXContent;
import org.opensearch.core.common.bytes.BytesArray;
import org.opensearch.core.common.bytes.BytesReference;
import org.opensearch.core.xcontent.MediaTypeRegistry;

import java.io.IOException;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What {@code bin/strata-demo} shows on the running node: a chunking pipeline, the first chapters of
 * Emma ingested through it, the chunk documents per level, and a search that scores each parent by its
 * best child (the {@code multi_granular} query arrives with the query issue; this uses the same nested
 * MAX semantics with BM25).
 */
public final class Demo {
    public static void main(String[] args) throws Exception {
        String url = args.length > 0 ? args[0] : "http://127.0.0.1:9200";
        try (RestClient client = RestClient.builder(HttpHost.create(url)).build()) {
            new Demo(client).run();
        }
    }

    private final RestClient client;

    private Demo(RestClient client) {
        this.client = client;
    }

    private void run() throws IOException {
        call("DELETE", "/emma?ignore_unavailable=true", null);
        call("DELETE", "/emma-chunks?ignore_unavailable=true", null);
        String pipeline = """
            {"description": "Emma: recursive parents of 200 words, children of 100 and 50 words",
             "processors": [{"multi_granular_chunking": {"field": "body", "target_index": "emma-chunks",
               "strategy": {"type": "recursive", "max_words": 200}, "granularities": [0.5, 0.25], "copy_fields": ["title"]}}]}""";
        section("PUT _ingest/pipeline/emma-chunking", pipeline);
        call("PUT", "/_ingest/pipeline/emma-chunking", pipeline);

        StringBuilder bulk = new StringBuilder();
        int n = 0;
        for (String chapter : TestTexts.emma().split("(?m)(?=^(?:VOLUME [IVX]+\\. )?CHAPTER [IVX]+$)")) {
            String title = chapter.substring(0, chapter.indexOf('\n')).strip();
            String body = chapter.substring(chapter.indexOf('\n')).strip();
            bulk.append(json(Map.of("index", Map.of("_index", "emma", "_id", "chapter-" + (++n))))).append('\n');
            bulk.append(json(Map.of("title", title, "body", body))).append('\n');
        }
        section("POST _bulk?pipeline=emma-chunking", n + " chapters of Emma (" + TestTexts.emma().length() + " characters)");
        long start = System.nanoTime();
        Map<String, Object> r = call("POST", "/_bulk?pipeline=emma-chunking&refresh=true", bulk.toString());
        System.out.printf(Locale.ROOT, "errors: %s, took %d ms%n", r.get("errors"), (System.nanoTime() - start) / 1_000_000);
        call("POST", "/emma-chunks/_refresh", null);

        section("GET emma/_doc/chapter-1 (the source keeps its fields and gains a summary)", null);
        Map<String, Object> source = get(call("GET", "/emma/_doc/chapter-1?_source_excludes=body", null), "_source");
        System.out.println(json(source));

        section("chunk documents in emma-chunks, per level (level 0 = parents)", null);
        Map<String, Object> agg = call("POST", "/emma-chunks/_search", """
            {"size": 0, "aggs": {"children": {"nested": {"path": "children"},
              "aggs": {"levels": {"terms": {"field": "children.level"}}}}}}""");
        System.out.printf(Locale.ROOT, "level 0: %s parents%n", get(get(agg, "hits"), "total").get("value"));
        for (Object bucket : (List<?>) get(get(get(agg, "aggregations"), "children"), "levels").get("buckets")) {
            Map<?, ?> b = (Map<?, ?>) bucket;
            System.out.printf(Locale.ROOT, "level %s: %s children%n", b.get("key"), b.get("doc_count"));
        }

        String question = "Why does Mr. Woodhouse feel fortunate for thinking of Hannah?";
        section("search: each parent scored by the MAX over itself and its children", question);
        Map<String, Object> hits = call("POST", "/emma-chunks/_search", """
            {"size": 3, "_source": ["title", "ordinal", "start", "end"],
             "query": {"dis_max": {"queries": [
               {"match": {"text": %1$s}},
               {"nested": {"path": "children", "score_mode": "max", "query": {"match": {"children.text": %1$s}},
                 "inner_hits": {"size": 1, "_source": ["children.level", "children.text"]}}}]}}}""".formatted(quote(question)));
        for (Object hit : (List<?>) get(hits, "hits").get("hits")) {
            Map<String, Object> h = cast(hit);
            Map<String, Object> s = get(h, "_source");
            System.out.printf(Locale.ROOT, "%.2f  %s  %s parent %s [%s, %s)%n", ((Number) h.get("_score")).doubleValue(), h.get("_id"),
                s.get("title"), s.get("ordinal"), s.get("start"), s.get("end"));
            List<?> inner = (List<?>) get(get(get(h, "inner_hits"), "children"), "hits").get("hits");
            if (!inner.isEmpty()) {
                Map<String, Object> child = get(cast(inner.get(0)), "_source");
                String text = String.valueOf(child.get("text"));
                System.out.printf(Locale.ROOT, "      best child (level %s): %s%n", child.get("level"),
                    text.length() > 160 ? text.substring(0, 160) + "…" : text);
            }
        }
    }

    private Map<String, Object> call(String method, String path, String body) throws IOException {
        Request request = new Request(method, path);
        if (body != null) {
            request.setJsonEntity(body);
        }
        Response response = client.performRequest(request);
        byte[] bytes = response.getEntity().getContent().readAllBytes();
        return XContentHelper.convertToMap(new BytesArray(bytes), true, MediaTypeRegistry.JSON).v2();
    }

    private static void section(String title, String detail) {
        System.out.println();
        System.out.println("== " + title);
        if (detail != null) {
            System.out.println(detail);
        }
    }

    private static String json(Map<String, ?> map) throws IOException {
        return BytesReference.bytes(XContentFactory.jsonBuilder().map(map)).utf8ToString();
    }

    private static String quote(String s) throws IOException {
        return BytesReference.bytes(JsonXContent.contentBuilder().value(s)).utf8ToString();
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> cast(Object o) {
        return (Map<String, Object>) o;
    }

    private static Map<String, Object> get(Map<String, Object> map, String key) {
        return cast(map.get(key));
    }

}

package io.strata.demo;

import io.strata.chunking.TestTexts;
import org.apache.hc.core5.util.Timeout;
import org.opensearch.client.RestClient;
import org.opensearch.common.xcontent.json.JsonXContent;
import org.opensearch.core.common.bytes.BytesReference;

import java.io.IOException;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What {@code bin/strata-demo} shows on the running node: a chunking pipeline, the first chapters of
 * Emma ingested through it (chunked, embedded by the bundled model inside the node), the chunk documents
 * per level, and a {@code multi_granular} search that scores each parent by its best child.
 */
public final class Demo {
    public static void main(String[] args) throws Exception {
        String url = Connection.url(args.length > 0 ? args[0] : null, "http://127.0.0.1:9200");
        // embedding a few hundred chunks takes seconds on 2 idle cores, minutes on a busy machine: wait for it
        try (RestClient client = Connection.builder(url)
            .setRequestConfigCallback(c -> c.setResponseTimeout(Timeout.ofMinutes(10)))
            .build()) {
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
        double seconds = (System.nanoTime() - start) / 1e9;
        call("POST", "/emma-chunks/_refresh", null);
        int chunks = 0;
        for (int i = 1; i <= n; i++) {
            Map<String, Object> summary = get(get(call("GET", "/emma/_doc/chapter-" + i, null), "_source"), "strata");
            chunks += ((Number) summary.get("parents")).intValue() + ((Number) summary.get("children")).intValue();
        }
        System.out.printf(Locale.ROOT, "errors: %s; %.1f s: %.2f docs/s, %.1f chunks/s embedded and written (%d chunks)%n",
            r.get("errors"), seconds, n / seconds, chunks / seconds, chunks);

        section("GET emma/_doc/chapter-1 (the source keeps its fields and gains a summary)", null);
        Map<String, Object> source = get(call("GET", "/emma/_doc/chapter-1?_source_excludes=body", null), "_source");
        System.out.println(json(source));

        section("chunk documents in emma-chunks, per level (level 0 = parents)", null);
        Map<String, Object> agg = call("POST", "/emma-chunks/_search", """
            {"size": 0, "aggs": {"children": {"nested": {"path": "children"},
              "aggs": {"levels": {"terms": {"field": "children.level", "order": {"_key": "asc"}}}}}}}""");
        levelLines(agg).forEach(System.out::println);

        String question = "Why does Mr. Woodhouse feel fortunate for thinking of Hannah?";
        String query = """
            {"size": 3, "_source": ["title", "ordinal", "start", "end"],
             "query": {"multi_granular": {"query_text": %s, "k": 10, "explain_child": true}}}""".formatted(quote(question));
        section("POST emma-chunks/_search  (multi_granular, hybrid by default: each parent scored by the MAX over itself and its children,"
            + " dense and lexical, fused)", query);
        Map<String, Object> hits = call("POST", "/emma-chunks/_search", query);
        for (Object hit : (List<?>) get(hits, "hits").get("hits")) {
            Map<String, Object> h = cast(hit);
            Map<String, Object> s = get(h, "_source");
            System.out.printf(Locale.ROOT, "%.4f  %s  %s, parent %s, chars [%s, %s)%n", ((Number) h.get("_score")).doubleValue(),
                h.get("_id"), s.get("title"), s.get("ordinal"), s.get("start"), s.get("end"));
            Map<String, Object> best = cast(((List<?>) get(h, "fields").get("strata_best_child")).get(0));
            String text = String.valueOf(best.get("text"));
            System.out.printf(Locale.ROOT, "        matched on the %s side by level %s (dense %s, lexical %s): %s%n", best.get("side"),
                best.get("level"), sideScore(best.get("dense")), sideScore(best.get("lexical")),
                text.length() > 150 ? text.substring(0, 150) + "…" : text);
        }
        preview();
    }

    /** A model-guided strategy previewed on the same node: semantic breakpoints with the bundled model, and their evidence. */
    private void preview() throws IOException {
        String chapter = TestTexts.emma().split("(?m)(?=^(?:VOLUME [IVX]+\\. )?CHAPTER [IVX]+$)")[1];
        int end = chapter.indexOf("\n\n", Math.min(3000, chapter.length()));
        String text = chapter.substring(chapter.indexOf('\n'), end < 0 ? chapter.length() : end).strip();
        String body = "{\"text\": %s, \"strategy\": {\"type\": \"semantic\", \"max_words\": 150}, \"granularities\": []}"
            .formatted(quote(text));
        section("POST _plugins/_strata/_chunk  (preview a model-guided strategy: semantic breakpoints, nothing written)",
            "{\"text\": <" + text.length() + " characters of chapter 2>, \"strategy\": {\"type\": \"semantic\", \"max_words\": 150}}");
        Map<String, Object> r = call("POST", "/_plugins/_strata/_chunk", body);
        for (Object p : (List<?>) r.get("parents")) {
            Map<String, Object> parent = cast(p);
            String t = String.valueOf(parent.get("text"));
            System.out.printf(Locale.ROOT, "parent %s, %s words, chars [%s, %s): %s%n", parent.get("ordinal"), parent.get("words"),
                parent.get("start"), parent.get("end"), t.length() > 90 ? t.substring(0, 90) + "…" : t);
        }
        Map<String, Object> evidence = cast(((List<?>) r.get("evidence")).get(0));
        System.out.printf(Locale.ROOT, "evidence: %s between neighbouring sentences, breakpoints above %.3f; took %s ms%n",
            evidence.get("signal"), ((Number) evidence.get("threshold")).doubleValue(), r.get("took_ms"));
    }

    /**
     * The chunk documents per level, level 0 (the parents: the hits) first, then the children's levels in order, from a
     * search with a terms aggregation {@code levels} on {@code children.level} inside a nested {@code children}.
     */
    static List<String> levelLines(Map<String, Object> response) {
        List<String> lines = new java.util.ArrayList<>();
        lines.add(String.format(Locale.ROOT, "level 0: %s parents", get(get(response, "hits"), "total").get("value")));
        List<Map<String, Object>> buckets = new java.util.ArrayList<>();
        for (Object bucket : (List<?>) get(get(get(response, "aggregations"), "children"), "levels").get("buckets")) {
            buckets.add(cast(bucket));
        }
        buckets.sort(java.util.Comparator.comparingInt(b -> ((Number) b.get("key")).intValue()));
        for (Map<String, Object> b : buckets) {
            if (((Number) b.get("key")).intValue() != 0) { // level 0 in children: each parent's own vector entry, counted above
                lines.add(String.format(Locale.ROOT, "level %s: %s children", b.get("key"), b.get("doc_count")));
            }
        }
        return lines;
    }

    /** A side's raw score and its share of the fused score, or "-" when the parent was outside that side's window. */
    private static String sideScore(Object side) {
        if (!(side instanceof Map<?, ?> m)) {
            return "-";
        }
        return String.format(Locale.ROOT, "%.3f, share %.3f", ((Number) m.get("score")).doubleValue(), ((Number) m.get("share")).doubleValue());
    }

    private Map<String, Object> call(String method, String path, String body) throws IOException {
        return JsonRest.call(client, method, path, body);
    }

    private static void section(String title, String detail) {
        System.out.println();
        System.out.println("== " + title);
        if (detail != null) {
            System.out.println(detail);
        }
    }

    private static String json(Map<String, ?> map) throws IOException {
        return JsonRest.json(map);
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

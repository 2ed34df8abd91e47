package io.strata.bench;

import ai.djl.Device;
import io.strata.chunking.ChunkedParent;
import io.strata.chunking.MultiGranularChunker;
import io.strata.chunking.RecursiveStrategy;
import io.strata.chunking.SentenceSegmenter;
import io.strata.demo.Connection;
import io.strata.demo.JsonRest;
import io.strata.inference.DjlEmbedder;
import io.strata.inference.ModelDescriptor;
import org.apache.hc.core5.util.Timeout;
import org.opensearch.client.ResponseException;
import org.opensearch.client.RestClient;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * End-to-end ingest throughput against its ceiling, in one run on the same cores: {@code _bulk} of the whole of
 * <i>Emma</i> (one document per chapter) through a {@code multi_granular_chunking} pipeline with the node's default
 * model (chunking, embedding every parent and child, writing chunk documents, indexing HNSW), against raw ONNX
 * Runtime ({@link RawOrt}) embedding the same texts — the same chunker run here — with the same model, one text per
 * pass on as many threads as cores. The ratio is texts/s of the pipeline over texts/s of the raw model.
 *
 * <p>The pipeline runs five ways, one after the other on the same node: parents only ({@code granularities: []}), today's
 * multi-granular ingest (every child embedded separately), late-chunked children ({@code children.embedding: late}: one
 * pass per parent), and the two MG forms with contextual headers ({@code context: {"fields": ["title"]}}, the chapter
 * heading); each reports parents/s and vectors/s (chunk vectors written: parents, or parents and children) of its
 * best round, and its parents/s against the separate MG's. {@code raw=false} stops after them (no raw ONNX Runtime).
 *
 * <pre>bin/strata-bench ingest [URL] [theta=300] [bulk=4] [clients=2] [rounds=2] [model=NAME] [raw=false]</pre>
 * URL defaults to STRATA_URL, else http://127.0.0.1:9800 (a node started with bin/strata-node start --http-port 9800 --plugin …zip;
 * it should run nothing else meanwhile). Each round ingests into a fresh index (stored vectors would be reused).
 * {@code model=} names another embedded model for the pipeline: a catalogue model must be fetched into target/models
 * ({@code bin/strata-model fetch NAME}) and installed on the node ({@code --model-dir target/models/NAME}).
 */
public final class IngestBench {
    public static void main(String[] args) throws Exception {
        String url = null;
        int theta = 300, bulk = 4, clients = 2, rounds = 2;
        String model = null;
        boolean raw = true;
        for (String a : args) {
            if (a.startsWith("http")) {
                url = a;
            } else if (a.startsWith("theta=")) {
                theta = Integer.parseInt(a.substring(6));
            } else if (a.startsWith("bulk=")) {
                bulk = Integer.parseInt(a.substring(5));
            } else if (a.startsWith("clients=")) {
                clients = Integer.parseInt(a.substring(8));
            } else if (a.startsWith("model=")) {
                model = a.substring(6);
            } else if (a.equals("raw=false")) {
                raw = false;
            } else if (a.startsWith("rounds=")) {
                rounds = Integer.parseInt(a.substring(7));
            } else {
                throw new IllegalArgumentException("unknown argument [" + a + "]; expected URL, theta=, bulk=, clients=, rounds=, model=, raw=false");
            }
        }
        String book = Files.readString(Path.of("src/test/resources/eval/datasets/gutenqa-emma/book.txt"));
        List<String> chapters = chapters(book);
        try (RestClient client = Connection.builder(Connection.url(url, "http://127.0.0.1:9800"))
            .setRequestConfigCallback(c -> c.setResponseTimeout(Timeout.ofHours(1))).build()) {
            new IngestBench(client, chapters, theta, bulk, clients, rounds, model, raw).run();
        }
    }

    /** The book split before each "CHAPTER" heading line. */
    static List<String> chapters(String book) {
        List<String> out = new ArrayList<>();
        int start = 0;
        for (int i = book.indexOf("CHAPTER", 1); i >= 0; i = book.indexOf("CHAPTER", i + 1)) {
            int line = book.lastIndexOf('\n', i) + 1;
            if (line > start && book.substring(line, i).matches("[A-Z. ]*")) {
                out.add(book.substring(start, line));
                start = line;
            }
        }
        out.add(book.substring(start));
        return out;
    }

    private final RestClient client;
    private final List<String> chapters;
    private final int theta;
    private final int bulk;
    private final int clients;
    private final int rounds;
    /** The pipeline's model; null: the node's default. */
    private final String model;

    /** Whether to measure raw ONNX Runtime after the pipelines (the ratio's baseline). */
    private final boolean measureRaw;

    private IngestBench(RestClient client, List<String> chapters, int theta, int bulk, int clients, int rounds, String model, boolean raw) {
        this.measureRaw = raw;
        this.client = client;
        this.chapters = chapters;
        this.theta = theta;
        this.bulk = bulk;
        this.clients = clients;
        this.rounds = rounds;
        this.model = model;
    }

    /** One pipeline configuration of the run: its name, its extra processor options (JSON members) and its child levels. */
    private record Variant(String name, String options, boolean children) {}

    /**
     * Parents alone, today's multi-granular (children embedded separately), late-chunked children, and both MG forms with
     * contextual headers (the chapter heading as {@code title}) (issue 22).
     */
    private static final List<Variant> VARIANTS = List.of(
        new Variant("parents only", ", \"granularities\": []", false),
        new Variant("MG, children separate (default)", "", true),
        new Variant("MG, children late", ", \"children\": {\"embedding\": \"late\"}", true),
        new Variant("MG separate + title headers", ", \"context\": {\"fields\": [\"title\"]}", true),
        new Variant("MG late + title headers", ", \"children\": {\"embedding\": \"late\"}, \"context\": {\"fields\": [\"title\"]}",
            true));

    /** A chapter's first line (its heading): the title the header variants embed with every chunk. */
    private static String title(String chapter) {
        return chapter.strip().lines().findFirst().orElse("").strip();
    }

    private void run() throws Exception {
        Map<String, Object> info = JsonRest.call(client, "GET", "/_nodes/_local/settings", null);
        Map<?, ?> node = (Map<?, ?>) ((Map<?, ?>) info.get("nodes")).values().iterator().next();
        String model = this.model != null ? this.model
            : setting((Map<?, ?>) node.get("settings"), "plugins.strata.inference.default_model", "e5-small-v2-q");
        int cores = Runtime.getRuntime().availableProcessors();
        List<String> texts = new ArrayList<>();
        int parents = 0;
        var chunker = new MultiGranularChunker(new RecursiveStrategy(theta), MultiGranularChunker.DEFAULT_GRANULARITIES,
            SentenceSegmenter.english());
        for (String chapter : chapters) {
            for (ChunkedParent p : chunker.chunk(chapter)) {
                p.all().forEach(c -> texts.add(c.text()));
                parents++;
            }
        }
        System.out.printf(Locale.ROOT, "Emma: %,d chars in %d chapter documents; θ=%d with θ/2 and θ/4 children: %,d parents, %,d texts;"
            + " model %s; %d cores; bulks of %d documents from %d clients%n", chapters.stream().mapToInt(String::length).sum(),
            chapters.size(), theta, parents, texts.size(), model, cores, bulk, clients);

        double pipeline = 0;
        double[] parentsPerSecond = new double[VARIANTS.size()];
        for (int v = 0; v < VARIANTS.size(); v++) {
            Variant variant = VARIANTS.get(v);
            call("PUT", "/_ingest/pipeline/ingest-bench", "{\"processors\": [{\"multi_granular_chunking\": {\"field\": \"text\","
                + " \"target_index\": \"ingest-bench-chunks\", \"strategy\": {\"type\": \"recursive\", \"max_words\": " + theta + "}"
                + (this.model == null ? "" : ", \"model\": \"" + this.model + "\"") + variant.options() + "}}]}");
            ingest(chapters.subList(0, 2)); // loads the model, warms the path
            int vectors = variant.children() ? texts.size() : parents;
            double best = 0;
            for (int r = 0; r < rounds; r++) {
                long before = modelTexts(model);
                long start = System.nanoTime();
                ingest(chapters);
                double secs = (System.nanoTime() - start) / 1e9;
                long passed = modelTexts(model) - before;
                System.out.printf(Locale.ROOT, "%s round %d: %.1f s = %.2f parents/s, %.1f vectors/s (%,d vectors; %,d texts through the "
                    + "model)%n", variant.name(), r + 1, secs, parents / secs, vectors / secs, vectors, passed);
                best = Math.max(best, parents / secs);
            }
            parentsPerSecond[v] = best;
            if (variant.options().isEmpty()) {
                pipeline = best * texts.size() / parents;
            }
        }
        System.out.println();
        System.out.println("| pipeline (θ " + theta + ") | parents/s | vectors/s | vs MG separate |");
        System.out.println("|---|---|---|---|");
        for (int v = 0; v < VARIANTS.size(); v++) {
            int vectors = VARIANTS.get(v).children() ? texts.size() : parents;
            System.out.printf(Locale.ROOT, "| %s | %.2f | %.1f | %.2f× |%n", VARIANTS.get(v).name(), parentsPerSecond[v],
                parentsPerSecond[v] * vectors / parents, parentsPerSecond[v] / parentsPerSecond[1]);
        }
        System.out.println();
        if (!measureRaw) {
            call("DELETE", "/ingest-bench-src,ingest-bench-chunks?ignore_unavailable=true", null);
            call("DELETE", "/_ingest/pipeline/ingest-bench", null);
            return;
        }

        ModelDescriptor d = ModelDescriptor.read(model, Path.of(System.getProperty("strata.models.dir", "target/models")).resolve(model));
        DjlEmbedder.load(d, Device.cpu(), 1, 1, 1).close(); // DJL owns ONNX Runtime's process-wide environment
        double raw = 0;
        try (RawOrt ort = new RawOrt(d, 1)) {
            ort.embedSingly(texts.subList(0, Math.min(200, texts.size())), cores); // warm-up
            for (int r = 0; r < rounds; r++) {
                long start = System.nanoTime();
                int n = ort.embedSingly(texts, cores).size();
                double secs = (System.nanoTime() - start) / 1e9;
                System.out.printf(Locale.ROOT, "raw ONNX Runtime round %d: %,d texts in %.1f s = %.1f texts/s (%d threads, one text per pass)%n",
                    r + 1, n, secs, n / secs, cores);
                raw = Math.max(raw, n / secs);
            }
        }
        System.out.printf(Locale.ROOT, "ingest through the pipeline (MG, children separate) %.1f texts/s vs raw ONNX Runtime %.1f texts/s:"
            + " ratio %.2f (best rounds; target >= 0.85)%n", pipeline, raw, pipeline / raw);
        call("DELETE", "/ingest-bench-src,ingest-bench-chunks?ignore_unavailable=true", null);
        call("DELETE", "/_ingest/pipeline/ingest-bench", null);
    }

    /** Bulks of {@code docs} into fresh indices, from {@code clients} threads; fails on any item error. */
    private void ingest(List<String> docs) throws Exception {
        call("DELETE", "/ingest-bench-src,ingest-bench-chunks?ignore_unavailable=true", null);
        AtomicInteger next = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(clients);
        try {
            List<Future<?>> all = new ArrayList<>();
            for (int c = 0; c < clients; c++) {
                all.add(pool.submit(() -> {
                    for (int from; (from = next.getAndAdd(bulk)) < docs.size(); ) {
                        StringBuilder body = new StringBuilder();
                        for (int i = from; i < Math.min(docs.size(), from + bulk); i++) {
                            body.append("{\"index\": {\"_index\": \"ingest-bench-src\", \"_id\": \"").append(i).append("\"}}\n")
                                .append(JsonRest.json(Map.of("text", docs.get(i), "title", title(docs.get(i))))).append('\n');
                        }
                        Map<String, Object> r = call("POST", "/_bulk?pipeline=ingest-bench", body.toString());
                        if (Boolean.TRUE.equals(r.get("errors"))) {
                            throw new IllegalStateException("bulk item failed: " + r);
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : all) {
                f.get();
            }
        } finally {
            pool.shutdown();
        }
    }

    private long modelTexts(String model) throws Exception {
        long sum = 0;
        Map<?, ?> nodes = (Map<?, ?>) call("GET", "/_plugins/_strata/stats", null).get("nodes");
        for (Object n : nodes.values()) {
            Map<?, ?> models = (Map<?, ?>) ((Map<?, ?>) ((Map<?, ?>) n).get("inference")).get("models");
            if (models.get(model) instanceof Map<?, ?> m) {
                sum += ((Number) m.get("texts")).longValue();
            }
        }
        return sum;
    }

    private static String setting(Map<?, ?> settings, String dotted, String fallback) {
        Object v = settings;
        for (String part : dotted.split("\\.")) {
            v = v instanceof Map<?, ?> m ? m.get(part) : null;
        }
        return v == null ? fallback : v.toString();
    }

    private Map<String, Object> call(String method, String path, String body) throws Exception {
        try {
            return JsonRest.call(client, method, path, body);
        } catch (ResponseException e) {
            throw new IllegalStateException(method + " " + path + ": " + e.getMessage(), e);
        }
    }
}

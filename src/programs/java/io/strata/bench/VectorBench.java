package io.strata.bench;

import io.strata.chunkindex.ChunkDocuments;
import io.strata.chunkindex.VectorOptions;
import io.strata.demo.Connection;
import io.strata.demo.JsonRest;
import io.strata.model.ModelInfo;
import io.strata.model.ModelRef;
import org.apache.hc.core5.util.Timeout;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.opensearch.client.RestClient;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.stream.IntStream;

/**
 * {@code bin/strata-bench vectors [parents=N] [queries=Q] [rescore=F,…] [candidates=C,…] [keep] [URL]}: the chunk index's vector configurations (the processor's
 * {@code vectors}) at N parents of 7 vectors each, on a running node, loaded without the embedder.
 *
 * <p>Vectors: a real corpus embedded once with the bundled model (e5-small-v2 int8, through the node's {@code _embed}):
 * <i>Emma</i> cut by {@code _chunk} (recursive, 300 words, children θ/2 and θ/4), every parent with its first 6 children
 * (fewer: its own vectors repeated), kept in {@code target/vector-bench/}. Parent i of the bench is base parent i mod B
 * with Gaussian noise added to each of its 7 vectors (σ {@value #NOISE} per component: cos ≈ 0.9 to the original), then
 * L2-normalised, so neighbourhoods are those of real text, not of random vectors. Queries: the base chunks' vectors with
 * the same noise, drawn at random. Everything derives from fixed seeds.
 *
 * <p>Per configuration (float, the processor's {@code "encoder": {"name": "none"}}, and each quantized form it accepts, sq 7
 * bits being its default): one index of 1 shard, 0 replicas, written as
 * the processor writes (the parent and its own level-0 entry, 2 level-1 and 4 level-2 children), force-merged to one
 * segment. Printed: {@code vectors <config>: <bytes> B/parent, recall <r>, p50 <ms> ms, p99 <ms> ms} — bytes
 * per parent of what the graph search holds in memory (the shard's files: the HNSW graphs {@code .vex} and the vectors they
 * score, {@code .vec} for float, {@code .veq} for sq; both vector fields, 8 vectors a parent), recall@10 of the parents {@code multi_granular} (k 10, vector given,
 * no {@code _source}) returns against the exact top 10 by MAX over each parent's 7 vectors (brute force, float), and its
 * latency; then each build time, the disk per parent, and a plain k-NN query at equal candidates (k-NN's nested
 * {@code knn} on {@code children.embedding}, k 20 = multi_granular's default candidates) for the ratio. The sq index is
 * measured twice: as its graph scores it ({@code sq7}, {@code rescore: false}) and with full-precision rescoring
 * ({@code sq7+rescore}, the default on a quantized field: {@code oversample_factor} 3, or each factor of
 * {@code rescore=F,…}), whose bytes are the sq index's (the float vectors it rescores with are read from disk, for the
 * candidates only). {@code candidates=C,…} adds, for each C, rows at {@code num_candidates} C (float, sq7+rescore with each factor, and
 * the plain k-NN at k C): recall against cost at equal graph work. {@code keep} reuses the indices a previous run left
 * when they hold N parents (the vectors derive from fixed seeds, so they are the same). The rows' queries alternate, so
 * they share the machine's load.
 */
public final class VectorBench {
    static final int PER_PARENT = 7;
    static final int K = 10;
    static final double NOISE = 0.017;
    static final long SEED = 20261128L;
    static final String MODEL = "e5-small-v2-q";

    public static void main(String[] args) throws Exception {
        int parents = 5_000;
        int queries = 200;
        List<Double> factors = new ArrayList<>(List.of(3.0));
        List<Integer> candidates = new ArrayList<>();
        boolean keep = false;
        String url = null;
        for (String a : args) {
            String s = a.toLowerCase(Locale.ROOT);
            if (s.startsWith("parents=")) {
                String n = s.substring(8);
                long mult = n.endsWith("k") ? 1_000 : n.endsWith("m") ? 1_000_000 : 1;
                parents = Math.toIntExact(Long.parseLong(n.replaceAll("[km]$", "")) * mult);
            } else if (s.startsWith("rescore=")) {
                factors.clear();
                for (String f : s.substring(8).split(",")) {
                    factors.add(Double.parseDouble(f));
                }
            } else if (s.startsWith("candidates=")) {
                for (String c : s.substring(11).split(",")) {
                    candidates.add(Integer.parseInt(c));
                }
            } else if (s.equals("keep")) {
                keep = true;
            } else if (s.startsWith("queries=")) {
                queries = Integer.parseInt(s.substring(8));
            } else if (s.startsWith("http://") || s.startsWith("https://")) {
                url = a;
            } else if (!s.isBlank()) {
                throw new IllegalArgumentException("unknown argument [" + a + "]; expected parents=N, queries=Q, rescore=F[,F…], candidates=C[,C…], keep, a URL");
            }
        }
        if (parents < 100 || parents > 1_000_000 || queries < 10 || queries > 10_000) {
            throw new IllegalArgumentException("parents in [100, 1000000], queries in [10, 10000]");
        }
        url = Connection.url(url, "http://127.0.0.1:9800");
        try (RestClient client = Connection.builder(url)
            .setRequestConfigCallback(c -> c.setResponseTimeout(Timeout.ofHours(6)).setConnectionRequestTimeout(Timeout.ofMinutes(1)))
            .build()) {
            new VectorBench(client, parents, queries, factors, candidates, keep).run();
        }
    }

    private final RestClient client;
    private final int parents;
    private final int queries;
    /** The oversample factors of the sq7+rescore rows. */
    private final List<Double> factors;
    /** Extra {@code num_candidates} values, each measured on float, sq7+rescore and the plain k-NN. */
    private final List<Integer> candidates;
    private final boolean keep;
    private int dim;

    private VectorBench(RestClient client, int parents, int queries, List<Double> factors, List<Integer> candidates, boolean keep) {
        this.client = client;
        this.parents = parents;
        this.queries = queries;
        this.factors = factors;
        this.candidates = candidates;
        this.keep = keep;
    }

    /**
     * One measured row: {@code multi_granular} on a configuration's index with a {@code rescore} value (JSON; null: the
     * default, which is off on float and on with factor 3 on sq), or the plain k-NN (config -1).
     */
    private record Method(String label, int config, String rescore, int candidates) {
        Method(String label, int config, String rescore) {
            this(label, config, rescore, 0);
        }
    }

    private void run() throws Exception {
        long t0 = System.nanoTime();
        float[][] base = baseVectors();
        dim = base[0].length;
        int b = base.length / PER_PARENT;
        float[] vectors = new float[Math.multiplyExact(parents * PER_PARENT, dim)];
        IntStream.range(0, parents).parallel().forEach(p -> {
            SplittableRandom r = new SplittableRandom(SEED * 31 + p);
            for (int s = 0; s < PER_PARENT; s++) {
                noisy(base[(p % b) * PER_PARENT + s], vectors, (p * PER_PARENT + s) * dim, r);
            }
        });
        float[][] query = new float[queries][];
        SplittableRandom qr = new SplittableRandom(SEED + 1);
        for (int q = 0; q < queries; q++) {
            query[q] = new float[dim];
            float[] tmp = new float[dim];
            noisy(base[qr.nextInt(base.length)], tmp, 0, qr);
            query[q] = tmp;
        }
        System.out.printf(Locale.ROOT, "data: %,d parents x 7 vectors (%,d), dim %d, from %,d embedded parents of Emma + noise σ %.3f; "
            + "%d queries; %s%n", parents, parents * PER_PARENT, dim, b, NOISE, queries, uptime());
        long te = System.nanoTime();
        List<Set<String>> exact = exact(vectors, query);
        System.out.printf(Locale.ROOT, "exact top-%d parents by MAX over 7 vectors, brute force: %.1f s%n", K, secs(te));

        // both spelled out: float is an option (encoder none), sq 7 bits the default a pipeline without vectors gets
        List<VectorOptions> configs = List.of(VectorOptions.FLOATS, new VectorOptions(null, null, null, 7));
        List<String> indices = new ArrayList<>();
        double[] build = new double[configs.size()];
        for (int c = 0; c < configs.size(); c++) {
            String index = "vbench-" + configs.get(c).label().replace(' ', '-');
            indices.add(index);
            long tb = System.nanoTime();
            if (keep && parentsIn(index) == parents) {
                build[c] = Double.NaN;
                System.out.printf(Locale.ROOT, "  %s: kept (%,d parents)%n", index, parents);
            } else {
                load(index, configs.get(c), vectors);
                build[c] = secs(tb);
            }
        }
        // rows: float; sq7 as the graph scores it (rescore off); sq7 rescored with each factor; the plain k-NN
        List<Method> rows = new ArrayList<>();
        rows.add(new Method(configs.get(0).label(), 0, null));
        rows.add(new Method(configs.get(1).label(), 1, "false"));
        for (double f : factors) {
            rows.add(new Method(configs.get(1).label() + "+rescore" + (factors.size() == 1 ? "" : " x" + f), 1,
                "{\"oversample_factor\": " + f + "}"));
        }
        rows.add(new Method("plain k-NN", -1, null));
        int defaults = rows.size();
        // per extra num_candidates: float, sq7 rescored with each factor, the plain k-NN
        int group = factors.size() + 2;
        for (int c : candidates) {
            rows.add(new Method(configs.get(0).label() + "@" + c, 0, null, c));
            for (double f : factors) {
                rows.add(new Method(configs.get(1).label() + "+rescore" + (factors.size() == 1 ? "" : " x" + f) + "@" + c, 1,
                    "{\"oversample_factor\": " + f + "}", c));
            }
            rows.add(new Method("plain k-NN@" + c, -1, null, c));
        }
        // warm-up, then every query on every row, in rotating order
        int methods = rows.size();
        for (int w = 0; w < Math.min(50, queries); w++) {
            for (int m = 0; m < methods; m++) {
                search(rows.get(m), indices, query[w]);
            }
        }
        long[][] latency = new long[methods][queries];
        double[] recall = new double[methods];
        for (int q = 0; q < queries; q++) {
            for (int j = 0; j < methods; j++) {
                int m = (q + j) % methods;
                long start = System.nanoTime();
                List<String> got = search(rows.get(m), indices, query[q]);
                latency[m][q] = System.nanoTime() - start;
                Set<String> hit = new HashSet<>(got);
                hit.retainAll(exact.get(q));
                recall[m] += hit.size() / (double) K;
            }
        }
        System.out.println();
        int plain = defaults - 1;
        for (int m = 0; m < plain; m++) {
            long[] bytes = fileBytes(indices.get(rows.get(m).config()));
            System.out.printf(Locale.ROOT, "vectors %s: %d B/parent, recall %.3f, p50 %.2f ms, p99 %.2f ms%n", rows.get(m).label(),
                bytes[0] / parents, recall[m] / queries, percentile(latency[m], 50), percentile(latency[m], 99));
        }
        for (int c = 0; c < configs.size(); c++) {
            long[] bytes = fileBytes(indices.get(c));
            System.out.printf(Locale.ROOT, "build %s: %.1f s (bulk + refresh + force-merge to 1 segment); disk %d B/parent (%s)%n",
                configs.get(c).label(), build[c], bytes[1] / parents, files(indices.get(c)));
        }
        System.out.printf(Locale.ROOT, "plain k-NN (nested knn on children.embedding, k 20, float index): recall %.3f, p50 %.2f ms, p99 %.2f ms%n",
            recall[plain] / queries, percentile(latency[plain], 50), percentile(latency[plain], 99));
        for (int m = 0; m < plain; m++) {
            System.out.printf(Locale.ROOT, "ratio %s / float: bytes %.2f, p50 %.2f, p99 %.2f; multi_granular / plain k-NN p50 %.2f%n",
                rows.get(m).label(), (double) fileBytes(indices.get(rows.get(m).config()))[0] / fileBytes(indices.get(0))[0],
                percentile(latency[m], 50) / percentile(latency[0], 50), percentile(latency[m], 99) / percentile(latency[0], 99),
                percentile(latency[m], 50) / percentile(latency[plain], 50));
        }
        // each extra num_candidates: its rows against float at the same candidates
        for (int m = defaults; m < methods; m += group) {
            for (int j = 0; j < group; j++) {
                Method row = rows.get(m + j);
                String bytes = row.config() < 0 ? "-" : String.valueOf(fileBytes(indices.get(row.config()))[0] / parents);
                System.out.printf(Locale.ROOT, "vectors %s: %s B/parent, recall %.3f, p50 %.2f ms, p99 %.2f ms; p50 vs float@%d %.2f%n",
                    row.label(), bytes, recall[m + j] / queries, percentile(latency[m + j], 50), percentile(latency[m + j], 99),
                    row.candidates(), percentile(latency[m + j], 50) / percentile(latency[m], 50));
            }
        }
        System.out.printf(Locale.ROOT, "%s; total %.1f s%n", uptime(), secs(t0));
    }

    /** A row's search: multi_granular on its configuration's index, or k-NN's nested knn on the float index. */
    private List<String> search(Method m, List<String> indices, float[] v) throws IOException {
        String vector = Arrays.toString(v);
        String body = m.config() >= 0
            ? "{\"size\": 10, \"_source\": false, \"query\": {\"multi_granular\": {\"vector\": " + vector + ", \"k\": 10"
                + (m.rescore() == null ? "" : ", \"rescore\": " + m.rescore())
                + (m.candidates() > 0 ? ", \"num_candidates\": " + m.candidates() : "") + "}}}"
            : "{\"size\": 10, \"_source\": false, \"query\": {\"nested\": {\"path\": \"children\", \"score_mode\": \"max\", \"query\": "
                + "{\"knn\": {\"children.embedding\": {\"vector\": " + vector + ", \"k\": " + (m.candidates() > 0 ? m.candidates() : 20)
                + "}}}}}}";
        Map<String, Object> r = JsonRest.call(client, "POST", "/" + indices.get(Math.max(0, m.config())) + "/_search", body);
        List<String> ids = new ArrayList<>();
        for (Object h : (List<?>) ((Map<?, ?>) r.get("hits")).get("hits")) {
            ids.add(String.valueOf(((Map<?, ?>) h).get("_id")));
        }
        return ids;
    }

    private void load(String index, VectorOptions options, float[] vectors) throws IOException {
        JsonRest.call(client, "DELETE", "/" + index + "?ignore_unavailable=true", null);
        Map<String, Object> mapping = ChunkDocuments.mapping(new ModelInfo(ModelRef.embedded(MODEL), MODEL, dim), options);
        JsonRest.call(client, "PUT", "/" + index, JsonRest.json(Map.of("settings", Map.of("index.knn", true, "number_of_shards", 1,
            "number_of_replicas", 0, "refresh_interval", "-1"), "mappings", mapping)));
        long start = System.nanoTime();
        int batch = 200;
        for (int from = 0; from < parents; from += batch) {
            StringBuilder out = new StringBuilder();
            for (int p = from; p < Math.min(parents, from + batch); p++) {
                out.append("{\"index\": {\"_index\": \"").append(index).append("\", \"_id\": \"").append(id(p)).append("\"}}\n");
                out.append("{\"source_id\": \"doc-").append(p).append("\", \"ordinal\": 0, \"embedding\": ").append(vec(vectors, p, 0))
                    .append(", \"children\": [{\"level\": 0, \"embedding\": ").append(vec(vectors, p, 0)).append('}');
                for (int s = 1; s < PER_PARENT; s++) {
                    out.append(", {\"level\": ").append(s <= 2 ? 1 : 2).append(", \"ordinal\": ").append(s <= 2 ? s - 1 : s - 3)
                        .append(", \"embedding\": ").append(vec(vectors, p, s)).append('}');
                }
                out.append("]}\n");
            }
            Map<String, Object> r = JsonRest.call(client, "POST", "/_bulk?filter_path=errors,items.*.error", out.toString());
            if (Boolean.TRUE.equals(r.get("errors"))) {
                throw new IllegalStateException("bulk into [" + index + "] failed: " + r);
            }
            if ((from / batch) % 100 == 0) {
                System.out.printf(Locale.ROOT, "  %s: %,d / %,d parents, %.0f s%n", index, Math.min(parents, from + batch), parents, secs(start));
            }
        }
        JsonRest.call(client, "POST", "/" + index + "/_refresh", null);
        JsonRest.call(client, "PUT", "/" + index + "/_settings", "{\"index\": {\"refresh_interval\": null}}");
        JsonRest.call(client, "POST", "/" + index + "/_forcemerge?max_num_segments=1", null);
        JsonRest.call(client, "POST", "/" + index + "/_refresh", null);
    }

    /** Parents (root documents) in {@code index}, or -1 when it does not exist. */
    private long parentsIn(String index) throws IOException {
        try {
            Map<String, Object> r = JsonRest.call(client, "GET", "/" + index + "/_count", "{\"query\": {\"exists\": {\"field\": \"ordinal\"}}}");
            return ((Number) r.get("count")).longValue();
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    private static String id(int p) {
        return ChunkDocuments.chunkId("doc-" + p, 0);
    }

    private String vec(float[] vectors, int p, int slot) {
        StringBuilder b = new StringBuilder("[");
        int at = (p * PER_PARENT + slot) * dim;
        for (int d = 0; d < dim; d++) {
            b.append(d == 0 ? "" : ",").append(vectors[at + d]);
        }
        return b.append(']').toString();
    }

    /**
     * {what the graph search holds: graphs + the vectors they score, all files} in bytes, from the shard's files on this
     * machine (inside a compound segment too): the node's segment file-size stats keep one file per extension, so with two
     * vector fields ({@code embedding}, {@code children.embedding}) they count one field's and miss the other's.
     */
    private long[] fileBytes(String index) throws IOException {
        Map<String, Long> sizes = fileSizes(index);
        long graph = sizes.getOrDefault("vex", 0L);
        long searched = sizes.containsKey("veq") ? sizes.get("veq") : sizes.getOrDefault("vec", 0L);
        return new long[] { graph + searched, sizes.values().stream().mapToLong(Long::longValue).sum() };
    }

    private String files(String index) throws IOException {
        StringBuilder b = new StringBuilder();
        for (Map.Entry<String, Long> e : fileSizes(index).entrySet()) {
            if (e.getValue() / parents > 8) {
                b.append(b.length() == 0 ? "" : ", ").append(e.getKey()).append(' ').append(e.getValue() / parents).append(" B/parent");
            }
        }
        return b.toString();
    }

    /** Bytes per file extension of the index's one shard, read from the node's data path (a loopback node). */
    @SuppressWarnings("unchecked")
    private Map<String, Long> fileSizes(String index) throws IOException {
        String uuid = (String) ((Map<String, Object>) ((Map<String, Object>) ((Map<String, Object>) JsonRest.call(client, "GET", "/"
            + index + "/_settings", null).get(index)).get("settings")).get("index")).get("uuid");
        Map<String, Object> fs = JsonRest.call(client, "GET", "/_nodes/_local/stats/fs", null);
        Map<String, Object> node = (Map<String, Object>) ((Map<String, Object>) fs.get("nodes")).values().iterator().next();
        String data = (String) ((Map<String, Object>) ((List<Object>) ((Map<String, Object>) node.get("fs")).get("data")).get(0)).get("path");
        Path dir = Path.of(data, "indices", uuid, "0", "index");
        Map<String, Long> out = new java.util.TreeMap<>();
        try (var files = Files.list(dir)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                String name = f.getFileName().toString();
                if (name.endsWith(".cfe")) {
                    compoundEntries(f).forEach((entry, size) -> out.merge(entry.substring(entry.lastIndexOf('.') + 1), size, Long::sum));
                } else if (name.contains(".") && !name.endsWith(".cfs") && !name.startsWith("write.lock")) {
                    out.merge(name.substring(name.lastIndexOf('.') + 1), Files.size(f), Long::sum);
                }
            }
        }
        return out;
    }

    /**
     * The files inside a compound segment, from its entries table ({@code .cfe}, Lucene 9/10 {@code Lucene90CompoundFormat}):
     * codec header, then a vint count and per file its name, offset and length (little-endian longs).
     */
    private static Map<String, Long> compoundEntries(Path cfe) throws IOException {
        java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(Files.readAllBytes(cfe)).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        b.position(4); // magic
        skipString(b); // codec name
        b.position(b.position() + 4 + 16); // version, segment id
        b.position(b.position() + 1 + b.get(b.position())); // suffix
        int count = vint(b);
        Map<String, Long> out = new LinkedHashMap<>();
        for (int i = 0; i < count; i++) {
            int len = vint(b);
            byte[] name = new byte[len];
            b.get(name);
            b.getLong(); // offset
            out.put(new String(name, StandardCharsets.UTF_8), b.getLong());
        }
        return out;
    }

    private static void skipString(java.nio.ByteBuffer b) {
        int len = vint(b);
        b.position(b.position() + len);
    }

    private static int vint(java.nio.ByteBuffer b) {
        int value = 0;
        for (int shift = 0;; shift += 7) {
            byte x = b.get();
            value |= (x & 0x7f) << shift;
            if (x >= 0) {
                return value;
            }
        }
    }

    /** Exact top-K parents per query: MAX over each parent's 7 vectors of Lucene's cosine score, best first. */
    private List<Set<String>> exact(float[] vectors, float[][] query) {
        List<Set<String>> out = new ArrayList<>();
        for (float[] q : query) {
            float[] best = new float[parents];
            IntStream.range(0, parents).parallel().forEach(p -> {
                float m = Float.NEGATIVE_INFINITY;
                for (int s = 0; s < PER_PARENT; s++) {
                    m = Math.max(m, VectorSimilarityFunction.COSINE.compare(q, Arrays.copyOfRange(vectors, (p * PER_PARENT + s) * dim,
                        (p * PER_PARENT + s + 1) * dim)));
                }
                best[p] = m;
            });
            Integer[] order = IntStream.range(0, parents).boxed().toArray(Integer[]::new);
            Arrays.sort(order, (x, y) -> Float.compare(best[y], best[x]));
            Set<String> top = new HashSet<>();
            for (int i = 0; i < K; i++) {
                top.add(id(order[i]));
            }
            out.add(top);
        }
        return out;
    }

    private static void noisy(float[] from, float[] to, int at, SplittableRandom r) {
        double norm = 0;
        for (int d = 0; d < from.length; d++) {
            to[at + d] = (float) (from[d] + NOISE * r.nextGaussian());
            norm += to[at + d] * to[at + d];
        }
        float inv = (float) (1 / Math.sqrt(norm));
        for (int d = 0; d < from.length; d++) {
            to[at + d] *= inv;
        }
    }

    /** B base parents × 7 vectors of Emma, embedded once by the node's bundled model and cached. */
    @SuppressWarnings("unchecked")
    private float[][] baseVectors() throws IOException {
        Path cache = Path.of("target", "vector-bench", "emma-" + MODEL + ".bin");
        if (Files.exists(cache)) {
            try (DataInputStream in = new DataInputStream(new BufferedInputStream(Files.newInputStream(cache)))) {
                float[][] out = new float[in.readInt()][in.readInt()];
                for (float[] v : out) {
                    for (int d = 0; d < v.length; d++) {
                        v[d] = in.readFloat();
                    }
                }
                return out;
            }
        }
        long start = System.nanoTime();
        String book = Files.readString(Path.of("src/test/resources/eval/datasets/gutenqa-emma/book.txt"), StandardCharsets.UTF_8);
        Map<String, Object> cut = JsonRest.call(client, "POST", "/_plugins/_strata/_chunk", JsonRest.json(Map.of("text", book,
            "strategy", Map.of("type", "recursive", "max_words", 300))));
        List<String> texts = new ArrayList<>();
        for (Map<String, Object> p : (List<Map<String, Object>>) cut.get("parents")) {
            List<String> seven = new ArrayList<>();
            seven.add((String) p.get("text"));
            for (Map<String, Object> c : (List<Map<String, Object>>) p.get("children")) {
                if (seven.size() < PER_PARENT) {
                    seven.add((String) c.get("text"));
                }
            }
            while (seven.size() < PER_PARENT) {
                seven.add(seven.get(seven.size() % Math.max(1, seven.size() - 1)));
            }
            texts.addAll(seven);
        }
        List<float[]> out = new ArrayList<>();
        for (int i = 0; i < texts.size(); i += 32) {
            Map<String, Object> r = JsonRest.call(client, "POST", "/_plugins/_strata/_embed", JsonRest.json(Map.of("texts",
                texts.subList(i, Math.min(texts.size(), i + 32)), "purpose", "passage", "model", MODEL)));
            for (List<Number> v : (List<List<Number>>) r.get("vectors")) {
                float[] f = new float[v.size()];
                for (int d = 0; d < f.length; d++) {
                    f[d] = v.get(d).floatValue();
                }
                out.add(f);
            }
        }
        Files.createDirectories(cache.getParent());
        try (DataOutputStream o = new DataOutputStream(new BufferedOutputStream(Files.newOutputStream(cache)))) {
            o.writeInt(out.size());
            o.writeInt(out.get(0).length);
            for (float[] v : out) {
                for (float x : v) {
                    o.writeFloat(x);
                }
            }
        }
        System.out.printf(Locale.ROOT, "embedded %,d texts of Emma (%d parents) once in %.0f s, cached in %s%n", out.size(),
            out.size() / PER_PARENT, secs(start), cache);
        return out.toArray(float[][]::new);
    }

    private static String uptime() {
        try {
            return "load average " + Files.readString(Path.of("/proc/loadavg")).split(" ", 4)[0];
        } catch (IOException e) {
            return "load average unknown";
        }
    }

    private static double percentile(long[] nanos, double pct) {
        long[] sorted = nanos.clone();
        Arrays.sort(sorted);
        int rank = (int) Math.ceil(pct / 100 * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank))] / 1e6;
    }

    private static double secs(long since) {
        return (System.nanoTime() - since) / 1e9;
    }
}

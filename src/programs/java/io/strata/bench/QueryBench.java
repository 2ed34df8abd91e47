package io.strata.bench;

import io.strata.model.ModelInfo;
import io.strata.model.ModelRef;
import io.strata.chunkindex.ChunkIndexMeta;
import io.strata.demo.Connection;
import io.strata.demo.JsonRest;

import io.strata.chunking.Chunk;
import io.strata.chunking.ChunkedParent;
import io.strata.chunking.Span;
import io.strata.chunkindex.ChunkDocuments;
import io.strata.chunkindex.VectorOptions;
import org.apache.hc.core5.util.Timeout;
import org.opensearch.client.Request;
import org.opensearch.client.RestClient;
import org.opensearch.common.xcontent.XContentFactory;
import org.opensearch.core.common.bytes.BytesReference;
import org.opensearch.core.xcontent.XContentBuilder;

import java.io.IOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.IntStream;

/**
 * Query latency of {@code multi_granular} (top parents by MAX over parent and children, one request) against
 * two baselines measured in the same run on the same vectors: plain k-NN over a flat index (one document per
 * parent and per child), and the client-side alternative (k-NN for the top K' chunks of the flat index, grouping
 * by parent with MAX in the client, then a second request for the parents' texts). Each with the texts an
 * application reads and without any {@code _source} fetch; plus the k-NN plugin's own nested / dis_max DSL on the
 * chunk index for reference. Recall@10 of every method's parents against the exact top-10 parents, computed brute
 * force from the generated vectors. {@code bin/strata-bench query [chunks] [url] [dim=D] ...}.
 *
 * <p>Data: {@code chunks} vectors in all (default 100,000): chunks/7 parents, each with 2 level-1 and 4
 * level-2 children (θ/2 and θ/4), 384 dimensions (or {@code dim=D}), unit length, clustered (topic centres → parents →
 * level-1 children → level-2 children, each a Gaussian step away, the same cosines in any dimension) so that the HNSW
 * graphs face realistic neighbourhoods. Queries are noisy copies of random chunk vectors. Everything derives from
 * fixed seeds. The chunk index is written by {@link ChunkDocuments#toSource}, so it has the current format (the
 * parent also as its own level-0 child). Its vectors are full-precision floats ({@code "encoder": {"name": "none"}}), not the
 * processor's default sq 7 bits: the methods are compared at equal work against the float flat index, so both indices hold
 * the same float graphs ({@code bin/strata-bench vectors} measures sq against float).
 *
 * <p>Texts: every chunk also gets a synthetic text (words drawn from a Zipf law over a {@value #VOCABULARY}-word vocabulary,
 * plus words of its topic; a child's text is its share of its parent's words), so that the lexical and hybrid modes have
 * BM25 postings of a realistic shape to search. The {@code query_text} rows send a synthetic question (words of a random
 * chunk's topic and of the vocabulary), embedded on the node by the bundled model; their vectors are unrelated to the
 * synthetic ones, so those rows measure cost, not recall.
 *
 * <p>Arguments (any order): a chunk count ({@code 100000}, {@code 100k}, {@code 1m}), a node URL (default
 * {@code STRATA_URL}, else {@code http://127.0.0.1:9800}; a secured node's CA and credentials from the environment, see
 * {@link Connection}), {@code queries=Q} (default 200), {@code warmup=W} (default 50 per method), {@code dim=D} (default
 * 384), {@code keep} (leave the indices in place), {@code reuse} (skip ingest when the indices already hold the data of
 * this seed and size). Loopback URLs only.
 */
public final class QueryBench {
    /** Default vector dimension: bge-small's. {@code dim=D} lowers it, e.g. to keep a 1M-chunk HNSW build short on 2 cores. */
    static final int DEFAULT_DIM = 384;
    static final int PER_PARENT = 7; // the parent, 2 level-1 children, 4 level-2 children
    static final int K = 10;
    /** K' of the grouping baseline: 7 chunks per parent, so any 70 chunks name at least 10 distinct parents. */
    static final int K_GROUP = K * PER_PARENT;
    static final long SEED = 20240611L;
    static final String CHUNKS = "qbench-chunks";
    static final String FLAT = "qbench-flat";
    /** The chunk index again, its vectors sq 7 bits (rescored by default): the quantized option's cost on the same data. */
    static final String SQ = "qbench-sq";
    static final String SOURCE = "qbench-source";
    static final int PARENTS_PER_SOURCE = 10;
    static final int VOCABULARY = 20_000;
    static final int TOPIC_WORDS = 40;
    static final int PARENT_WORDS = 240;
    /** Methods whose requests carry a question text ({@code query_text}): no recall, their vectors are the model's. */
    static final int FIRST_TEXT_METHOD = 8;
    /** The rows on {@link #SQ}, and the float rows they repeat (vector, query_text dense, hybrid). */
    static final int FIRST_SQ_METHOD = 18;
    static final int[] SQ_BASE = { 3, FIRST_TEXT_METHOD, FIRST_TEXT_METHOD + 1 };
    /** The default hybrid with its dense window's beam = the window ({@code num_candidates} 100; the default is 2 × the window). */
    static final int BEAM_METHOD = FIRST_SQ_METHOD + SQ_BASE.length;
    /** The question's embedding with the lexical mode's search of it sent at the same moment (the hybrid's overlap). */
    static final int BESIDE_METHOD = BEAM_METHOD + 1;
    static final int HYBRID_WINDOW = 100;
    static final int CONTEXT_BUDGET = 512;
    static final String CONTEXT_PIPELINE = "strata-bench-context";

    public static void main(String[] args) throws Exception {
        int chunks = 100_000;
        String url = null;
        int queries = 200;
        int warmup = 50;
        boolean keep = false;
        boolean reuse = false;
        int dim = DEFAULT_DIM;
        for (String a : args) {
            String s = a.toLowerCase(Locale.ROOT);
            if (s.startsWith("http://") || s.startsWith("https://")) {
                url = a;
            } else if (s.startsWith("queries=")) {
                queries = Integer.parseInt(s.substring(8));
            } else if (s.startsWith("warmup=")) {
                warmup = Integer.parseInt(s.substring(7));
            } else if (s.startsWith("dim=")) {
                dim = Integer.parseInt(s.substring(4));
            } else if (s.equals("keep")) {
                keep = true;
            } else if (s.equals("reuse")) {
                reuse = true;
                keep = true;
            } else if (s.matches("\\d+[km]?")) {
                long mult = s.endsWith("k") ? 1_000 : s.endsWith("m") ? 1_000_000 : 1;
                chunks = Math.toIntExact(Long.parseLong(s.replaceAll("[km]$", "")) * mult);
            } else if (!s.isBlank()) {
                throw new IllegalArgumentException("unknown argument [" + a + "]; expected a chunk count, a URL, queries=Q, warmup=W, dim=D, keep,"
                    + " reuse");
            }
        }
        url = Connection.url(url, "http://127.0.0.1:9800");
        String host = URI.create(url).getHost();
        if (!"127.0.0.1".equals(host) && !"localhost".equals(host) && !"::1".equals(host)) {
            throw new IllegalArgumentException("loopback nodes only, got [" + url + "]");
        }
        if (chunks < 7 * 100 || chunks > 2_000_000 || queries < 1 || queries > 10_000 || warmup < 0 || warmup > 10_000 || dim < 8
            || dim > 1024 || dim % 4 != 0) {
            throw new IllegalArgumentException("chunks in [700, 2000000], queries in [1, 10000], warmup in [0, 10000], dim in [8, 1024]"
                + " and a multiple of 4");
        }
        try (RestClient client = Connection.builder(url)
            .setRequestConfigCallback(c -> c.setResponseTimeout(Timeout.ofHours(3)).setConnectionRequestTimeout(Timeout.ofMinutes(1)))
            .build()) {
            new QueryBench(client, chunks / PER_PARENT, queries, warmup, dim).run(keep, reuse);
        }
    }

    private final RestClient client;
    private final int parents;
    private final int n;
    private final int queries;
    private final int warmup;
    private final int dim;
    /** Chunk vector i = parent i / 7, slot i % 7 (0 parent, 1-2 level 1, 3-6 level 2), at [i * dim, (i + 1) * dim). */
    private final float[] vectors;
    /** The topic of each parent (the centre its vectors and its topic words come from). */
    private final int[] topics;
    /** Sends the search that runs beside an embedding ({@link #embedBesideLexical}). */
    private final ExecutorService beside = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "bench-beside");
        t.setDaemon(true);
        return t;
    });

    private QueryBench(RestClient client, int parents, int queries, int warmup, int dim) {
        this.client = client;
        this.dim = dim;
        this.parents = parents;
        this.n = parents * PER_PARENT;
        this.queries = queries;
        this.warmup = warmup;
        this.vectors = new float[Math.multiplyExact(n, dim)];
        this.topics = new int[parents];
    }

    static int level(int slot) {
        return slot == 0 ? 0 : slot <= 2 ? 1 : 2;
    }

    static String parentId(int p) {
        return ChunkDocuments.chunkId("doc-" + p / PARENTS_PER_SOURCE, p % PARENTS_PER_SOURCE);
    }

    private void run(boolean keep, boolean reuse) throws Exception {
        long t0 = System.nanoTime();
        generate();
        float[][] measured = queryVectors(queries, SEED + 1);
        float[][] warm = queryVectors(warmup, SEED + 2);
        System.out.printf(Locale.ROOT, "data: %,d chunks = %,d parents x (1 parent + 2 level-1 + 4 level-2 children), dim %d, seed %d;"
            + " generated in %.1f s%n", n, parents, dim, SEED, secs(t0));
        Map<String, Object> settings = call("PUT", "/_cluster/settings",
            "{\"transient\": {\"knn.algo_param.index_thread_qty\": " + Runtime.getRuntime().availableProcessors() + "}}");
        System.out.println("node: knn.algo_param.index_thread_qty = " + Runtime.getRuntime().availableProcessors()
            + " (HNSW merge workers); acknowledged " + settings.get("acknowledged"));

        long tExact = System.nanoTime();
        Exact exact = exact(measured);
        double exactSecs = secs(tExact);

        double[] chunkIngest = null;
        double[] flatIngest = null;
        if (!(reuse && holds(CHUNKS, parents) && holds(FLAT, n))) {
            chunkIngest = ingest(CHUNKS, chunkIndexBody(), parents, 200, this::chunkBulk);
            flatIngest = ingest(FLAT, flatIndexBody(), n, 1400, this::flatBulk);
        } else {
            System.out.println("reusing the existing indices");
        }
        if (!(reuse && holds(SQ, parents))) {
            sqCopy();
        }
        System.out.printf(Locale.ROOT, "exact top-%d parents (brute force MAX over %,d vectors, %d queries) in %.1f s%n", K, n, queries,
            exactSecs);
        call("PUT", "/_search/pipeline/" + CONTEXT_PIPELINE, "{\"response_processors\": [{\"strata_context\": {}}]}");
        System.out.println(segments(CHUNKS));
        System.out.println(segments(FLAT));

        // rows 0-2: what an application runs to get 10 parents WITH their texts; rows 3-4: the same searches without any
        // _source fetch (the search cost alone); rows 5-6: the k-NN plugin's own DSL on the chunk index, for reference;
        // row 7: multi_granular without widening the graph search (num_candidates = k instead of the default 2k)
        Method[] methods = {
            new Method("multi_granular k=10 (20 candidates), parent texts", this::multiGranular),
            new Method("plain k-NN k=10 (flat), chunk texts", this::plainKnn),
            new Method("k-NN k'=" + K_GROUP + " + group-by MAX + mget texts", this::grouped),
            new Method("multi_granular k=10 (20 candidates), no _source", this::multiGranular),
            new Method("plain k-NN k=10 (flat), no _source", this::plainKnn),
            new Method("(ref) DSL nested knn (1 graph search)", this::multiGranular),
            new Method("(ref) DSL dis_max(knn, nested knn) (2)", this::multiGranular),
            new Method("multi_granular k=10 num_candidates=10, no _source", this::multiGranular),
            // rows 8-11: a question text, embedded on the node (the costs of the modes of query_text, and of the embedding alone)
            new Method("query_text mode dense (embeds), no _source", this::multiGranular),
            new Method("query_text hybrid (default), no _source", this::multiGranular),
            new Method("query_text mode lexical, no _source", this::multiGranular),
            new Method("(ref) _embed of the question alone", this::embedOnly),
            // rows 12-13: what a RAG application runs: hybrid with the matched chunk, and the same through strata_context
            new Method("query_text hybrid, explain_child, no _source", this::multiGranular),
            new Method("  + strata_context budget " + CONTEXT_BUDGET + " tokens", this::withContext),
            // rows 14-15: the same with the query's evidence (3 chunks a side), which strata_context's default seeds use
            new Method("query_text hybrid, explain_child + evidence", this::multiGranular),
            new Method("  + strata_context budget " + CONTEXT_BUDGET + " tokens", this::withContext),
            // rows 16-17: evidence with the parents' best 3 sentences too, which the best hit's seed falls back on
            new Method("query_text hybrid, explain_child + evidence, sentences", this::multiGranular),
            new Method("  + strata_context budget " + CONTEXT_BUDGET + " tokens", this::withContext),
            // rows 18-20: rows 3, 8 and 9 on the sq 7-bit copy of the chunk index (rescored by default)
            new Method("sq: multi_granular k=10, no _source", body -> search(SQ, body)),
            new Method("sq: query_text mode dense, no _source", body -> search(SQ, body)),
            new Method("sq: query_text hybrid (default), no _source", body -> search(SQ, body)),
            // row 21: the hybrid's latency knob, its dense window's graph search at a beam of the window instead of twice it
            new Method("query_text hybrid, num_candidates " + HYBRID_WINDOW + ", no _source", this::multiGranular),
            // row 22: what the hybrid's overlap costs the embedding: the two requests it overlaps, sent at the same moment
            new Method("(ref) _embed beside a mode lexical search", this::embedBesideLexical) };
        String[][] warmBodies = bodies(warm, questions(warmup, SEED + 4));
        String[][] bodies = bodies(measured, questions(queries, SEED + 3));
        for (int i = 0; i < warm.length; i++) {
            for (int m = 0; m < methods.length; m++) {
                methods[m].search.search(warmBodies[m][i]);
            }
        }
        long[][] latency = new long[methods.length][queries];
        long[][] took = new long[methods.length][queries];
        double[] recall = new double[methods.length];
        int[] fewer = new int[methods.length];
        double beamShared = 0; // parents of the beam row's top 10 that the default hybrid's top 10 holds
        List<String>[] hybridParents = new List[queries];
        List<String>[] beamParents = new List[queries];
        for (int i = 0; i < queries; i++) {
            for (int j = 0; j < methods.length; j++) {
                int m = (i + j) % methods.length; // rotate the order so no method always runs first
                long start = System.nanoTime();
                Result r = methods[m].search.search(bodies[m][i]);
                latency[m][i] = System.nanoTime() - start;
                took[m][i] = r.tookMs;
                Set<String> hit = new HashSet<>(r.parents);
                hit.retainAll(exact.top.get(i));
                recall[m] += hit.size() / (double) K;
                if (m == FIRST_TEXT_METHOD + 1) {
                    hybridParents[i] = r.parents;
                } else if (m == BEAM_METHOD) {
                    beamParents[i] = r.parents;
                }
                if (new HashSet<>(r.parents).size() < K && m != FIRST_TEXT_METHOD + 3 && m != BESIDE_METHOD) {
                    fewer[m]++;
                }
            }
        }

        System.out.println();
        System.out.printf(Locale.ROOT, "%,d chunks (%,d parents), dim %d, %d queries after %d warm-up queries per method, 1 shard,"
            + " 1 segment%n", n, parents, dim, queries, warm.length);
        System.out.printf(Locale.ROOT, "%-10s %-42s %8s %8s %10s %10s %10s %12s %8s%n", "N", "method", "p50 ms", "p99 ms", "p50 ratio",
            "p99 ratio", "took p50", "recall@10", "<10 par.");
        for (int m = 0; m < methods.length; m++) {
            // the multi_granular row of the same kind; an sq row, the float row it repeats
            int base = m == BESIDE_METHOD ? FIRST_TEXT_METHOD + 3 : m == BEAM_METHOD ? FIRST_TEXT_METHOD : m >= FIRST_SQ_METHOD ? SQ_BASE[m - FIRST_SQ_METHOD] : m <= 2 ? 0 : m < FIRST_TEXT_METHOD ? 3 : FIRST_TEXT_METHOD;
            double p50 = percentile(latency[m], 50);
            double p99 = percentile(latency[m], 99);
            System.out.printf(Locale.ROOT, "%-10s %-42s %8.2f %8.2f %10.2f %10.2f %10.1f %12.3f %8d%n", String.format(Locale.ROOT, "%,d", n),
                methods[m].name, p50, p99, p50 / percentile(latency[base], 50), p99 / percentile(latency[base], 99),
                (double) rank(took[m], 50), m < FIRST_TEXT_METHOD || m == FIRST_SQ_METHOD ? recall[m] / queries : Double.NaN, fewer[m]);
        }
        System.out.println("(p50/p99 ratio = this row / the multi_granular row of the same fetch, > 1: multi_granular is faster; took = server-side ms of the search request; recall@10 = distinct parents returned that are in the"
            + " exact top-10 parents; <10 par. = queries answered with fewer than 10 distinct parents)");
        for (int[] pair : new int[][] { { 0, 1 }, { 3, 4 } }) {
            double r50 = percentile(latency[pair[0]], 50) / percentile(latency[pair[1]], 50);
            double r99 = percentile(latency[pair[0]], 99) / percentile(latency[pair[1]], 99);
            System.out.printf(Locale.ROOT, "target multi_granular / plain k-NN <= 1.2 (%s): p50 %.2f, p99 %.2f -> %s%n",
                pair[0] == 0 ? "with texts" : "no _source", r50, r99, r50 <= 1.2 && r99 <= 1.2 ? "holds"
                    : r50 <= 1.2 ? "holds at p50" : "does not hold");
        }
        int dense = FIRST_TEXT_METHOD;
        int hybrid = FIRST_TEXT_METHOD + 1;
        double h50 = percentile(latency[hybrid], 50) / percentile(latency[dense], 50);
        System.out.printf(Locale.ROOT, "target query_text hybrid / query_text dense p50 <= 1.3: %.2f -> %s (p99 %.2f); the embedding of the"
            + " question alone: p50 %.2f ms, p99 %.2f ms; dense with a given vector (no embedding): p50 %.2f ms%n", h50,
            h50 <= 1.3 ? "holds" : "does not hold", percentile(latency[hybrid], 99) / percentile(latency[dense], 99),
            percentile(latency[FIRST_TEXT_METHOD + 3], 50), percentile(latency[FIRST_TEXT_METHOD + 3], 99), percentile(latency[3], 50));
        for (int row : new int[] { FIRST_TEXT_METHOD + 4, FIRST_TEXT_METHOD + 6, FIRST_TEXT_METHOD + 8 }) {
            double c50 = percentile(latency[row + 1], 50) / percentile(latency[row], 50);
            System.out.printf(Locale.ROOT, "target strata_context (budget %d) / the same search without it p50 <= 1.5 (%s): %.2f -> %s "
                + "(p99 %.2f)%n", CONTEXT_BUDGET, row == FIRST_TEXT_METHOD + 4 ? "explain_child"
                : row == FIRST_TEXT_METHOD + 6 ? "explain_child + evidence" : "explain_child + evidence with sentences", c50,
                c50 <= 1.5 ? "holds" : "does not hold", percentile(latency[row + 1], 99) / percentile(latency[row], 99));
        }
        System.out.printf(Locale.ROOT, "sq 7 bits (rescored) / float p50: vector %.2f, query_text dense %.2f, hybrid %.2f; recall@10 (vector) %.3f"
            + " / %.3f%n", percentile(latency[FIRST_SQ_METHOD], 50) / percentile(latency[3], 50),
            percentile(latency[FIRST_SQ_METHOD + 1], 50) / percentile(latency[FIRST_TEXT_METHOD], 50),
            percentile(latency[FIRST_SQ_METHOD + 2], 50) / percentile(latency[FIRST_TEXT_METHOD + 1], 50), recall[FIRST_SQ_METHOD] / queries,
            recall[3] / queries);
        for (int i = 0; i < queries; i++) {
            Set<String> shared = new HashSet<>(beamParents[i]);
            shared.retainAll(hybridParents[i]);
            beamShared += shared.size() / (double) Math.max(1, hybridParents[i].size());
        }
        System.out.printf(Locale.ROOT, "hybrid, dense window beam %d (num_candidates) / the default beam %d: p50 %.2f x dense (default %.2f);"
            + " its top %d share %.3f of the default's parents%n", HYBRID_WINDOW, 2 * HYBRID_WINDOW,
            percentile(latency[BEAM_METHOD], 50) / percentile(latency[FIRST_TEXT_METHOD], 50), h50, K, beamShared / queries);
        double alone = percentile(latency[FIRST_TEXT_METHOD + 3], 50);
        System.out.printf(Locale.ROOT, "the embedding beside the lexical mode's search of the question (the hybrid's overlap): p50 %.2f ms"
            + " against %.2f alone (+%.2f ms; the search alone %.2f ms)%n", percentile(latency[BESIDE_METHOD], 50), alone,
            percentile(latency[BESIDE_METHOD], 50) - alone, percentile(latency[FIRST_TEXT_METHOD + 2], 50));
        double g50 = percentile(latency[2], 50) / percentile(latency[0], 50);
        double g99 = percentile(latency[2], 99) / percentile(latency[0], 99);
        System.out.printf(Locale.ROOT, "target k'=%d grouping + mget / multi_granular >= 5: p50 %.2f, p99 %.2f -> %s%n", K_GROUP, g50, g99,
            g50 >= 5 ? "holds" : "does not hold");
        System.out.printf(Locale.ROOT, "exact rank of the %dth distinct parent's best chunk in the flat ranking (the K' a perfect k-NN"
            + " needs): p50 %d, p90 %d, p99 %d, max %d (K'=%d always suffices: at most %d chunks per parent)%n", K,
            rank(exact.needed, 50), rank(exact.needed, 90), rank(exact.needed, 99),
            Arrays.stream(exact.needed).max().getAsLong(), K_GROUP, PER_PARENT);
        if (chunkIngest != null) {
            // the chunk index holds every parent vector twice: top-level [embedding] and its own level-0 child
            System.out.printf(Locale.ROOT, "ingest %-14s %,9d docs (%,d Lucene docs with nested, %,d vectors): bulk+refresh %7.1f s"
                + " (%,.0f vectors/s), force-merge to 1 segment %7.1f s, store %s%n", CHUNKS, parents, parents * (PER_PARENT + 1),
                n + parents, chunkIngest[0], (n + parents) / chunkIngest[0], chunkIngest[1], storeSize(CHUNKS));
            System.out.printf(Locale.ROOT, "ingest %-14s %,9d docs                            : bulk+refresh %7.1f s (%,.0f vectors/s),"
                + " force-merge to 1 segment %7.1f s, store %s%n", FLAT, n, flatIngest[0], n / flatIngest[0], flatIngest[1], storeSize(FLAT));
        }
        if (!keep) {
            call("DELETE", "/" + CHUNKS + "," + FLAT + "," + SQ + "?ignore_unavailable=true", null);
        }
        call("PUT", "/_cluster/settings", "{\"transient\": {\"knn.algo_param.index_thread_qty\": null}}");
        System.out.printf(Locale.ROOT, "total run time %.1f s%n", secs(t0));
    }

    // ----------------------------------------------------------------------------------------------
    // data
    // ----------------------------------------------------------------------------------------------

    /**
     * Topic centres (one per ~20 parents) → parent (cos ≈ 0.7 to its centre) → level-1 child (≈ 0.8 to its
     * parent) → level-2 child (≈ 0.85 to its level-1 child). Per parent, an own generator seeded from
     * (seed, parent), so the data does not depend on generation order.
     */
    private void generate() {
        int topics = Math.max(16, parents / 20);
        float[] centres = new float[topics * dim];
        SplittableRandom r = new SplittableRandom(SEED);
        for (int t = 0; t < topics; t++) {
            for (int d = 0; d < dim; d++) {
                centres[t * dim + d] = (float) r.nextGaussian();
            }
            normalize(centres, t * dim);
        }
        IntStream.range(0, parents).parallel().forEach(p -> {
            SplittableRandom pr = new SplittableRandom(SEED * 31 + p);
            int topic = pr.nextInt(topics);
            this.topics[p] = topic;
            int base = p * PER_PARENT * dim;
            noisy(centres, topic * dim, vectors, base, 0.05, pr);
            noisy(vectors, base, vectors, base + dim, 0.038, pr);
            noisy(vectors, base, vectors, base + 2 * dim, 0.038, pr);
            for (int c = 3; c < PER_PARENT; c++) {
                int from = c < 5 ? 1 : 2; // two level-2 children inside each level-1 child
                noisy(vectors, base + from * dim, vectors, base + c * dim, 0.03, pr);
            }
        });
    }

    /** Queries: a random chunk's vector plus noise (cos ≈ 0.7 to it), so every query has a relevant neighbourhood. */
    private float[][] queryVectors(int count, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        float[][] out = new float[count][dim];
        for (int q = 0; q < count; q++) {
            noisy(vectors, r.nextInt(n) * dim, out[q], 0, 0.05, r);
        }
        return out;
    }

    private void noisy(float[] from, int fromOffset, float[] to, int toOffset, double sigma, SplittableRandom r) {
        // the same noise norm in every dimension count, so the cosines above hold for dim=D too
        double s = sigma * Math.sqrt((double) DEFAULT_DIM / dim);
        for (int d = 0; d < dim; d++) {
            to[toOffset + d] = (float) (from[fromOffset + d] + s * r.nextGaussian());
        }
        normalize(to, toOffset);
    }

    private void normalize(float[] v, int offset) {
        double s = 0;
        for (int d = 0; d < dim; d++) {
            s += (double) v[offset + d] * v[offset + d];
        }
        float inv = (float) (1 / Math.sqrt(s));
        for (int d = 0; d < dim; d++) {
            v[offset + d] *= inv;
        }
    }

    /** A Zipf-distributed vocabulary word (rank r with probability ∝ 1/r), by inverse transform on the harmonic numbers. */
    private static String zipfWord(SplittableRandom r) {
        double u = r.nextDouble() * HARMONIC[VOCABULARY - 1];
        int lo = 0;
        int hi = VOCABULARY - 1;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (HARMONIC[mid] < u) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return "w" + Integer.toString(lo, 36);
    }

    private static final double[] HARMONIC = new double[VOCABULARY];

    static {
        double h = 0;
        for (int i = 0; i < VOCABULARY; i++) {
            h += 1.0 / (i + 1);
            HARMONIC[i] = h;
        }
    }

    private static String topicWord(int topic, SplittableRandom r) {
        return "t" + Integer.toString(topic, 36) + "x" + r.nextInt(TOPIC_WORDS);
    }

    /** A parent's words: Zipf words with one topic word in six; the same for a parent whatever the run. */
    private String[] parentWords(int p) {
        SplittableRandom r = new SplittableRandom(SEED * 17 + p);
        String[] words = new String[PARENT_WORDS];
        for (int i = 0; i < words.length; i++) {
            words[i] = r.nextInt(6) == 0 ? topicWord(topics[p], r) : zipfWord(r);
        }
        return words;
    }

    /** The text of chunk slot {@code c} of a parent: the parent's words, a level-1 child's half or a level-2 child's quarter. */
    private static String chunkText(String[] words, int c) {
        int level = level(c);
        int parts = level == 0 ? 1 : level == 1 ? 2 : 4;
        int ord = level == 0 ? 0 : level == 1 ? c - 1 : c - 3;
        int len = words.length / parts;
        return String.join(" ", Arrays.asList(words).subList(ord * len, (ord + 1) * len));
    }

    /** Questions: four words of a random parent's topic and four vocabulary words. */
    private String[] questions(int count, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        String[] out = new String[count];
        for (int q = 0; q < count; q++) {
            int topic = topics[r.nextInt(parents)];
            StringBuilder b = new StringBuilder();
            for (int i = 0; i < 8; i++) {
                b.append(i == 0 ? "" : " ").append(i % 2 == 0 ? topicWord(topic, r) : zipfWord(r));
            }
            out[q] = b.toString();
        }
        return out;
    }

    private float[] vector(int i) {
        return Arrays.copyOfRange(vectors, i * dim, (i + 1) * dim);
    }

    // ----------------------------------------------------------------------------------------------
    // exact answers
    // ----------------------------------------------------------------------------------------------

    private record Exact(List<Set<String>> top, long[] needed) {}

    /**
     * Per query: cosine to every chunk (float dot products in 4 lanes, divided by the norms), each parent's MAX over its 7 chunks, the top-10 parents; and the
     * number of chunks scoring at least the 10th parent's score (the K' an exact chunk k-NN needs to see 10 parents).
     */
    private Exact exact(float[][] qs) {
        float[] norms = new float[n];
        IntStream.range(0, n).parallel().forEach(i -> {
            double s = 0;
            for (int d = 0; d < dim; d++) {
                s += (double) vectors[i * dim + d] * vectors[i * dim + d];
            }
            norms[i] = (float) Math.sqrt(s);
        });
        List<Set<String>> top = new ArrayList<>();
        long[] needed = new long[qs.length];
        for (int i = 0; i < qs.length; i++) {
            top.add(null);
        }
        IntStream.range(0, qs.length).parallel().forEach(q -> {
            float[] query = qs[q];
            double qn = 0;
            for (float x : query) {
                qn += (double) x * x;
            }
            qn = Math.sqrt(qn);
            float[] scores = new float[n];
            double[] best = new double[K]; // top-K parent scores, descending
            int[] bestId = new int[K];
            Arrays.fill(best, Double.NEGATIVE_INFINITY);
            for (int p = 0; p < parents; p++) {
                double max = Double.NEGATIVE_INFINITY;
                for (int c = 0; c < PER_PARENT; c++) {
                    int i = p * PER_PARENT + c;
                    int off = i * dim;
                    float dot0 = 0, dot1 = 0, dot2 = 0, dot3 = 0;
                    for (int d = 0; d < dim; d += 4) {
                        dot0 += query[d] * vectors[off + d];
                        dot1 += query[d + 1] * vectors[off + d + 1];
                        dot2 += query[d + 2] * vectors[off + d + 2];
                        dot3 += query[d + 3] * vectors[off + d + 3];
                    }
                    double cos = (dot0 + dot1 + dot2 + dot3) / (qn * norms[i]);
                    scores[i] = (float) cos;
                    max = Math.max(max, cos);
                }
                if (max > best[K - 1]) {
                    int at = K - 1;
                    while (at > 0 && best[at - 1] < max) {
                        best[at] = best[at - 1];
                        bestId[at] = bestId[at - 1];
                        at--;
                    }
                    best[at] = max;
                    bestId[at] = p;
                }
            }
            Set<String> ids = new HashSet<>();
            for (int p : bestId) {
                ids.add(parentId(p));
            }
            float tenth = (float) best[K - 1];
            long count = 0;
            for (float s : scores) {
                if (s >= tenth) {
                    count++;
                }
            }
            top.set(q, ids);
            needed[q] = count;
        });
        return new Exact(top, needed);
    }

    // ----------------------------------------------------------------------------------------------
    // indices
    // ----------------------------------------------------------------------------------------------

    /** {@link #SQ}: the chunk index's documents reindexed into an sq 7-bit mapping, force-merged to one segment as it is. */
    private void sqCopy() throws IOException {
        call("DELETE", "/" + SQ + "?ignore_unavailable=true", null);
        Map<String, Object> mapping = ChunkDocuments.mapping(new ModelInfo(ModelRef.embedded("e5-small-v2-q"), "e5-small-v2-q", dim),
            VectorOptions.parse(Map.of("encoder", Map.of("name", "sq", "bits", 7))));
        call("PUT", "/" + SQ, json(Map.of("settings", indexSettings(), "mappings", mapping)));
        long t = System.nanoTime();
        call("POST", "/_reindex?wait_for_completion=true&timeout=1h", "{\"source\": {\"index\": \"" + CHUNKS + "\", \"size\": 500}, "
            + "\"dest\": {\"index\": \"" + SQ + "\"}}");
        call("PUT", "/" + SQ + "/_settings", "{\"index\": {\"refresh_interval\": null}}");
        call("POST", "/" + SQ + "/_forcemerge?max_num_segments=1", null);
        call("POST", "/" + SQ + "/_refresh", null);
        System.out.printf(Locale.ROOT, "  %s: reindexed from %s with sq 7 bits and force-merged in %.1f s; %s%n", SQ, CHUNKS, secs(t),
            segments(SQ));
    }

    private String chunkIndexBody() throws IOException {
        // floats, like the flat index: the methods are compared at equal work on the same full-precision graphs
        Map<String, Object> mapping = ChunkDocuments.mapping(
            new ModelInfo(ModelRef.embedded("e5-small-v2-q"), "e5-small-v2-q", dim), VectorOptions.FLOATS);
        return json(Map.of("settings", indexSettings(), "mappings", mapping));
    }

    private String flatIndexBody() throws IOException {
        Map<String, Object> props = new LinkedHashMap<>();
        props.put("parent", Map.of("type", "keyword"));
        props.put("level", Map.of("type", "integer"));
        props.put("text", Map.of("type", "text"));
        props.put("embedding", Map.of("type", "knn_vector", "dimension", dim, "method",
            Map.of("name", "hnsw", "engine", "lucene", "space_type", "cosinesimil")));
        return json(Map.of("settings", indexSettings(), "mappings", Map.of("properties", props)));
    }

    /** Both indices alike: 1 shard, no replica, k-NN on; no refresh while the bench bulk-loads (restored after). */
    private static Map<String, Object> indexSettings() {
        return Map.of("index.knn", true, "number_of_shards", 1, "number_of_replicas", 0, "refresh_interval", "-1");
    }

    interface BulkWriter {
        void write(StringBuilder out, int from, int to) throws IOException;
    }

    /** The chunk documents of parents [from, to), exactly as {@link ChunkDocuments#toSource} writes them. */
    private void chunkBulk(StringBuilder out, int from, int to) throws IOException {
        for (int p = from; p < to; p++) {
            String sourceId = "doc-" + p / PARENTS_PER_SOURCE;
            int ordinal = p % PARENTS_PER_SOURCE;
            // spans that locate each text in its source (parents far apart: consecutive ordinals, whitespace between them),
            // as strata_context reads them
            int start = ordinal * 100_000;
            String[] words = parentWords(p);
            String parentText = chunkText(words, 0);
            Chunk parent = new Chunk(parentText, new Span(start, start + parentText.length()), 0, ordinal);
            List<Chunk> children = new ArrayList<>(PER_PARENT - 1);
            List<float[]> vs = new ArrayList<>(PER_PARENT);
            vs.add(vector(p * PER_PARENT));
            for (int c = 1; c < PER_PARENT; c++) {
                int level = level(c);
                int ord = level == 1 ? c - 1 : c - 3;
                String text = chunkText(words, c);
                int at = start + parentText.indexOf(text);
                children.add(new Chunk(text, new Span(at, at + text.length()), level, ord));
                vs.add(vector(p * PER_PARENT + c));
            }
            Map<String, Object> doc = ChunkDocuments.toSource(SOURCE, sourceId, "recursive", new ChunkedParent(parent, children), Map.of(),
                vs, null, null);
            out.append(json(Map.of("index", Map.of("_index", CHUNKS, "_id", parentId(p))))).append('\n');
            out.append(json(doc)).append('\n');
        }
    }

    /** One flat document per chunk [from, to): its vector, its level and its parent's id. */
    private void flatBulk(StringBuilder out, int from, int to) throws IOException {
        for (int i = from; i < to; i++) {
            int p = i / PER_PARENT;
            out.append(json(Map.of("index", Map.of("_index", FLAT, "_id", parentId(p) + "#" + i % PER_PARENT)))).append('\n');
            Map<String, Object> doc = new LinkedHashMap<>();
            doc.put("parent", parentId(p));
            doc.put("level", level(i % PER_PARENT));
            doc.put("text", i % PER_PARENT == 0 ? "synthetic parent " + p : "synthetic child " + p + "." + i % PER_PARENT);
            doc.put("embedding", vector(i));
            out.append(json(doc)).append('\n');
        }
    }

    /**
     * Creates {@code index} and bulk-loads docs [0, count) in batches of {@code batch} from two client threads,
     * then refreshes and force-merges to 1 segment. Returns {bulk + refresh seconds, force-merge seconds}.
     */
    private double[] ingest(String index, String body, int count, int batch, BulkWriter writer) throws Exception {
        call("DELETE", "/" + index + "?ignore_unavailable=true", null);
        call("PUT", "/" + index, body);
        int batches = (count + batch - 1) / batch;
        int threads = 2;
        long start = System.nanoTime();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                futures.add(pool.submit(() -> {
                    for (int b = thread; b < batches; b += threads) {
                        StringBuilder out = new StringBuilder(batch * 5000);
                        writer.write(out, b * batch, Math.min(count, (b + 1) * batch));
                        Map<String, Object> r = call("POST", "/_bulk?filter_path=errors,items.*.error", out.toString());
                        if (Boolean.TRUE.equals(r.get("errors"))) {
                            throw new IllegalStateException("bulk into [" + index + "] failed: " + String.valueOf(r).substring(0,
                                Math.min(2000, String.valueOf(r).length())));
                        }
                        if (thread == 0 && (b / threads) % 20 == 0) {
                            System.out.printf(Locale.ROOT, "  %s: %,d / %,d docs, %.0f s%n", index, Math.min(count, (b + 1) * batch), count,
                                secs(start));
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : futures) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        call("POST", "/" + index + "/_refresh", null);
        double bulk = secs(start);
        call("PUT", "/" + index + "/_settings", "{\"index\": {\"refresh_interval\": null}}");
        System.out.printf(Locale.ROOT, "  %s: %,d docs in %.1f s; %s; force-merging…%n", index, count, bulk, segments(index));
        long merge = System.nanoTime();
        call("POST", "/" + index + "/_forcemerge?max_num_segments=1", null);
        call("POST", "/" + index + "/_refresh", null);
        double merged = secs(merge);
        System.out.printf(Locale.ROOT, "  %s: force-merged in %.1f s%n", index, merged);
        return new double[] { bulk, merged };
    }

    private boolean holds(String index, int docs) throws IOException {
        Request r = new Request("HEAD", "/" + index);
        if (client.performRequest(r).getStatusLine().getStatusCode() != 200) {
            return false;
        }
        Map<String, Object> count = call("GET", "/" + index + "/_count", null);
        Map<String, Object> mapping = get(get(call("GET", "/" + index + "/_mapping", null), index), "mappings");
        Object dimension = get(get(mapping, "properties"), "embedding").get("dimension");
        io.strata.chunkindex.ChunkIndexMeta meta = io.strata.chunkindex.ChunkIndexMeta.ofMapping(mapping);
        boolean format = meta == null || meta.format() == ChunkDocuments.FORMAT_VERSION; // flat: no _meta
        return ((Number) count.get("count")).intValue() == docs && ((Number) dimension).intValue() == dim && format;
    }

    private String segments(String index) throws IOException {
        Map<String, Object> s = call("GET", "/" + index + "/_segments", null);
        Map<String, Object> shards = get(get(get(s, "indices"), index), "shards");
        List<?> copies = (List<?>) shards.get("0");
        Map<String, Object> shard = cast(copies.get(0));
        return index + ": " + shard.get("num_search_segments") + " search segment(s)";
    }

    private String storeSize(String index) throws IOException {
        Map<String, Object> s = call("GET", "/" + index + "/_stats/store", null);
        Number bytes = (Number) get(get(get(get(s, "indices"), index), "primaries"), "store").get("size_in_bytes");
        return String.format(Locale.ROOT, "%.0f MB", bytes.doubleValue() / (1 << 20));
    }

    // ----------------------------------------------------------------------------------------------
    // the three methods
    // ----------------------------------------------------------------------------------------------

    record Result(List<String> parents, long tookMs) {}

    interface Search {
        Result search(String body) throws IOException;
    }

    record Method(String name, Search search) {}

    /** Request bodies per method and query, built before timing (the same vector text in every method). */
    private String[][] bodies(float[][] qs, String[] questions) throws IOException {
        String[][] out = new String[BESIDE_METHOD + 1][qs.length];
        // naming the vector fields in excludes is what lets the k-NN plugin skip rebuilding them from its derived source
        // (["text"] alone costs a chunk document's 8 vectors per hit); both indices fetched alike
        String texts = "\"_source\": {\"includes\": [\"text\"], \"excludes\": [\"embedding\", \"children.embedding\"]}";
        String flatTexts = "\"_source\": {\"includes\": [\"text\"], \"excludes\": [\"embedding\"]}";
        String none = "\"_source\": false";
        for (int i = 0; i < qs.length; i++) {
            String v = json(qs[i]);
            String mg = "\"query\": {\"multi_granular\": {\"vector\": " + v + ", \"k\": " + K + "}}}";
            String plain = "\"query\": {\"knn\": {\"embedding\": {\"vector\": " + v + ", \"k\": " + K + "}}}}";
            out[0][i] = "{\"size\": " + K + ", " + texts + ", " + mg;
            out[1][i] = "{\"size\": " + K + ", " + flatTexts + ", " + plain;
            out[2][i] = "{\"size\": " + K_GROUP + ", " + none + ", \"docvalue_fields\": [\"parent\"], \"query\": {\"knn\": {\"embedding\":"
                + " {\"vector\": " + v + ", \"k\": " + K_GROUP + "}}}}";
            out[3][i] = "{\"size\": " + K + ", " + none + ", " + mg;
            out[4][i] = "{\"size\": " + K + ", " + none + ", " + plain;
            // the same MAX written with the k-NN plugin's own queries on the chunk index: one nested search over the children
            // (which include every parent at level 0), and the former form, dis_max of the parent's and the children's searches
            String nested = "{\"nested\": {\"path\": \"children\", \"score_mode\": \"max\", \"query\": {\"knn\": {\"children.embedding\":"
                + " {\"vector\": " + v + ", \"k\": " + K + "}}}}}";
            out[5][i] = "{\"size\": " + K + ", " + none + ", \"query\": " + nested + "}";
            out[6][i] = "{\"size\": " + K + ", " + none + ", \"query\": {\"dis_max\": {\"queries\": [{\"knn\": {\"embedding\":"
                + " {\"vector\": " + v + ", \"k\": " + K + "}}}, " + nested + "]}}}";
            // the graph search without widening (num_candidates = k): what the default 2k candidates buy in recall and cost
            out[7][i] = "{\"size\": " + K + ", " + none + ", \"query\": {\"multi_granular\": {\"vector\": " + v + ", \"k\": " + K
                + ", \"num_candidates\": " + K + "}}}";
            String question = json(Map.of("q", questions[i]));
            question = question.substring(question.indexOf(':') + 1, question.length() - 1);
            for (int m = 0; m < 3; m++) {
                String mode = m == 1 ? "" : ", \"mode\": \"" + (m == 0 ? "dense" : "lexical") + "\"";
                out[FIRST_TEXT_METHOD + m][i] = "{\"size\": " + K + ", " + none + ", \"query\": {\"multi_granular\": {\"query_text\": "
                    + question + mode + ", \"k\": " + K + "}}}";
            }
            out[FIRST_TEXT_METHOD + 3][i] = "{\"texts\": [" + question + "], \"purpose\": \"query\"}";
            String explained = "\"query\": {\"multi_granular\": {\"query_text\": " + question + ", \"k\": " + K + ", \"explain_child\": true}}";
            out[FIRST_TEXT_METHOD + 4][i] = "{\"size\": " + K + ", " + none + ", " + explained + "}";
            out[FIRST_TEXT_METHOD + 5][i] = "{\"size\": " + K + ", " + none + ", " + explained + ", \"ext\": {\"strata_context\": "
                + "{\"budget\": " + CONTEXT_BUDGET + "}}}";
            String withEvidence = "\"query\": {\"multi_granular\": {\"query_text\": " + question + ", \"k\": " + K + ", \"explain_child\": "
                + "true, \"evidence\": {\"chunks\": 3, \"sentences\": 0}}}";
            out[FIRST_TEXT_METHOD + 6][i] = "{\"size\": " + K + ", " + none + ", " + withEvidence + "}";
            out[FIRST_TEXT_METHOD + 7][i] = "{\"size\": " + K + ", " + none + ", " + withEvidence + ", \"ext\": {\"strata_context\": "
                + "{\"budget\": " + CONTEXT_BUDGET + "}}}";
            String withSentences = withEvidence.replace("\"sentences\": 0", "\"sentences\": 3");
            out[FIRST_TEXT_METHOD + 8][i] = "{\"size\": " + K + ", " + none + ", " + withSentences + "}";
            out[FIRST_TEXT_METHOD + 9][i] = "{\"size\": " + K + ", " + none + ", " + withSentences + ", \"ext\": {\"strata_context\": "
                + "{\"budget\": " + CONTEXT_BUDGET + "}}}";
            for (int r = 0; r < SQ_BASE.length; r++) {
                out[FIRST_SQ_METHOD + r][i] = out[SQ_BASE[r]][i];
            }
            out[BEAM_METHOD][i] = "{\"size\": " + K + ", " + none + ", \"query\": {\"multi_granular\": {\"query_text\": " + question
                + ", \"k\": " + K + ", \"num_candidates\": " + HYBRID_WINDOW + "}}}";
            // the two bodies on two lines: the embedding's, then the lexical search's of the same question
            out[BESIDE_METHOD][i] = out[FIRST_TEXT_METHOD + 3][i] + "\n" + out[FIRST_TEXT_METHOD + 2][i];
        }
        return out;
    }

    /** Top-10 parents in one request on the chunk index: the hits are the parents (with their texts when asked). */
    private Result multiGranular(String body) throws IOException {
        return search(CHUNKS, body);
    }

    private Result search(String index, String body) throws IOException {
        Map<String, Object> r = call("POST", "/" + index + "/_search", body);
        List<String> ids = new ArrayList<>();
        for (Object h : (List<?>) get(r, "hits").get("hits")) {
            ids.add((String) cast(h).get("_id"));
        }
        return new Result(ids, ((Number) r.get("took")).longValue());
    }

    /** The same search through a search pipeline whose {@code strata_context} assembles the context. */
    private Result withContext(String body) throws IOException {
        Map<String, Object> r = call("POST", "/" + CHUNKS + "/_search?search_pipeline=" + CONTEXT_PIPELINE, body);
        if (!(get(r, "ext").get("strata_context") instanceof Map<?, ?> ctx) || ((List<?>) ctx.get("passages")).isEmpty()) {
            throw new IllegalStateException("strata_context assembled no context: " + r.get("ext"));
        }
        List<String> ids = new ArrayList<>();
        for (Object h : (List<?>) get(r, "hits").get("hits")) {
            ids.add((String) cast(h).get("_id"));
        }
        return new Result(ids, ((Number) r.get("took")).longValue());
    }

    /** The embedding of one question through {@code _embed}: what {@code query_text} adds before any search. */
    private Result embedOnly(String body) throws IOException {
        call("POST", "/_plugins/_strata/_embed", body);
        return new Result(List.of(), 0);
    }

    /**
     * The question's embedding while the lexical mode's search of it runs (sent at the same moment from another client
     * thread): the two pieces of work a hybrid query overlaps. Its latency against the embedding alone is what that overlap
     * costs the embedding on this machine; the search (a third of the embedding's time) ends first.
     */
    private Result embedBesideLexical(String bodies) throws IOException {
        int cut = bodies.indexOf('\n');
        Future<Result> lexical = beside.submit(() -> multiGranular(bodies.substring(cut + 1)));
        call("POST", "/_plugins/_strata/_embed", bodies.substring(0, cut));
        try {
            lexical.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        } catch (ExecutionException e) {
            throw new IOException(e.getCause());
        }
        return new Result(List.of(), 0);
    }

    /** Top-10 chunks of the flat index; their parents (with repeats: the recall shows what that costs). */
    private Result plainKnn(String body) throws IOException {
        Map<String, Object> r = call("POST", "/" + FLAT + "/_search", body);
        List<String> ids = new ArrayList<>();
        for (Object h : (List<?>) get(r, "hits").get("hits")) {
            String id = (String) cast(h).get("_id");
            ids.add(id.substring(0, id.lastIndexOf('#')));
        }
        return new Result(ids, ((Number) r.get("took")).longValue());
    }

    /**
     * What a client does without {@code multi_granular}: the top K' chunks with their {@code parent} doc values (K' = 70:
     * 7 chunks per parent, so always 10 distinct parents), grouped by parent with MAX, the best 10, then a second request
     * for those parents' texts (the parent's own flat document, {@code <parent>#0}).
     */
    private Result grouped(String body) throws IOException {
        Map<String, Object> r = call("POST", "/" + FLAT + "/_search", body);
        Map<String, Double> best = new HashMap<>();
        for (Object h : (List<?>) get(r, "hits").get("hits")) {
            Map<String, Object> hit = cast(h);
            String parent = (String) ((List<?>) get(hit, "fields").get("parent")).get(0);
            best.merge(parent, ((Number) hit.get("_score")).doubleValue(), Math::max);
        }
        List<String> ids = best.entrySet().stream().sorted(Map.Entry.<String, Double>comparingByValue().reversed()).limit(K)
            .map(Map.Entry::getKey).toList();
        StringBuilder mget = new StringBuilder("{\"docs\": [");
        for (int i = 0; i < ids.size(); i++) {
            mget.append(i == 0 ? "" : ", ").append("{\"_id\": \"").append(ids.get(i)).append("#0\", \"_source\": {\"includes\": [\"text\"],"
                + " \"excludes\": [\"embedding\"]}}");
        }
        Map<String, Object> texts = call("POST", "/" + FLAT + "/_mget", mget.append("]}").toString());
        for (Object d : (List<?>) texts.get("docs")) {
            if (!Boolean.TRUE.equals(cast(d).get("found"))) {
                throw new IllegalStateException("parent text not found: " + d);
            }
        }
        return new Result(ids, ((Number) r.get("took")).longValue());
    }

    // ----------------------------------------------------------------------------------------------
    // helpers
    // ----------------------------------------------------------------------------------------------

    private Map<String, Object> call(String method, String path, String body) throws IOException {
        return JsonRest.call(client, method, path, body);
    }

    private static String json(Map<String, ?> map) throws IOException {
        return JsonRest.json(map);
    }

    private static String json(float[] v) throws IOException {
        XContentBuilder b = XContentFactory.jsonBuilder().startArray();
        for (float x : v) {
            b.value(x);
        }
        b.endArray();
        return BytesReference.bytes(b).utf8ToString();
    }

    /** Nanoseconds in, milliseconds out. */
    private static double percentile(long[] nanos, double pct) {
        return rank(nanos, pct) / 1e6;
    }

    /** Nearest-rank percentile. */
    private static long rank(long[] values, double pct) {
        long[] sorted = values.clone();
        Arrays.sort(sorted);
        int rank = (int) Math.ceil(pct / 100 * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank))];
    }

    private static double secs(long since) {
        return (System.nanoTime() - since) / 1e9;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> cast(Object o) {
        return (Map<String, Object>) o;
    }

    private static Map<String, Object> get(Map<String, Object> map, String key) {
        return cast(map.get(key));
    }
}

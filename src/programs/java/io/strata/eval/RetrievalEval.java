package io.strata.eval;

import io.strata.quality.PairedBootstrap;
import io.strata.quality.RetrievalMetrics;
import io.strata.quality.SpanRelevance;
import io.strata.demo.Connection;
import io.strata.demo.JsonRest;
import org.apache.hc.core5.util.Timeout;
import org.opensearch.client.ResponseException;
import org.opensearch.client.RestClient;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Retrieval quality through the real plugin, {@code bin/strata-eval}: the LGMGC paper's Table 1 protocol (§4) on every
 * dataset ({@link EvalDataset}: GutenQA-Emma and the SQuAD 2.0 dev sample by default) for every row of a rows file
 * ({@link EvalRows}). For each dataset, θ and ingest (strategy at θ, child granularities, model), a
 * {@code multi_granular_chunking} pipeline ingests the documents once into a chunk index on a running node; every row
 * sharing that ingest sends every question through its {@code multi_granular} query (top 20 parents); DCG@k /
 * Recall@k ({@link RetrievalMetrics}) are averaged over θ, and each row's DCG@1 is compared with its baseline row's by a
 * paired bootstrap ({@link EvalReport}). Writes {@code target/eval/results.md} (also printed) and
 * {@code target/eval/runs.jsonl} (one line per dataset, row, θ and question: the ranked parents with their score, each
 * side's and each level's score ({@link #rankedHit}), the relevant ones, DCG@1, the question's bootstrap cluster and
 * half), so runs can be analysed and fusion variants replayed offline without querying again.
 *
 * <p>A "parents-only" row is {@code levels: [0]} on the multi-granular index: it ranks parents by their own vectors (or
 * texts) exactly as a parents-only index would, so such rows share the ingest of their multi-granular twin.
 */
public final class RetrievalEval {
    static final Path BUNDLED = Path.of("src/test/resources/eval/datasets");
    static final List<String> BUNDLED_DATASETS = List.of("gutenqa-emma", "squad2-dev-sample");
    /** Bundled, run when named ({@code --data covid-qa-sample}): a set no default was chosen on, to confirm them. */
    static final List<String> CONFIRMATION_DATASETS = List.of("covid-qa-sample");
    static final Set<String> OPTIONS = Set.of("url", "data", "corpus", "docs", "questions", "split", "name", "rows", "thetas", "only",
        "baseline", "k", "out", "runs", "reuse", "context", "context-tokenizer");
    static final int TOP = 20;
    /** Chunks per side and parent asked of {@code evidence} for runs.jsonl: every chunk of a parent at the default levels. */
    static final int EVIDENCE_CHUNKS = 20;
    /** A bulk request carries at most this many source documents or characters: few round trips, bounded requests. */
    static final int BULK_DOCS = 64;
    static final int BULK_CHARS = 512 * 1024;

    /** One ingest: rows with equal dataset, strategy at θ, granularities and model share it. */
    record Ingest(String index, String key, Map<String, Object> strategy, List<Object> granularities, String model,
                  Map<String, Object> options, Map<String, Object> sourceIndex) {}

    /** A finished ingest: its chunk index, its parents and every question's relevant parents there. */
    /**
     * @param truncated inputs the embedding models cut to their token limit during the ingest ({@code truncated} of
     *                  {@code _strata/stats}, summed over nodes and models); {@code limitSplits} the cuts Strata made so
     *                  that no chunk exceeds the limit ({@code ingest.limit_splits})
     */
    record IngestResult(String chunkIndex, int parents, long vectors, double seconds, boolean reused,
                        List<RetrievalMetrics.Relevance> relevance, long truncated, long limitSplits) {}

    public static void main(String[] args) throws Exception {
        long started = System.nanoTime();
        if (args.length == 0 && System.getenv("STRATA_EVAL_ARGS") != null) { // bin/strata-eval: one argument a line
            args = Files.readAllLines(Path.of(System.getenv("STRATA_EVAL_ARGS"))).stream().filter(s -> !s.isEmpty())
                .toArray(String[]::new);
        }
        Map<String, String> opts = options(args);
        String url = Connection.url(opts.get("url"), "http://127.0.0.1:9600");
        List<EvalDataset> datasets = datasets(opts);
        Path rowsFile = Path.of(opts.getOrDefault("rows", "src/test/resources/eval/rows.json"));
        List<EvalRows.Row> rows = EvalRows.parse(Files.readString(rowsFile), rowsFile.toString(), opts.get("only"), opts.get("baseline"));
        Map<String, List<Integer>> thetas = thetas(opts.get("thetas"), datasets);
        int k = Integer.parseInt(opts.getOrDefault("k", "100"));
        boolean reuse = Boolean.parseBoolean(opts.getOrDefault("reuse", "false"));
        Path out = Path.of(opts.getOrDefault("out", "target/eval/results.md"));
        Path runsFile = Path.of(opts.getOrDefault("runs", out.resolveSibling("runs.jsonl").toString()));
        Files.createDirectories(out.toAbsolutePath().getParent());
        Files.createDirectories(runsFile.toAbsolutePath().getParent());

        for (EvalDataset d : datasets) {
            System.out.printf(Locale.ROOT, "dataset %s (%s kind, %s): %d documents, %d questions; θ %s%n", d.name(),
                d.kind().name().toLowerCase(Locale.ROOT), d.source(), d.documents().size(), d.questions().size(), thetas.get(d.name()));
        }
        System.out.printf(Locale.ROOT, "%d rows from %s: %s; node %s%n", rows.size(), rowsFile, rows.stream().map(EvalRows.Row::name).toList(),
            url);

        List<EvalReport.DatasetResults> results = new ArrayList<>();
        List<String> notes = new ArrayList<>();
        // --context 64,128,...: evidence recall of strata_context and the two baselines at those budgets (ContextEval)
        int[] budgets = opts.containsKey("context") ? ints(opts.get("context"), "--context").stream().mapToInt(Integer::intValue).toArray()
            : null;
        List<String> contextTables = new ArrayList<>();
        try (RestClient client = Connection.builder(url)
            .setRequestConfigCallback(c -> c.setResponseTimeout(Timeout.ofHours(2)).setConnectionRequestTimeout(Timeout.ofMinutes(1)))
            .build(); BufferedWriter runs = Files.newBufferedWriter(runsFile, StandardCharsets.UTF_8)) {
            Map<String, IngestResult> ingests = new LinkedHashMap<>();
            long[] runStart = tokenLimit(client);
            ContextEval contextEval = budgets == null ? null : new ContextEval(client, Path.of("target/models",
                opts.getOrDefault("context-tokenizer", "e5-small-v2-q"), opts.getOrDefault("context-tokenizer", "e5-small-v2-q")
                    + "-tokenizer.json"), budgets);
            for (EvalDataset dataset : datasets) {
                EvalReport.DatasetResults dr = new EvalReport.DatasetResults(dataset);
                results.add(dr);
                Map<String, List<ContextEval.Outcomes>> contextByRow = new LinkedHashMap<>();
                Set<Integer> allThetas = new LinkedHashSet<>();
                rows.forEach(r -> allThetas.addAll(r.thetasOn(thetas.get(dataset.name()))));
                for (int theta : allThetas) {
                    for (EvalRows.Row row : rows) {
                        if (!row.thetasOn(thetas.get(dataset.name())).contains(theta)) {
                            continue;
                        }
                        Ingest ingest = ingestFor(dataset, row, theta);
                        IngestResult ir = ingests.get(ingest.key());
                        if (ir == null) {
                            ir = ingest(client, ingest, dataset, reuse, row.name());
                            ingests.put(ingest.key(), ir);
                            String line = ingestLine(dataset, theta, ingest, ir);
                            System.out.println(line);
                            notes.add(line);
                        }
                        long start = System.nanoTime();
                        EvalReport.Scores scores = evaluate(client, ir, dataset, row, theta, k, runs);
                        dr.put(row.name(), theta, scores);
                        System.out.printf(Locale.ROOT, "  %-32s %s θ=%d: DCG@1 %.1f  R@5 %.1f  R@20 %.1f  (%d queries, %.1f s)%n", row.name(),
                            dataset.name(), theta, 100 * scores.mean(0), 100 * scores.mean(RetrievalMetrics.KS.length + 2),
                            100 * scores.mean(2 * RetrievalMetrics.KS.length - 1), dataset.questions().size(), (System.nanoTime() - start) / 1e9);
                        if (contextEval != null) {
                            start = System.nanoTime();
                            ContextEval.Outcomes o = contextEval.evaluate(ir.chunkIndex(), dataset, row, k);
                            contextByRow.computeIfAbsent(row.name(), r -> new ArrayList<>()).add(o);
                            List<String> t = new ArrayList<>(contextEval.table(String.format(Locale.ROOT, "%s, %s, θ %d", row.name(),
                                dataset.name(), theta), List.of(o)));
                            List<ContextEval.Outcomes> base = contextByRow.get(row.baseline());
                            if (!row.name().equals(row.baseline()) && base != null && base.size() == contextByRow.get(row.name()).size()) {
                                // the baseline row ran this θ just before (rows run in file order): the same questions, paired
                                t.addAll(contextEval.versus(String.format(Locale.ROOT, "%s against %s, %s, θ %d", row.name(),
                                    row.baseline(), dataset.name(), theta), o, base.get(base.size() - 1)));
                            }
                            t.forEach(System.out::println);
                            contextTables.addAll(t);
                            System.out.printf(Locale.ROOT, "  (context: %.1f s)%n", (System.nanoTime() - start) / 1e9);
                        }
                        // after every row and θ, so a run cut short still leaves what it measured
                        write(out, withContext(report(rows, results, notes, opts, url, k, started), contextTables));
                    }
                }
                if (contextEval != null) {
                    for (var e : contextByRow.entrySet()) {
                        if (e.getValue().size() > 1) {
                            contextTables.addAll(contextEval.table(String.format(Locale.ROOT, "%s, %s, mean over θ %s (a question's score is "
                                + "its mean over θ)", e.getKey(), dataset.name(), thetas.get(dataset.name())), e.getValue()));
                        }
                    }
                }
            }
            // issue 21: what the embedding models cut to their token limit during the whole run (ingest and queries)
            long[] runEnd = tokenLimit(client);
            String limitLine = String.format(Locale.ROOT, "token limit over the run: %d inputs truncated by the embedding model "
                + "(ingest and queries), %d chunk cuts made to fit it (`_plugins/_strata/stats`)", runEnd[0] - runStart[0],
                runEnd[1] - runStart[1]);
            System.out.println(limitLine);
            notes.add(limitLine);
        }
        List<String> report = withContext(report(rows, results, notes, opts, url, k, started), contextTables);
        write(out, report);
        System.out.println();
        report.forEach(System.out::println);
        System.out.println("written to " + out + " and " + runsFile);
    }

    static Map<String, String> options(String[] args) {
        Map<String, String> opts = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i += 2) {
            String name = args[i].startsWith("--") ? args[i].substring(2) : null;
            if (name == null || !OPTIONS.contains(name)) {
                throw new IllegalArgumentException(String.format(Locale.ROOT, "unknown option [%s]; supported: %s", args[i],
                    OPTIONS.stream().sorted().map(o -> "--" + o).toList()));
            }
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException("[--" + name + "] needs a value");
            }
            opts.put(name, args[i + 1]);
        }
        return opts;
    }

    /** {@code --data} (folders or bundled names, comma-separated; default both bundled), or one {@code --corpus}/{@code --docs}. */
    static List<EvalDataset> datasets(Map<String, String> opts) throws IOException {
        boolean corpus = opts.containsKey("corpus");
        boolean docs = opts.containsKey("docs");
        if ((corpus ? 1 : 0) + (docs ? 1 : 0) + (opts.containsKey("data") ? 1 : 0) > 1) {
            throw new IllegalArgumentException("give one of [--data DIR,...], [--corpus FILE --questions FILE] and [--docs DIR --questions FILE]");
        }
        if (corpus || docs) {
            if (!opts.containsKey("questions")) {
                throw new IllegalArgumentException("[--" + (corpus ? "corpus" : "docs") + "] needs [--questions FILE] (JSON lines)");
            }
            Path questions = Path.of(opts.get("questions"));
            if (corpus) {
                Path file = Path.of(opts.get("corpus"));
                return List.of(EvalDataset.book(opts.getOrDefault("name", stem(file)), file, questions, opts.get("split")));
            }
            if (opts.containsKey("split")) {
                throw new IllegalArgumentException("[--split] applies to a book corpus ([--corpus]), not to [--docs]");
            }
            Path dir = Path.of(opts.get("docs"));
            return List.of(EvalDataset.spans(opts.getOrDefault("name", dir.toAbsolutePath().normalize().getFileName().toString()), dir, questions));
        }
        for (String o : List.of("questions", "name")) {
            if (opts.containsKey(o)) {
                throw new IllegalArgumentException("[--" + o + "] goes with [--corpus] or [--docs]; a [--data] folder has its questions.jsonl");
            }
        }
        List<EvalDataset> out = new ArrayList<>();
        List<String> names = opts.containsKey("data") ? Arrays.stream(opts.get("data").split(",")).map(String::strip).toList() : BUNDLED_DATASETS;
        for (String name : names) {
            Path dir = Path.of(name);
            if (!Files.isDirectory(dir) && (BUNDLED_DATASETS.contains(name) || CONFIRMATION_DATASETS.contains(name))) {
                dir = BUNDLED.resolve(name);
            }
            if (!Files.isDirectory(dir)) {
                throw new IllegalArgumentException(String.format(Locale.ROOT, "[--data] [%s] is not a folder nor a bundled dataset %s", name,
                    Stream.concat(BUNDLED_DATASETS.stream(), CONFIRMATION_DATASETS.stream()).toList()));
            }
            // --split is for the book folders among them; a SQuAD-kind folder refuses it only when it is the sole one
            EvalDataset d = EvalDataset.fromFolder(dir, Files.isDirectory(dir.resolve("docs")) ? null : opts.get("split"));
            out.add(d);
        }
        if (opts.containsKey("split") && out.stream().noneMatch(d -> d.kind() == EvalDataset.Kind.BOOK)) {
            throw new IllegalArgumentException("[--split] applies to book datasets; none of " + names + " is one");
        }
        return out;
    }

    /**
     * θ values per dataset: each dataset's default ({@link EvalDataset.Kind}), or {@code --thetas 300,500} for all, or
     * {@code --thetas gutenqa-emma=200,500;squad2-dev-sample=300} per dataset (others keep their default).
     */
    static Map<String, List<Integer>> thetas(String spec, List<EvalDataset> datasets) {
        Map<String, List<Integer>> out = new LinkedHashMap<>();
        datasets.forEach(d -> out.put(d.name(), d.defaultThetas()));
        if (spec == null) {
            return out;
        }
        if (!spec.contains("=")) {
            List<Integer> all = ints(spec, "[--thetas]");
            datasets.forEach(d -> out.put(d.name(), all));
            return out;
        }
        for (String part : spec.split(";")) {
            String[] kv = part.split("=", 2);
            String name = kv[0].strip();
            if (kv.length != 2 || !out.containsKey(name)) {
                throw new IllegalArgumentException(String.format(Locale.ROOT, "[--thetas] [%s]: expected DATASET=θ,θ with a dataset of %s", part,
                    out.keySet()));
            }
            out.put(name, ints(kv[1], "[--thetas] [" + name + "]"));
        }
        return out;
    }

    private static List<Integer> ints(String csv, String what) {
        try {
            List<Integer> out = Arrays.stream(csv.split(",")).map(String::strip).map(Integer::parseInt).toList();
            if (out.stream().anyMatch(t -> t < 1)) {
                throw new NumberFormatException();
            }
            return out;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(what + " must be positive integers separated by commas, got [" + csv + "]");
        }
    }

    /** The ingest a row needs at θ on a dataset; its key names everything the chunk index depends on, its documents included. */
    static Ingest ingestFor(EvalDataset dataset, EvalRows.Row row, int theta) throws IOException {
        Map<String, Object> strategy = row.strategyAt(theta);
        String key = String.join("|", dataset.name(), fingerprint(dataset), JsonRest.json(strategy), String.valueOf(row.granularities()),
            String.valueOf(row.model()));
        if (!row.processor().isEmpty()) { // rows without options keep their former keys (and reusable indices)
            key += "|" + JsonRest.json(new java.util.TreeMap<>(row.processor()));
        }
        if (!row.sourceIndex().isEmpty()) {
            key += "|source_index=" + JsonRest.json(row.sourceIndex());
        }
        String slug = dataset.name().toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "-");
        String index = String.format(Locale.ROOT, "eval-%s-%s-%d-%s", slug.substring(0, Math.min(40, slug.length())),
            strategy.get("type").toString().replace('_', '-'), theta, sha256(key).substring(0, 8));
        return new Ingest(index, key, strategy, row.granularities(), row.model(), row.processor(), row.sourceIndex());
    }

    static IngestResult ingest(RestClient client, Ingest ingest, EvalDataset dataset, boolean reuse, String rowName) throws IOException {
        String chunks = ingest.index() + "-chunks";
        if (reuse && reusable(client, ingest, chunks, dataset.documents().size())) {
            EvalDataset.Parents parents = parents(client, chunks, dataset);
            return new IngestResult(chunks, parents.spans().size(), 0, 0, true, relevance(dataset, parents), 0, 0);
        }
        for (String index : List.of(ingest.index(), chunks)) {
            try {
                JsonRest.call(client, "DELETE", "/" + index, null);
            } catch (ResponseException e) {
                if (e.getResponse().getStatusLine().getStatusCode() != 404) {
                    throw e;
                }
            }
        }
        if (!ingest.sourceIndex().isEmpty()) {
            JsonRest.call(client, "PUT", "/" + ingest.index(), JsonRest.json(ingest.sourceIndex()));
        }
        Map<String, Object> processor = new LinkedHashMap<>();
        processor.put("field", "body");
        processor.put("target_index", chunks);
        processor.put("strategy", ingest.strategy());
        if (ingest.granularities() != null) {
            processor.put("granularities", ingest.granularities());
        }
        if (ingest.model() != null) {
            processor.put("model", ingest.model());
        }
        processor.putAll(ingest.options());
        try {
            JsonRest.call(client, "PUT", "/_ingest/pipeline/" + ingest.index(),
                JsonRest.json(Map.of("processors", List.of(Map.of("multi_granular_chunking", processor)))));
        } catch (ResponseException e) {
            throw new IllegalStateException(String.format(Locale.ROOT, "row [%s]: the node refused its pipeline (strategy, granularities, "
                + "model): %s", rowName, e.getMessage()), e);
        }
        long before = vectorsEmbedded(client);
        long[] tokensBefore = tokenLimit(client);
        long start = System.nanoTime();
        List<EvalDataset.Document> docs = dataset.documents();
        int from = 0;
        while (from < docs.size()) {
            StringBuilder bulk = new StringBuilder();
            int to = from;
            int chars = 0;
            while (to < docs.size() && to - from < BULK_DOCS && (to == from || chars + docs.get(to).text().length() <= BULK_CHARS)) {
                chars += docs.get(to).text().length();
                bulk.append(JsonRest.json(Map.of("index", Map.of("_index", ingest.index(), "_id", docs.get(to).id())))).append('\n');
                bulk.append(JsonRest.json(Map.of("body", docs.get(to).text(), "title", docs.get(to).title()))).append('\n');
                to++;
            }
            Map<String, Object> response = JsonRest.call(client, "POST", "/_bulk?pipeline=" + ingest.index()
                + (to == docs.size() ? "&refresh=true" : ""), bulk.toString());
            if (Boolean.TRUE.equals(response.get("errors"))) {
                String body = JsonRest.json(response);
                throw new IllegalStateException("bulk into [" + ingest.index() + "] failed: " + body.substring(0, Math.min(2000, body.length())));
            }
            from = to;
        }
        JsonRest.call(client, "POST", "/" + chunks + "/_refresh", null);
        double seconds = (System.nanoTime() - start) / 1e9;
        long vectors = vectorsEmbedded(client) - before;
        long[] tokensAfter = tokenLimit(client);
        // recorded on the source index (the plugin keeps nothing in its _meta) so that --reuse can recognise the ingest
        JsonRest.call(client, "PUT", "/" + ingest.index() + "/_mapping", JsonRest.json(Map.of("_meta", Map.of("strata_eval",
            Map.of("key", ingest.key(), "documents", docs.size())))));
        EvalDataset.Parents parents = parents(client, chunks, dataset);
        return new IngestResult(chunks, parents.spans().size(), vectors, seconds, false, relevance(dataset, parents),
            tokensAfter[0] - tokensBefore[0], tokensAfter[1] - tokensBefore[1]);
    }

    /** True when an earlier run left this very ingest complete (same key, all documents). */
    @SuppressWarnings("unchecked")
    private static boolean reusable(RestClient client, Ingest ingest, String chunks, int documents) throws IOException {
        try {
            Map<String, Object> mapping = JsonRest.call(client, "GET", "/" + ingest.index() + "/_mapping", null);
            Map<String, Object> m = (Map<String, Object>) ((Map<String, Object>) mapping.get(ingest.index())).get("mappings");
            Object meta = m.get("_meta") instanceof Map<?, ?> mm ? mm.get("strata_eval") : null;
            if (!(meta instanceof Map<?, ?> eval) || !ingest.key().equals(eval.get("key"))) {
                return false;
            }
            return count(client, ingest.index()) == documents && count(client, chunks) > 0;
        } catch (ResponseException e) {
            if (e.getResponse().getStatusLine().getStatusCode() == 404) {
                return false;
            }
            throw e;
        }
    }

    private static long count(RestClient client, String index) throws IOException {
        return ((Number) JsonRest.call(client, "GET", "/" + index + "/_count", null).get("count")).longValue();
    }

    /** Every parent of the chunk index: relevance is decided over all of them, not just the retrieved ones. */
    private static EvalDataset.Parents parents(RestClient client, String chunks, EvalDataset dataset) throws IOException {
        boolean texts = dataset.kind() == EvalDataset.Kind.BOOK;
        List<SpanRelevance.Parent> spans = new ArrayList<>();
        List<String> normalized = new ArrayList<>();
        String fields = texts ? "[\"source_id\", \"start\", \"end\", \"text\"]" : "[\"source_id\", \"start\", \"end\"]";
        Map<String, Object> page = JsonRest.call(client, "POST", "/" + chunks + "/_search?scroll=5m",
            "{\"size\": 1000, \"sort\": [\"_doc\"], \"_source\": " + fields + "}");
        while (true) {
            List<Map<String, Object>> hits = hits(page);
            if (hits.isEmpty()) {
                break;
            }
            for (Map<String, Object> hit : hits) {
                Map<?, ?> source = (Map<?, ?>) hit.get("_source");
                spans.add(new SpanRelevance.Parent((String) hit.get("_id"), (String) source.get("source_id"),
                    ((Number) source.get("start")).intValue(), ((Number) source.get("end")).intValue()));
                if (texts) {
                    normalized.add(RetrievalMetrics.normalize((String) source.get("text")));
                }
            }
            page = JsonRest.call(client, "POST", "/_search/scroll", JsonRest.json(Map.of("scroll", "5m", "scroll_id", page.get("_scroll_id"))));
        }
        JsonRest.call(client, "DELETE", "/_search/scroll", JsonRest.json(Map.of("scroll_id", page.get("_scroll_id"))));
        return new EvalDataset.Parents(spans, normalized);
    }

    private static List<RetrievalMetrics.Relevance> relevance(EvalDataset dataset, EvalDataset.Parents parents) {
        return dataset.questions().stream().map(q -> dataset.relevant(q, parents)).toList();
    }

    /** Every question through the row's query; one runs.jsonl line each. */
    static EvalReport.Scores evaluate(RestClient client, IngestResult ir, EvalDataset dataset, EvalRows.Row row, int theta, int k,
                                      BufferedWriter runs) throws IOException {
        int n = RetrievalMetrics.KS.length;
        List<EvalDataset.Question> questions = dataset.questions();
        double[][] perQuestion = new double[questions.size()][2 * n];
        for (EvalDataset.Question q : questions) {
            Map<String, Object> mg = row.queryFor(q.text(), k);
            // each side's and each level's scores of every hit, for runs.jsonl (neither changes the ranking)
            mg.putIfAbsent("explain_child", true);
            mg.putIfAbsent("evidence", Map.of("chunks", EVIDENCE_CHUNKS, "sentences", 0));
            String body = JsonRest.json(Map.of("size", TOP, "_source", false, "query", Map.of("multi_granular", mg)));
            List<Map<String, Object>> hits;
            try {
                hits = hits(JsonRest.call(client, "POST", "/" + ir.chunkIndex() + "/_search", body));
            } catch (ResponseException e) {
                throw new IllegalStateException(String.format(Locale.ROOT, "row [%s]: its query failed on [%s] (θ %d): %s", row.name(),
                    ir.chunkIndex(), theta, e.getMessage()), e);
            }
            List<String> ranking = hits.stream().map(h -> (String) h.get("_id")).toList();
            RetrievalMetrics.Relevance relevance = ir.relevance().get(q.index());
            for (int i = 0; i < n; i++) {
                perQuestion[q.index()][i] = RetrievalMetrics.dcg(ranking, relevance.ids(), RetrievalMetrics.KS[i]);
                perQuestion[q.index()][n + i] = RetrievalMetrics.recall(ranking, relevance.ids(), RetrievalMetrics.KS[i]);
            }
            Map<String, Object> line = new LinkedHashMap<>();
            line.put("dataset", dataset.name());
            line.put("row", row.name());
            line.put("theta", theta);
            line.put("question", q.index());
            line.put("id", q.id());
            line.put("ranking", hits.stream().map(RetrievalEval::rankedHit).toList());
            line.put("relevant", relevance.ids().stream().sorted().toList());
            line.put("relevance_rule", relevance.rule().name().toLowerCase(Locale.ROOT));
            line.put("dcg1", perQuestion[q.index()][0]);
            line.put("cluster", q.cluster());
            if (q.half() != null) {
                line.put("half", q.half());
            }
            runs.write(JsonRest.json(line));
            runs.write('\n');
        }
        runs.flush();
        return new EvalReport.Scores(perQuestion);
    }

    /**
     * One hit of runs.jsonl: id and score; {@code side}/{@code level} of the chunk that scored it; {@code dense} and
     * {@code lexical}: each side's best chunk's level and raw score (null: the side did not score it); {@code levels}:
     * per side, each level's best raw score among the parent's top {@link #EVIDENCE_CHUNKS} chunks of that side
     * ({@code strata_evidence}), so fusion and level variants can be replayed on the retrieved parents offline.
     */
    @SuppressWarnings("unchecked")
    static Map<String, Object> rankedHit(Map<String, Object> hit) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("id", hit.get("_id"));
        out.put("score", hit.get("_score"));
        Map<String, Object> fields = hit.get("fields") instanceof Map<?, ?> f ? (Map<String, Object>) f : Map.of();
        if (fields.get("strata_best_child") instanceof List<?> l && !l.isEmpty() && l.get(0) instanceof Map<?, ?> best) {
            out.put("side", best.get("side"));
            out.put("level", best.get("level"));
            for (String side : List.of("dense", "lexical")) {
                if (best.containsKey(side)) {
                    out.put(side, best.get(side) instanceof Map<?, ?> m ? Map.of("level", m.get("level"), "score", m.get("score")) : null);
                }
            }
        }
        if (fields.get("strata_evidence") instanceof List<?> l && !l.isEmpty() && l.get(0) instanceof Map<?, ?> evidence) {
            Map<String, Object> levels = new LinkedHashMap<>();
            for (String side : List.of("dense", "lexical")) {
                if (evidence.get(side) instanceof List<?> chunks && !chunks.isEmpty()) {
                    Map<String, Double> perLevel = new java.util.TreeMap<>();
                    for (Object c : chunks) {
                        Map<?, ?> chunk = (Map<?, ?>) c;
                        perLevel.merge(String.valueOf(chunk.get("level")), ((Number) chunk.get("score")).doubleValue(), Math::max);
                    }
                    levels.put(side, perLevel);
                }
            }
            out.put("levels", levels);
        }
        return out;
    }

    private static String ingestLine(EvalDataset dataset, int theta, Ingest ingest, IngestResult ir) throws IOException {
        long fallback = ir.relevance().stream().filter(RetrievalMetrics.Relevance::fallback).count();
        String relevance = fallback == 0 ? "every question's relevant parent by containment"
            : String.format(Locale.ROOT, "%d of %d questions relevant by fallback (%s)", fallback, ir.relevance().size(),
                ir.relevance().stream().filter(RetrievalMetrics.Relevance::fallback)
                    .map(r -> String.format(Locale.ROOT, "%s %.2f", r.rule().name().toLowerCase(Locale.ROOT), r.score())).toList());
        String what = String.format(Locale.ROOT, "[%s %s model %s%s]", JsonRest.json(ingest.strategy()), ingest.granularities(),
            ingest.model() == null ? "default" : ingest.model(), ingest.options().isEmpty() ? "" : " " + JsonRest.json(ingest.options()));
        if (ir.reused()) {
            return String.format(Locale.ROOT, "ingest %s θ=%d: reused %s (%d parents) %s; %s", dataset.name(), theta, ir.chunkIndex(),
                ir.parents(), what, relevance);
        }
        return String.format(Locale.ROOT, "ingest %s θ=%d: %d parents, %d vectors in %.1f s (%.1f vectors/s), %d truncated by the model, "
            + "%d cut to fit its token limit %s; %s", dataset.name(), theta, ir.parents(), ir.vectors(), ir.seconds(),
            ir.vectors() / ir.seconds(), ir.truncated(), ir.limitSplits(), what, relevance);
    }

    private static List<String> report(List<EvalRows.Row> rows, List<EvalReport.DatasetResults> results, List<String> notes,
                                       Map<String, String> opts, String url, int k, long started) {
        List<String> lines = new ArrayList<>(EvalReport.render(rows, results));
        lines.add(String.format(Locale.ROOT, "`bin/strata-eval%s` — node %s, `k` %d, top %d parents; paired bootstrap %d resamples, seed %d; "
            + "%.1f min so far. Rows:", opts.entrySet().stream().filter(e -> !e.getKey().equals("url"))
                .map(e -> " --" + e.getKey() + " '" + e.getValue() + "'").reduce("", String::concat), url, k, TOP, PairedBootstrap.RESAMPLES,
            PairedBootstrap.SEED, (System.nanoTime() - started) / 60e9));
        lines.add("");
        lines.add("```");
        for (EvalRows.Row r : rows) {
            lines.add(String.format(Locale.ROOT, "%s: strategy %s, granularities %s, model %s, %squery %s, baseline %s", r.name(),
                json(r.strategy()), r.granularities() == null ? "default" : r.granularities(), r.model() == null ? "default" : r.model(),
                r.processor().isEmpty() ? "" : "processor " + json(r.processor()) + ", ", json(r.query()), r.baseline()));
        }
        lines.addAll(notes);
        lines.add("```");
        return lines;
    }

    private static List<String> withContext(List<String> report, List<String> contextTables) {
        List<String> out = new ArrayList<>(report);
        out.addAll(contextTables);
        return out;
    }

    private static String json(Map<String, Object> map) {
        try {
            return JsonRest.json(map);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static void write(Path out, List<String> lines) throws IOException {
        Files.writeString(out, String.join("\n", lines) + "\n");
    }

    private static String fingerprint(EvalDataset dataset) {
        StringBuilder sb = new StringBuilder();
        dataset.documents().forEach(d -> sb.append(d.id()).append('\0').append(d.text()).append('\0'));
        return sha256(sb.toString()).substring(0, 16);
    }

    private static String sha256(String s) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }

    private static String stem(Path file) {
        String name = file.getFileName().toString();
        return name.contains(".") ? name.substring(0, name.lastIndexOf('.')) : name;
    }

    /**
     * Summed over the nodes: inputs every embedding model truncated to its token limit ({@code inference.models.*.truncated}),
     * and the cuts Strata made so no chunk exceeds it ({@code ingest.limit_splits}, 0 on nodes that do not report it).
     */
    static long[] tokenLimit(RestClient client) throws IOException {
        long truncated = 0;
        long splits = 0;
        for (Object node : ((Map<?, ?>) JsonRest.call(client, "GET", "/_plugins/_strata/stats", null).get("nodes")).values()) {
            Map<?, ?> n = (Map<?, ?>) node;
            Object models = ((Map<?, ?>) n.get("inference")).get("models");
            if (models instanceof Map<?, ?> m) {
                for (Object model : m.values()) {
                    if (((Map<?, ?>) model).get("truncated") instanceof Number t) {
                        truncated += t.longValue();
                    }
                }
            }
            if (((Map<?, ?>) n.get("ingest")).get("limit_splits") instanceof Number l) {
                splits += l.longValue();
            }
        }
        return new long[] { truncated, splits };
    }

    private static long vectorsEmbedded(RestClient client) throws IOException {
        long total = 0;
        for (Object node : ((Map<?, ?>) JsonRest.call(client, "GET", "/_plugins/_strata/stats", null).get("nodes")).values()) {
            total += ((Number) ((Map<?, ?>) ((Map<?, ?>) node).get("ingest")).get("vectors_embedded")).longValue();
        }
        return total;
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> hits(Map<String, Object> response) {
        return (List<Map<String, Object>>) ((Map<String, Object>) response.get("hits")).get("hits");
    }

    private RetrievalEval() {}
}

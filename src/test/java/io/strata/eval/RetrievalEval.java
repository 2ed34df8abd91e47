package io.strata.eval;

import io.strata.demo.JsonRest;
import org.apache.hc.core5.http.HttpHost;
import org.apache.hc.core5.util.Timeout;
import org.opensearch.client.ResponseException;
import org.opensearch.client.RestClient;
import org.opensearch.common.xcontent.XContentHelper;
import org.opensearch.common.xcontent.json.JsonXContent;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Retrieval quality through the real plugin, the LGMGC paper's Table 1 protocol (§4) on a GutenQA-style set: for every
 * row (a strategy, its child granularities and the query levels) and every parent size θ, a
 * {@code multi_granular_chunking} pipeline ingests the corpus into a chunk index on a running node, every question
 * goes through the {@code multi_granular} query ({@code query_text}, top 20 parents), and DCG@k / Recall@k
 * ({@link RetrievalMetrics}) are averaged over θ with their standard deviation. {@code bin/strata-eval}.
 *
 * <p>Corpus: one text file cut into source documents before every heading line matched by {@code --split} (default:
 * {@code [VOLUME …. ]CHAPTER …} headings, so a book becomes its chapters; a file without such lines is one document).
 * Parents therefore never cross a chapter boundary (the paper chunks whole books; recursive chunking cuts at the blank
 * lines around headings first, so this changes at most one parent per chapter). Questions: JSONL with {@code question}
 * and {@code evidence}; {@code evidence_verbatim_in_book} is informational (relevance is decided per parent, see
 * {@link RetrievalMetrics}).
 *
 * <p>Rows that differ only in query {@code levels} share one ingest: the paper's parents-only chunker (only parent
 * chunks indexed and scored) is {@code levels: [0]} on the multi-granular index, which ranks parents by their own
 * vectors exactly as a parents-only index would. The one difference: the bundled int8 model quantises per batch, so a
 * parent's vector embedded among its children can differ slightly (cosine ≥ 0.99) from one embedded among parents.
 */
public final class RetrievalEval {
    private static final String THETA = "$theta";

    record Question(String question, String evidence, boolean verbatim) {}

    record Row(String name, Map<String, Object> strategy, List<Object> granularities, List<Object> levels, List<Integer> thetas) {}

    /** One ingest: what the pipeline gets; rows with the same one share the chunk index. */
    record Ingest(String index, Map<String, Object> strategy, List<Object> granularities) {}

    record IngestResult(String chunkIndex, int parents, long vectors, double seconds, List<String> ids, List<String> texts) {}

    public static void main(String[] args) throws Exception {
        if (args.length == 0 && System.getenv("STRATA_EVAL_ARGS") != null) { // bin/strata-eval: one argument a line
            args = Files.readAllLines(Path.of(System.getenv("STRATA_EVAL_ARGS"))).stream().filter(s -> !s.isEmpty())
                .toArray(String[]::new);
        }
        Map<String, String> opts = new LinkedHashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            if (!args[i].startsWith("--")) {
                throw new IllegalArgumentException("expected --option value, got [" + args[i] + "]");
            }
            opts.put(args[i].substring(2), args[i + 1]);
        }
        String url = opts.getOrDefault("url", "http://127.0.0.1:9600");
        Path data = Path.of(opts.getOrDefault("data", "../shared/data/gutenqa-emma"));
        Path corpus = Path.of(opts.getOrDefault("corpus", data.resolve("book.txt").toString()));
        Path questionsFile = Path.of(opts.getOrDefault("questions", data.resolve("questions.jsonl").toString()));
        String split = opts.getOrDefault("split", "(?m)(?=^(?:VOLUME [IVXLC]+\\. )?CHAPTER [IVXLC]+$)");
        Path rowsFile = Path.of(opts.getOrDefault("rows", "src/test/resources/eval/rows.json"));
        List<Integer> thetas = parseInts(opts.getOrDefault("thetas", "200,300,500"));
        int k = Integer.parseInt(opts.getOrDefault("k", "100"));
        Path out = Path.of(opts.getOrDefault("out", "target/eval/results.md"));
        String only = opts.get("only"); // comma-separated row names (substring match), for partial runs

        List<String> documents = new ArrayList<>();
        for (String d : Files.readString(corpus).split(split)) {
            if (!d.isBlank()) {
                documents.add(d);
            }
        }
        List<Question> questions = new ArrayList<>();
        for (String line : Files.readAllLines(questionsFile)) {
            if (line.isBlank()) {
                continue;
            }
            Map<String, Object> q = XContentHelper.convertToMap(JsonXContent.jsonXContent, line, false);
            questions.add(new Question((String) q.get("question"), (String) q.get("evidence"),
                !Boolean.FALSE.equals(q.get("evidence_verbatim_in_book"))));
        }
        List<Row> rows = readRows(rowsFile, thetas, only);
        System.out.printf(Locale.ROOT, "corpus %s: %d documents, %d words; %d questions (%d marked non-verbatim); %d rows; θ %s; node %s%n",
            corpus, documents.size(), Files.readString(corpus).split("\\s+").length, questions.size(),
            questions.stream().filter(q -> !q.verbatim()).count(), rows.size(), thetas, url);

        List<String> report = new ArrayList<>();
        try (RestClient client = RestClient.builder(HttpHost.create(url))
            .setRequestConfigCallback(c -> c.setResponseTimeout(Timeout.ofHours(2)).setConnectionRequestTimeout(Timeout.ofMinutes(1)))
            .build()) {
            Map<String, IngestResult> ingests = new LinkedHashMap<>();
            // [row][θ index][metric]: DCG@k then Recall@k for each k
            List<double[][]> scores = new ArrayList<>();
            List<String> notes = new ArrayList<>();
            for (Row row : rows) {
                double[][] perTheta = new double[row.thetas().size()][];
                for (int t = 0; t < row.thetas().size(); t++) {
                    int theta = row.thetas().get(t);
                    Ingest ingest = ingestFor(row, theta);
                    IngestResult ir = ingests.get(ingest.index());
                    if (ir == null) {
                        ir = ingest(client, ingest, documents);
                        ingests.put(ingest.index(), ir);
                        String line = String.format(Locale.ROOT, "ingest %-28s θ=%d: %d parents, %d vectors in %.1f s (%.1f vectors/s) [%s %s]",
                            row.name(), theta, ir.parents(), ir.vectors(), ir.seconds(), ir.vectors() / ir.seconds(),
                            JsonRest.json(ingest.strategy()), ingest.granularities());
                        System.out.println(line);
                        notes.add(line);
                    }
                    long start = System.nanoTime();
                    perTheta[t] = evaluate(client, ir, row, questions, k, notes, theta);
                    System.out.printf(Locale.ROOT, "  %-28s θ=%d: DCG@1 %.1f  R@5 %.1f  R@20 %.1f  (%d queries, %.1f s)%n", row.name(), theta,
                        perTheta[t][0], perTheta[t][RetrievalMetrics.KS.length + 2], perTheta[t][2 * RetrievalMetrics.KS.length - 1],
                        questions.size(), (System.nanoTime() - start) / 1e9);
                }
                scores.add(perTheta);
                // after every row, so a long run that is cut short still leaves its finished rows
                write(out, table(rows.subList(0, scores.size()), scores), notes);
            }
            report.addAll(table(rows, scores));
            report.add("");
            report.add(String.format(Locale.ROOT, "Corpus `%s` (%d source documents), %d questions from `%s`; θ per row as listed; "
                + "`multi_granular` query with `query_text`, `k` %d, `size` 20; node %s. Relevance, DCG and Recall: see "
                + "`io.strata.eval.RetrievalMetrics`.", corpus, documents.size(), questions.size(), questionsFile, k, url));
            report.add("");
            report.add("```");
            report.addAll(notes);
            report.add("```");
        }
        Files.createDirectories(out.toAbsolutePath().getParent());
        Files.writeString(out, String.join("\n", report) + "\n");
        System.out.println();
        report.forEach(System.out::println);
        System.out.println("\nwritten to " + out);
    }

    private static void write(Path out, List<String> table, List<String> notes) throws IOException {
        List<String> lines = new ArrayList<>(table);
        lines.add("");
        lines.add("```");
        lines.addAll(notes);
        lines.add("```");
        Files.createDirectories(out.toAbsolutePath().getParent());
        Files.writeString(out, String.join("\n", lines) + "\n");
    }

    @SuppressWarnings("unchecked")
    static List<Row> readRows(Path file, List<Integer> defaultThetas, String only) throws IOException {
        Map<String, Object> root = XContentHelper.convertToMap(JsonXContent.jsonXContent, Files.readString(file), true);
        List<Row> rows = new ArrayList<>();
        for (Object o : (List<Object>) root.get("rows")) {
            Map<String, Object> r = (Map<String, Object>) o;
            String name = (String) r.get("name");
            if (only != null && java.util.Arrays.stream(only.split(",")).noneMatch(s -> name.contains(s.strip()))) {
                continue;
            }
            List<Integer> thetas = r.containsKey("thetas")
                ? ((List<Object>) r.get("thetas")).stream().map(x -> ((Number) x).intValue()).filter(defaultThetas::contains).toList()
                : defaultThetas;
            if (thetas.isEmpty()) {
                thetas = List.of(((Number) ((List<Object>) r.get("thetas")).get(0)).intValue());
            }
            rows.add(new Row(name, (Map<String, Object>) r.get("strategy"), (List<Object>) r.get("granularities"),
                (List<Object>) r.get("levels"), thetas));
        }
        return rows;
    }

    /** The row's pipeline at θ: every {@code "$theta"} value in its strategy becomes θ. */
    static Ingest ingestFor(Row row, int theta) throws IOException {
        Map<String, Object> strategy = new LinkedHashMap<>();
        row.strategy().forEach((key, v) -> strategy.put(key, THETA.equals(v) ? theta : v));
        String key = JsonRest.json(strategy) + "|" + row.granularities();
        String index = "eval-" + strategy.get("type").toString().replace('_', '-') + "-" + theta + "-"
            + Integer.toHexString(key.hashCode());
        return new Ingest(index, strategy, row.granularities());
    }

    static IngestResult ingest(RestClient client, Ingest ingest, List<String> documents) throws IOException {
        String chunks = ingest.index() + "-chunks";
        for (String index : List.of(ingest.index(), chunks)) {
            try {
                JsonRest.call(client, "DELETE", "/" + index, null);
            } catch (ResponseException e) {
                if (e.getResponse().getStatusLine().getStatusCode() != 404) {
                    throw e;
                }
            }
        }
        Map<String, Object> processor = new LinkedHashMap<>();
        processor.put("field", "body");
        processor.put("target_index", chunks);
        processor.put("strategy", ingest.strategy());
        if (ingest.granularities() != null) {
            processor.put("granularities", ingest.granularities());
        }
        JsonRest.call(client, "PUT", "/_ingest/pipeline/" + ingest.index(),
            JsonRest.json(Map.of("processors", List.of(Map.of("multi_granular_chunking", processor)))));
        long before = vectorsEmbedded(client);
        long start = System.nanoTime();
        int batch = 8;
        for (int from = 0; from < documents.size(); from += batch) {
            StringBuilder bulk = new StringBuilder();
            for (int d = from; d < Math.min(documents.size(), from + batch); d++) {
                bulk.append(JsonRest.json(Map.of("index", Map.of("_index", ingest.index(), "_id", "doc-" + d)))).append('\n');
                bulk.append(JsonRest.json(Map.of("body", documents.get(d)))).append('\n');
            }
            boolean last = from + batch >= documents.size();
            Map<String, Object> response = JsonRest.call(client, "POST", "/_bulk?pipeline=" + ingest.index() + (last ? "&refresh=true" : ""),
                bulk.toString());
            if (Boolean.TRUE.equals(response.get("errors"))) {
                throw new IllegalStateException("bulk failed: " + JsonRest.json(response).substring(0, 2000));
            }
        }
        JsonRest.call(client, "POST", "/" + chunks + "/_refresh", null);
        double seconds = (System.nanoTime() - start) / 1e9;
        long vectors = vectorsEmbedded(client) - before;
        // every parent, for relevance (containment or ROUGE-L over all parents, not just the retrieved ones)
        List<String> ids = new ArrayList<>();
        List<String> texts = new ArrayList<>();
        Map<String, Object> page = JsonRest.call(client, "POST", "/" + chunks + "/_search?scroll=5m",
            "{\"size\": 1000, \"sort\": [\"_doc\"], \"_source\": [\"text\"]}");
        while (true) {
            List<Map<String, Object>> hits = hits(page);
            if (hits.isEmpty()) {
                break;
            }
            for (Map<String, Object> hit : hits) {
                ids.add((String) hit.get("_id"));
                texts.add(RetrievalMetrics.normalize((String) source(hit).get("text")));
            }
            page = JsonRest.call(client, "POST", "/_search/scroll",
                JsonRest.json(Map.of("scroll", "5m", "scroll_id", page.get("_scroll_id"))));
        }
        JsonRest.call(client, "DELETE", "/_search/scroll", JsonRest.json(Map.of("scroll_id", page.get("_scroll_id"))));
        return new IngestResult(chunks, ids.size(), vectors, seconds, ids, texts);
    }

    /** DCG@k for k in KS, then Recall@k for k in KS, in percent. */
    static double[] evaluate(RestClient client, IngestResult ir, Row row, List<Question> questions, int k, List<String> notes, int theta)
        throws IOException {
        int n = RetrievalMetrics.KS.length;
        double[] sums = new double[2 * n];
        int byRouge = 0;
        List<String> lowRouge = new ArrayList<>();
        for (Question q : questions) {
            RetrievalMetrics.Relevance relevance = RetrievalMetrics.relevant(q.evidence(), ir.ids(), ir.texts());
            if (relevance.byRouge()) {
                byRouge++;
                if (relevance.rougeRecall() < 0.9) {
                    lowRouge.add(String.format(Locale.ROOT, "%.2f", relevance.rougeRecall()));
                }
            }
            Map<String, Object> mg = new LinkedHashMap<>();
            mg.put("query_text", q.question());
            mg.put("k", k);
            if (row.levels() != null) {
                mg.put("levels", row.levels());
            }
            Map<String, Object> body = Map.of("size", 20, "_source", false, "query", Map.of("multi_granular", mg));
            List<String> ranking = hits(JsonRest.call(client, "POST", "/" + ir.chunkIndex() + "/_search", JsonRest.json(body))).stream()
                .map(h -> (String) h.get("_id")).toList();
            for (int i = 0; i < n; i++) {
                sums[i] += RetrievalMetrics.dcg(ranking, relevance.ids(), RetrievalMetrics.KS[i]);
                sums[n + i] += RetrievalMetrics.recall(ranking, relevance.ids(), RetrievalMetrics.KS[i]);
            }
        }
        notes.add(String.format(Locale.ROOT, "  %s θ=%d: %d of %d evidences matched by ROUGE-L (no parent contains them)%s", row.name(), theta,
            byRouge, questions.size(), lowRouge.isEmpty() ? "" : ", best recall below 0.9: " + lowRouge));
        for (int i = 0; i < sums.length; i++) {
            sums[i] = 100 * sums[i] / questions.size();
        }
        return sums;
    }

    static List<String> table(List<Row> rows, List<double[][]> scores) {
        int n = RetrievalMetrics.KS.length;
        List<String> out = new ArrayList<>();
        StringBuilder header = new StringBuilder("| method | θ |");
        StringBuilder rule = new StringBuilder("|---|---|");
        for (String metric : List.of("DCG", "R")) {
            for (int kk : RetrievalMetrics.KS) {
                header.append(' ').append(metric).append('@').append(kk).append(" |");
                rule.append("---|");
            }
        }
        out.add(header.toString());
        out.add(rule.toString());
        for (int r = 0; r < rows.size(); r++) {
            double[][] perTheta = scores.get(r);
            StringBuilder line = new StringBuilder("| ").append(rows.get(r).name()).append(" | ")
                .append(rows.get(r).thetas().stream().map(String::valueOf).reduce((a, b) -> a + ", " + b).orElse("")).append(" |");
            for (int m = 0; m < 2 * n; m++) {
                double[] values = new double[perTheta.length];
                for (int t = 0; t < perTheta.length; t++) {
                    values[t] = perTheta[t][m];
                }
                double[] ms = RetrievalMetrics.meanStd(values);
                line.append(String.format(Locale.ROOT, " %.2f ± %.2f |", ms[0], ms[1]));
            }
            out.add(line.toString());
        }
        return out;
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

    @SuppressWarnings("unchecked")
    private static Map<String, Object> source(Map<String, Object> hit) {
        return (Map<String, Object>) hit.get("_source");
    }

    private static List<Integer> parseInts(String csv) {
        return java.util.Arrays.stream(csv.split(",")).map(String::strip).map(Integer::parseInt).toList();
    }

    private RetrievalEval() {}
}

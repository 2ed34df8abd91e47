package io.strata.eval;

import io.strata.compare.CompareQuestion;
import io.strata.demo.Connection;
import io.strata.demo.JsonRest;
import org.apache.hc.core5.util.Timeout;
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

/**
 * {@code bin/strata-eval --compare A,B --questions FILE.jsonl [--url URL] [--k 10] [--mode hybrid|dense|lexical]
 * [--out FILE]}: two chunk indices on the questions of a JSONL file, through the node's {@code _compare} (one
 * implementation of the scoring and the paired bootstrap), printed and written as a Markdown table.
 *
 * <p>The file holds one question a line, as {@code _compare}'s {@code questions}: {@code {"question": "...",
 * "source_id": "...", "span": [start, end], "cluster": "..."}} ({@code span} and {@code cluster} optional; blank lines
 * skipped). A bad line stops the run before anything is sent, with an error naming the file, the line and the field.
 */
public final class CompareCli {
    private CompareCli() {}

    public static void main(String[] args) throws Exception {
        if (args.length == 0 && System.getenv("STRATA_EVAL_ARGS") != null) { // bin/strata-eval: one argument a line
            args = Files.readAllLines(Path.of(System.getenv("STRATA_EVAL_ARGS"))).stream().filter(s -> !s.isEmpty()).toArray(String[]::new);
        }
        Map<String, String> opts = options(args);
        String[] sides = opts.getOrDefault("compare", "").split(",");
        if (sides.length != 2 || sides[0].isBlank() || sides[1].isBlank()) {
            throw new IllegalArgumentException("--compare needs two chunk indices, A,B; got [" + opts.get("compare") + "]");
        }
        if (!opts.containsKey("questions")) {
            throw new IllegalArgumentException("--compare needs --questions FILE.jsonl: one {\"question\", \"source_id\", \"span\"?, "
                + "\"cluster\"?} a line");
        }
        List<CompareQuestion> questions = read(Path.of(opts.get("questions")));
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("a", sides[0].strip());
        body.put("b", sides[1].strip());
        body.put("questions", questions.stream().map(CompareQuestion::asMap).toList());
        body.put("k", Integer.parseInt(opts.getOrDefault("k", "10")));
        if (opts.containsKey("mode")) {
            body.put("query", Map.of("mode", opts.get("mode")));
        }
        String url = Connection.url(opts.get("url"), "http://127.0.0.1:9200");
        Map<String, Object> answer;
        // one request answers when every question was searched on both sides: 1,000 questions take minutes
        try (RestClient client = Connection.builder(url).setRequestConfigCallback(c -> c.setResponseTimeout(Timeout.ofHours(1))).build()) {
            answer = JsonRest.call(client, "POST", "/_plugins/_strata/_compare", JsonRest.json(body));
        }
        String markdown = markdown(answer);
        System.out.print(markdown);
        Path out = Path.of(opts.getOrDefault("out", "target/eval/compare.md"));
        if (out.getParent() != null) {
            Files.createDirectories(out.getParent());
        }
        Files.writeString(out, markdown);
        System.out.println("written to " + out);
    }

    private static Map<String, String> options(String[] args) {
        List<String> known = List.of("compare", "questions", "url", "k", "mode", "out");
        Map<String, String> out = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            String key = args[i].startsWith("--") ? args[i].substring(2) : null;
            if (key == null || !known.contains(key) || i + 1 >= args.length) {
                throw new IllegalArgumentException("[" + args[i] + "]: with --compare the options are --" + String.join(" VALUE, --", known)
                    + " VALUE");
            }
            out.put(key, args[++i]);
        }
        return out;
    }

    /** The questions of a JSONL file; a bad line is an error naming the file, the line (1-based) and the field. */
    static List<CompareQuestion> read(Path file) throws IOException {
        List<String> lines = Files.readAllLines(file);
        List<CompareQuestion> out = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty()) {
                continue;
            }
            String where = file + " line " + (i + 1);
            Map<String, Object> map;
            try {
                map = XContentHelper.convertToMap(JsonXContent.jsonXContent, line, true);
            } catch (RuntimeException e) {
                throw new IllegalArgumentException(where + ": not a JSON object: " + e.getMessage(), e);
            }
            try {
                out.add(CompareQuestion.parse(map, null, ""));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(where + ": " + e.getMessage(), e);
            }
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException(file + ": no questions (one JSON object a line)");
        }
        return out;
    }

    /** {@code _compare}'s answer as Markdown: both sides and B − A with its interval, then which side found each question. */
    @SuppressWarnings("unchecked")
    static String markdown(Map<String, Object> answer) {
        Map<String, Object> a = (Map<String, Object>) answer.get("a");
        Map<String, Object> b = (Map<String, Object>) answer.get("b");
        Map<String, Object> difference = (Map<String, Object>) answer.get("difference");
        int k = ((Number) answer.get("k")).intValue();
        StringBuilder md = new StringBuilder();
        md.append(String.format(Locale.ROOT, "| | A: %s | B: %s | B − A [95%% CI] |%n|---|---|---|---|%n", a.get("index"), b.get("index")));
        String[][] metrics = { { "dcg@1", "DCG@1" }, { "dcg@k", "DCG@" + k }, { "recall@k", "Recall@" + k } };
        for (String[] m : metrics) {
            Map<String, Object> d = (Map<String, Object>) difference.get(m[0]);
            String delta = String.format(Locale.ROOT, "%s [%s, %s]", signed(d.get("mean")), signed(d.get("low")), signed(d.get("high")));
            md.append(String.format(Locale.ROOT, "| %s | %.1f | %.1f | %s |%n", m[1], number(a.get(m[0])), number(b.get(m[0])),
                Boolean.TRUE.equals(d.get("excludes_zero")) ? "**" + delta + "**" : delta));
        }
        md.append(String.format(Locale.ROOT, "%n%s questions in %s clusters, k %d; A holds the chunks of [%s], B of [%s]. Scores in %%; "
            + "B − A with a paired-bootstrap 95%% CI over clusters (%s resamples, seed %s); bold: the CI excludes 0.%n%n",
            answer.get("questions"), answer.get("clusters"), k, a.get("source_index"), b.get("source_index"), answer.get("resamples"),
            answer.get("seed")));
        md.append("| # | question | source_id | A rank | B rank | found by |\n|---|---|---|---|---|---|\n");
        List<Map<String, Object>> perQuestion = (List<Map<String, Object>>) answer.get("per_question");
        for (int i = 0; i < perQuestion.size(); i++) {
            Map<String, Object> q = perQuestion.get(i);
            int rankA = ((Number) ((Map<String, Object>) q.get("a")).get("rank")).intValue();
            int rankB = ((Number) ((Map<String, Object>) q.get("b")).get("rank")).intValue();
            String foundBy = rankA > 0 && rankB > 0 ? "both" : rankA > 0 ? "A" : rankB > 0 ? "B" : "neither";
            md.append(String.format(Locale.ROOT, "| %d | %s | %s | %s | %s | %s |%n", i + 1, cell(q.get("question")), cell(q.get("source_id")),
                rankA > 0 ? rankA : "–", rankB > 0 ? rankB : "–", foundBy));
        }
        return md.toString();
    }

    private static double number(Object v) {
        return ((Number) v).doubleValue();
    }

    private static String signed(Object v) {
        if (Math.abs(number(v)) < 0.05) {
            return "0.0"; // no "−0.0"
        }
        return String.format(Locale.ROOT, "%+.1f", number(v)).replace("-", "−");
    }

    private static String cell(Object v) {
        return String.valueOf(v).replace("|", "\\|").replace("\n", " ");
    }
}

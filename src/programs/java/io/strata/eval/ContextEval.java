package io.strata.eval;

import io.strata.quality.PairedBootstrap;
import io.strata.quality.RetrievalMetrics;
import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import io.strata.demo.JsonRest;
import org.opensearch.client.RestClient;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Evidence recall of a context under a token budget ({@code bin/strata-eval --context 64,128,...}): for every question, the
 * row's query (with {@code explain_child}), then
 * <ul>
 *   <li><b>strata_context</b>: the same search through a search pipeline with the {@code strata_context} processor, the
 *       budget in {@code ext.strata_context}, once with each seed policy ({@code seeds: chunk} and {@code evidence}; the
 *       query asks for {@code evidence} so hits carry their other matched chunks and best sentences);</li>
 *   <li><b>parents</b> (what applications do): the hits' parent texts in rank order, joined by a blank line, the last one
 *       cut at a word so the whole fits;</li>
 *   <li><b>matched chunks</b>: each hit's {@code strata_best_child} the same way.</li>
 * </ul>
 * Tokens are counted with the tokenizer of the chunk index's model (its tokenizer.json, special tokens left out), as the
 * processor counts them. A question's evidence is found when one passage holds it: SQuAD kind, a stretch of the answer's
 * document whose offsets contain the answer span; book kind, a passage whose whitespace-normalised text contains the
 * whitespace-normalised evidence (strict containment: no ROUGE-L fallback, so questions whose evidence no parent holds
 * count as missed by all three).
 */
final class ContextEval {
    static final String PIPELINE = "strata-eval-context";
    static final int HITS = 10;

    /** One question's outcome per budget: found (1) or not (0), for each method. */
    /** Per budget, per question: evidence found (1) or not (0); {@code clusters}: the questions' bootstrap clusters. */
    record Outcomes(double[][] context, double[][] evidence, double[][] parents, double[][] chunks, int[] clusters) {}

    private record Stretch(String doc, int start, int end, String text) {}

    private final RestClient client;
    private final HuggingFaceTokenizer tokenizer;
    private final int[] budgets;

    ContextEval(RestClient client, Path tokenizerJson, int[] budgets) throws IOException {
        this.client = client;
        // not newInstance: it keeps tokenizer.json's truncation at 512 tokens, which would undercount a stretch above it
        this.tokenizer = HuggingFaceTokenizer.builder().optTokenizerPath(tokenizerJson).optTruncation(false).optPadding(false).build();
        this.budgets = budgets;
        JsonRest.call(client, "PUT", "/_search/pipeline/" + PIPELINE, """
            {"description": "bin/strata-eval --context", "response_processors": [{"strata_context": {}}]}""");
    }

    private int tokens(String text) {
        return text.isEmpty() ? 0 : tokenizer.encode(text, false, false).getIds().length;
    }

    @SuppressWarnings("unchecked")
    Outcomes evaluate(String chunkIndex, EvalDataset dataset, EvalRows.Row row, int k) throws IOException {
        int n = dataset.questions().size();
        double[][] context = new double[budgets.length][n];
        double[][] evidence = new double[budgets.length][n];
        double[][] parents = new double[budgets.length][n];
        double[][] chunks = new double[budgets.length][n];
        for (EvalDataset.Question q : dataset.questions()) {
            Map<String, Object> mg = new LinkedHashMap<>(row.queryFor(q.text(), k));
            mg.put("explain_child", true);
            mg.put("evidence", Map.of("chunks", 3, "sentences", 3));
            Map<String, Object> search = new LinkedHashMap<>();
            search.put("size", HITS);
            search.put("_source", List.of("text", "start", "end", "source_id"));
            search.put("query", Map.of("multi_granular", mg));
            List<Map<String, Object>> hits = (List<Map<String, Object>>) ((Map<String, Object>) JsonRest.call(client, "POST",
                "/" + chunkIndex + "/_search", JsonRest.json(search)).get("hits")).get("hits");
            List<Stretch> parentTexts = new ArrayList<>();
            List<Stretch> matched = new ArrayList<>();
            for (Map<String, Object> hit : hits) {
                Map<String, Object> src = (Map<String, Object>) hit.get("_source");
                String doc = (String) src.get("source_id");
                parentTexts.add(new Stretch(doc, (Integer) src.get("start"), (Integer) src.get("end"), (String) src.get("text")));
                Map<String, Object> best = (Map<String, Object>) ((List<Object>) ((Map<String, Object>) hit.get("fields"))
                    .get("strata_best_child")).get(0);
                int s = (Integer) best.get("start");
                int e = (Integer) best.get("end");
                // the chunk's own text as explain_child quotes it: a table piece's parent text starts with its repeated
                // header row, so offsets from the parent's start would slice the wrong characters (docs/query.md's rule)
                String text = (String) best.get("text");
                matched.add(new Stretch(doc, s, e, text));
            }
            for (int b = 0; b < budgets.length; b++) {
                context[b][q.index()] = found(q, dataset, context(chunkIndex, search, budgets[b], "chunk"));
                evidence[b][q.index()] = found(q, dataset, context(chunkIndex, search, budgets[b], "evidence"));
                parents[b][q.index()] = found(q, dataset, fill(parentTexts, budgets[b]));
                chunks[b][q.index()] = found(q, dataset, fill(matched, budgets[b]));
            }
        }
        return new Outcomes(context, evidence, parents, chunks, dataset.clusters());
    }

    /** The passages strata_context assembles for {@code search} under {@code budget} with the seed policy {@code seeds}. */
    @SuppressWarnings("unchecked")
    private List<Stretch> context(String chunkIndex, Map<String, Object> search, int budget, String seeds) throws IOException {
        Map<String, Object> withBudget = new LinkedHashMap<>(search);
        withBudget.put("_source", false);
        withBudget.put("ext", Map.of("strata_context", Map.of("budget", budget, "seeds", seeds)));
        Map<String, Object> r = JsonRest.call(client, "POST", "/" + chunkIndex + "/_search?search_pipeline=" + PIPELINE,
            JsonRest.json(withBudget));
        Map<String, Object> ctx = (Map<String, Object>) ((Map<String, Object>) r.get("ext")).get("strata_context");
        List<Stretch> passages = new ArrayList<>();
        for (Map<String, Object> p : (List<Map<String, Object>>) ctx.get("passages")) {
            passages.add(new Stretch((String) p.get("source_id"), (Integer) p.get("start"), (Integer) p.get("end"), (String) p.get("text")));
        }
        if ((Integer) ctx.get("tokens") > budget) {
            throw new IllegalStateException("strata_context returned " + ctx.get("tokens") + " tokens for a budget of " + budget);
        }
        return passages;
    }

    /** {@code stretches} in order, joined by a blank line, while the whole fits {@code budget}; the last cut at a word. */
    List<Stretch> fill(List<Stretch> stretches, int budget) {
        List<Stretch> out = new ArrayList<>();
        int used = 0;
        int separator = tokens("\n\n");
        for (Stretch s : stretches) {
            int cost = tokens(s.text()) + (out.isEmpty() ? 0 : separator);
            if (used + cost <= budget) {
                out.add(s);
                used += cost;
                continue;
            }
            int room = budget - used - (out.isEmpty() ? 0 : separator);
            // the longest prefix of whole words within the room: binary search over word ends
            List<Integer> ends = new ArrayList<>();
            for (int i = 1; i <= s.text().length(); i++) {
                if (i == s.text().length() || Character.isWhitespace(s.text().charAt(i)) && !Character.isWhitespace(s.text().charAt(i - 1))) {
                    ends.add(i);
                }
            }
            int lo = 0;
            int hi = ends.size() - 1;
            int fit = -1;
            while (lo <= hi && room > 0) {
                int mid = (lo + hi) >>> 1;
                if (tokens(s.text().substring(0, ends.get(mid))) <= room) {
                    fit = mid;
                    lo = mid + 1;
                } else {
                    hi = mid - 1;
                }
            }
            if (fit >= 0) {
                int cut = ends.get(fit);
                out.add(new Stretch(s.doc(), s.start(), s.start() + cut, s.text().substring(0, cut)));
            }
            break;
        }
        return out;
    }

    private static double found(EvalDataset.Question q, EvalDataset dataset, List<Stretch> stretches) {
        if (dataset.kind() == EvalDataset.Kind.SPANS) {
            for (Stretch s : stretches) {
                if (s.doc().equals(q.doc()) && s.start() <= q.answerStart() && q.answerEnd() <= s.end()) {
                    return 1;
                }
            }
            return 0;
        }
        String needle = RetrievalMetrics.normalize(q.evidence());
        for (Stretch s : stretches) {
            if (RetrievalMetrics.normalize(s.text()).contains(needle)) {
                return 1;
            }
        }
        return 0;
    }

    /** The report's lines for one dataset and θ, or, with several θ, the mean over them (question scores averaged first). */
    List<String> table(String title, List<Outcomes> perTheta) {
        List<String> lines = new ArrayList<>();
        lines.add("");
        lines.add("#### Evidence recall under a token budget — " + title);
        lines.add("");
        lines.add("| budget (tokens) | strata_context, chunk seeds | evidence seeds | parents, cut (apps today) | matched chunks "
            + "| chunk seeds: Δ vs parents [95% CI] | Δ vs chunks | evidence seeds: Δ vs parents | Δ vs chunks | Δ evidence − chunk seeds |");
        lines.add("|---|---|---|---|---|---|---|---|---|---|");
        for (int b = 0; b < budgets.length; b++) {
            double[] c = meanOver(perTheta, o -> o.context(), b);
            double[] s = meanOver(perTheta, o -> o.evidence(), b);
            double[] p = meanOver(perTheta, o -> o.parents(), b);
            double[] m = meanOver(perTheta, o -> o.chunks(), b);
            int[] k = perTheta.get(0).clusters();
            lines.add(String.format(Locale.ROOT, "| %d | %.1f | %.1f | %.1f | %.1f | %s | %s | %s | %s | %s |", budgets[b], 100 * mean(c),
                100 * mean(s), 100 * mean(p), 100 * mean(m), interval(PairedBootstrap.clustered(c, p, k)),
                interval(PairedBootstrap.clustered(c, m, k)), interval(PairedBootstrap.clustered(s, p, k)), interval(PairedBootstrap.clustered(s, m, k)),
                interval(PairedBootstrap.clustered(s, c, k))));
        }
        return lines;
    }

    /**
     * One row's assembled context against its baseline row's on the same questions, dataset and θ: each seed policy's
     * evidence recall and the paired-bootstrap difference, budget by budget.
     */
    List<String> versus(String title, Outcomes row, Outcomes baseline) {
        List<String> lines = new ArrayList<>();
        lines.add("");
        lines.add("#### Evidence recall, row against row — " + title);
        lines.add("");
        lines.add("| budget (tokens) | evidence seeds: row | baseline | Δ [95% CI] | chunk seeds: row | baseline | Δ [95% CI] |");
        lines.add("|---|---|---|---|---|---|---|");
        for (int b = 0; b < budgets.length; b++) {
            lines.add(String.format(Locale.ROOT, "| %d | %.1f | %.1f | %s | %.1f | %.1f | %s |", budgets[b], 100 * mean(row.evidence()[b]),
                100 * mean(baseline.evidence()[b]), interval(PairedBootstrap.clustered(row.evidence()[b], baseline.evidence()[b], row.clusters())),
                100 * mean(row.context()[b]), 100 * mean(baseline.context()[b]),
                interval(PairedBootstrap.clustered(row.context()[b], baseline.context()[b], row.clusters()))));
        }
        return lines;
    }

    private static String interval(PairedBootstrap.Interval i) {
        String s = String.format(Locale.ROOT, "%+.1f [%+.1f, %+.1f]", 100 * i.mean(), 100 * i.low(), 100 * i.high());
        return i.excludesZero() ? "**" + s + "**" : s;
    }

    private static double[] meanOver(List<Outcomes> perTheta, java.util.function.Function<Outcomes, double[][]> method, int b) {
        int n = method.apply(perTheta.get(0))[b].length;
        double[] out = new double[n];
        for (Outcomes o : perTheta) {
            double[] v = method.apply(o)[b];
            for (int q = 0; q < n; q++) {
                out[q] += v[q] / perTheta.size();
            }
        }
        return out;
    }

    private static double mean(double[] v) {
        double s = 0;
        for (double x : v) {
            s += x;
        }
        return s / v.length;
    }
}

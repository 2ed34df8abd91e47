package io.strata.eval;

import io.strata.quality.PairedBootstrap;
import io.strata.quality.RetrievalMetrics;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;

/**
 * The Markdown of {@code bin/strata-eval}: per dataset, DCG@k / Recall@k (mean ± population std over θ) and the
 * DCG@1 difference against each row's baseline with its paired cluster-bootstrap 95% interval ({@link PairedBootstrap},
 * clusters of {@link EvalDataset.Question#cluster()}; a question's score is its mean over the row's θ values); per θ,
 * DCG@1 with the same interval on that θ alone; for a set split by article, DCG@1 of each half with its own interval;
 * and a combined table over all datasets, each weighted equally (stratified bootstrap). Each dataset's heading says
 * whether defaults were chosen on it (tuning) or not. Differences whose interval excludes 0 are bold. Built from
 * whatever has been measured so far, so a run cut short still reports its finished parts.
 */
public final class EvalReport {
    /** Per-question values, {@code [question][metric]}: DCG@k for {@link RetrievalMetrics#KS}, then Recall@k; each in [0, 1]. */
    public record Scores(double[][] perQuestion) {
        double[] column(int metric) {
            double[] out = new double[perQuestion.length];
            for (int q = 0; q < out.length; q++) {
                out[q] = perQuestion[q][metric];
            }
            return out;
        }

        double mean(int metric) {
            double sum = 0;
            for (double[] q : perQuestion) {
                sum += q[metric];
            }
            return sum / perQuestion.length;
        }
    }

    /** What was measured on one dataset: row name → θ → scores, in insertion order. */
    public static final class DatasetResults {
        final EvalDataset dataset;
        final Map<String, Map<Integer, Scores>> byRow = new LinkedHashMap<>();

        public DatasetResults(EvalDataset dataset) {
            this.dataset = dataset;
        }

        public void put(String row, int theta, Scores scores) {
            byRow.computeIfAbsent(row, r -> new LinkedHashMap<>()).put(theta, scores);
        }

        /** Per question, the mean over the row's measured θ values of one metric; null when nothing was measured. */
        double[] perQuestionMean(String row, int metric) {
            Map<Integer, Scores> perTheta = byRow.get(row);
            if (perTheta == null || perTheta.isEmpty()) {
                return null;
            }
            double[] out = new double[dataset.questions().size()];
            for (Scores s : perTheta.values()) {
                double[] c = s.column(metric);
                for (int q = 0; q < out.length; q++) {
                    out[q] += c[q] / perTheta.size();
                }
            }
            return out;
        }
    }

    private EvalReport() {}

    public static List<String> render(List<EvalRows.Row> rows, List<DatasetResults> results) {
        List<String> out = new ArrayList<>();
        for (DatasetResults r : results) {
            out.addAll(datasetTables(rows, r));
            out.add("");
        }
        if (results.size() > 1) {
            out.addAll(combined(rows, results));
            out.add("");
        }
        return out;
    }

    static List<String> datasetTables(List<EvalRows.Row> rows, DatasetResults r) {
        EvalDataset d = r.dataset;
        int n = RetrievalMetrics.KS.length;
        TreeSet<Integer> thetas = new TreeSet<>();
        r.byRow.values().forEach(m -> thetas.addAll(m.keySet()));
        List<String> out = new ArrayList<>();
        out.add(String.format(Locale.ROOT, "### %s (%s kind: %d documents, %d questions in %d clusters; θ %s)%s", d.name(),
            d.kind().name().toLowerCase(Locale.ROOT), d.documents().size(), d.questions().size(), d.clusterCount(), join(thetas),
            d.role() == null ? "" : " — " + d.role()));
        out.add("");
        StringBuilder header = new StringBuilder("| row |");
        StringBuilder rule = new StringBuilder("|---|");
        for (String metric : List.of("DCG", "R")) {
            for (int k : RetrievalMetrics.KS) {
                header.append(' ').append(metric).append('@').append(k).append(" |");
                rule.append("---|");
            }
        }
        out.add(header.append(" Δ DCG@1 vs baseline [95% CI] |").toString());
        out.add(rule.append("---|").toString());
        for (EvalRows.Row row : rows) {
            Map<Integer, Scores> perTheta = r.byRow.get(row.name());
            if (perTheta == null) {
                continue;
            }
            StringBuilder line = new StringBuilder("| ").append(row.name()).append(" |");
            for (int m = 0; m < 2 * n; m++) {
                int metric = m;
                double[] values = perTheta.values().stream().mapToDouble(s -> 100 * s.mean(metric)).toArray();
                double[] ms = RetrievalMetrics.meanStd(values);
                line.append(String.format(Locale.ROOT, " %.2f ± %.2f |", ms[0], ms[1]));
            }
            line.append(' ').append(delta(row, r.perQuestionMean(row.name(), 0), r.perQuestionMean(row.baseline(), 0), d.clusters()))
                .append(" |");
            out.add(line.toString());
        }
        out.add("");
        out.add("DCG@1 per θ; in brackets the difference to the row's baseline on that θ and its 95% CI:");
        out.add("");
        StringBuilder th = new StringBuilder("| row |");
        StringBuilder tr = new StringBuilder("|---|");
        for (int t : thetas) {
            th.append(" θ ").append(t).append(" |");
            tr.append("---|");
        }
        out.add(th.toString());
        out.add(tr.toString());
        for (EvalRows.Row row : rows) {
            Map<Integer, Scores> perTheta = r.byRow.get(row.name());
            if (perTheta == null) {
                continue;
            }
            Map<Integer, Scores> base = r.byRow.getOrDefault(row.baseline(), Map.of());
            StringBuilder line = new StringBuilder("| ").append(row.name()).append(" |");
            for (int t : thetas) {
                Scores s = perTheta.get(t);
                if (s == null) {
                    line.append(" |");
                    continue;
                }
                line.append(String.format(Locale.ROOT, " %.2f", 100 * s.mean(0)));
                if (!row.name().equals(row.baseline())) {
                    Scores b = base.get(t);
                    line.append(b == null ? "" : " (" + interval(PairedBootstrap.clustered(s.column(0), b.column(0), d.clusters())) + ")");
                }
                line.append(" |");
            }
            out.add(line.toString());
        }
        if (d.hasHalves()) {
            out.addAll(halves(rows, r));
        }
        return out;
    }

    /**
     * DCG@1 on each half of a set split by article, as the mean over θ and on each θ, the difference to the baseline with
     * its own interval.
     */
    static List<String> halves(List<EvalRows.Row> rows, DatasetResults r) {
        EvalDataset d = r.dataset;
        List<String> out = new ArrayList<>();
        out.add("");
        out.add("DCG@1 on each half (mean over θ, then each θ); choose on the tuning half, confirm on the confirmation half:");
        out.add("");
        out.add("| row | θ | tuning half | Δ vs baseline [95% CI] | confirmation half | Δ vs baseline [95% CI] |");
        out.add("|---|---|---|---|---|---|");
        int[] clusters = d.clusters();
        for (EvalRows.Row row : rows) {
            Map<Integer, Scores> perTheta = r.byRow.get(row.name());
            if (perTheta == null || perTheta.isEmpty()) {
                continue;
            }
            Map<Integer, Scores> base = r.byRow.getOrDefault(row.baseline(), Map.of());
            out.add(halvesLine(row, "mean", r.perQuestionMean(row.name(), 0), r.perQuestionMean(row.baseline(), 0), d, clusters));
            for (int t : new java.util.TreeSet<>(perTheta.keySet())) {
                out.add(halvesLine(row, Integer.toString(t), perTheta.get(t).column(0), base.get(t) == null ? null : base.get(t).column(0),
                    d, clusters));
            }
        }
        return out;
    }

    private static String halvesLine(EvalRows.Row row, String theta, double[] mine, double[] theirs, EvalDataset d, int[] clusters) {
        StringBuilder line = new StringBuilder("| ").append(row.name()).append(" | ").append(theta).append(" |");
        for (String half : List.of(EvalDataset.TUNING, EvalDataset.CONFIRMATION)) {
            int[] qs = d.questions().stream().filter(q -> half.equals(q.half())).mapToInt(EvalDataset.Question::index).toArray();
            double[] a = pick(mine, qs);
            line.append(String.format(Locale.ROOT, " %.2f |", 100 * java.util.Arrays.stream(a).average().orElse(0)));
            line.append(' ').append(theirs == null || qs.length == 0 ? "" : row.name().equals(row.baseline()) ? "baseline"
                : interval(PairedBootstrap.clustered(a, pick(theirs, qs), pick(clusters, qs))) + " vs " + row.baseline()).append(" |");
        }
        return line.toString();
    }

    private static double[] pick(double[] values, int[] indices) {
        return java.util.Arrays.stream(indices).mapToDouble(i -> values[i]).toArray();
    }

    private static int[] pick(int[] values, int[] indices) {
        return java.util.Arrays.stream(indices).map(i -> values[i]).toArray();
    }

    static List<String> combined(List<EvalRows.Row> rows, List<DatasetResults> results) {
        List<String> out = new ArrayList<>();
        out.add("### Combined: " + String.join(" + ", results.stream().map(r -> r.dataset.name()).toList())
            + " (each dataset weighted equally; stratified paired cluster bootstrap)");
        out.add("");
        StringBuilder header = new StringBuilder("| row |");
        StringBuilder rule = new StringBuilder("|---|");
        for (DatasetResults r : results) {
            header.append(" DCG@1 ").append(r.dataset.name()).append(" |");
            rule.append("---|");
        }
        out.add(header.append(" DCG@1 mean | Δ DCG@1 vs baseline [95% CI] |").toString());
        out.add(rule.append("---|---|").toString());
        for (EvalRows.Row row : rows) {
            List<double[]> a = new ArrayList<>();
            List<double[]> b = new ArrayList<>();
            List<int[]> clusters = new ArrayList<>();
            StringBuilder line = new StringBuilder("| ").append(row.name()).append(" |");
            double sum = 0;
            for (DatasetResults r : results) {
                double[] mine = r.perQuestionMean(row.name(), 0);
                double[] theirs = r.perQuestionMean(row.baseline(), 0);
                if (mine != null) {
                    double mean = 100 * java.util.Arrays.stream(mine).average().orElse(0);
                    sum += mean;
                    line.append(String.format(Locale.ROOT, " %.2f |", mean));
                    a.add(mine);
                    b.add(theirs);
                    clusters.add(r.dataset.clusters());
                } else {
                    line.append(" |");
                }
            }
            if (a.size() < results.size()) {
                continue; // not measured on every dataset (yet)
            }
            line.append(String.format(Locale.ROOT, " %.2f |", sum / results.size()));
            if (row.name().equals(row.baseline())) {
                line.append(" baseline |");
            } else if (b.contains(null)) {
                line.append(" |");
            } else {
                line.append(' ').append(interval(PairedBootstrap.stratified(a, b, clusters))).append(" vs ").append(row.baseline()).append(" |");
            }
            out.add(line.toString());
        }
        return out;
    }

    private static String delta(EvalRows.Row row, double[] mine, double[] theirs, int[] clusters) {
        if (row.name().equals(row.baseline())) {
            return "baseline";
        }
        if (mine == null || theirs == null) {
            return "";
        }
        return interval(PairedBootstrap.clustered(mine, theirs, clusters)) + " vs " + row.baseline();
    }

    /** "+1.11 [−5.56, +7.78]" in points of DCG@1 (percent); bold when the interval excludes 0. */
    static String interval(PairedBootstrap.Interval i) {
        String s = String.format(Locale.ROOT, "%+.2f [%+.2f, %+.2f]", 100 * i.mean(), 100 * i.low(), 100 * i.high());
        return i.excludesZero() ? "**" + s + "**" : s;
    }

    private static String join(Iterable<Integer> values) {
        StringBuilder sb = new StringBuilder();
        for (int v : values) {
            sb.append(sb.isEmpty() ? "" : ", ").append(v);
        }
        return sb.toString();
    }
}

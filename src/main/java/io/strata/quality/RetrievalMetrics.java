package io.strata.quality;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The GutenQA scoring of the LGMGC paper (§4, "Datasets and Metrics"), which follows LumberChunker's: for each question,
 * a ranked list of parent chunks and the set of relevant ones.
 *
 * <ul>
 *   <li>Relevance: a parent is relevant when it contains the evidence, whitespace-normalised. When no parent does
 *   (the evidence was paraphrased by the generator, or a strategy cut it between two parents), the parent(s) with the
 *   highest ROUGE-L recall of the evidence are relevant — the paper's re-labelling ("we compute its ROUGE score with
 *   respect to each chunk and select the chunk with the highest score"); for verbatim evidence inside a chunk that
 *   chunk has recall 1, so the two rules agree.</li>
 *   <li>DCG@k = Σ_{i ≤ k} rel_i / log2(i + 1) with binary relevance, counting only the first relevant hit (one needle
 *   per question; with overlapping parents several can hold it, which would otherwise push DCG above 1). So
 *   DCG@1 = Recall@1, as in the paper's Table 1.</li>
 *   <li>Recall@k = 1 when a relevant parent is among the first k.</li>
 * </ul>
 * Scores are percentages averaged over questions.
 */
public final class RetrievalMetrics {
    public static final int[] KS = { 1, 2, 5, 10, 20 };

    private RetrievalMetrics() {}

    /** DCG@k of one ranking: 1 / log2(r + 1) for the rank r (1-based) of the first relevant hit within k, else 0. */
    public static double dcg(List<String> ranking, Set<String> relevant, int k) {
        int r = firstRelevantRank(ranking, relevant);
        return r > 0 && r <= k ? 1 / (Math.log(r + 1) / Math.log(2)) : 0;
    }

    /** Recall@k of one ranking: 1 when a relevant hit is among the first k. */
    public static double recall(List<String> ranking, Set<String> relevant, int k) {
        int r = firstRelevantRank(ranking, relevant);
        return r > 0 && r <= k ? 1 : 0;
    }

    /** 1-based rank of the first relevant id, 0 when there is none. */
    public static int firstRelevantRank(List<String> ranking, Set<String> relevant) {
        for (int i = 0; i < ranking.size(); i++) {
            if (relevant.contains(ranking.get(i))) {
                return i + 1;
            }
        }
        return 0;
    }

    /** Collapses whitespace runs to one space and trims. */
    public static String normalize(String s) {
        return s.strip().replaceAll("\\s+", " ");
    }

    /** How the relevant parents of a question were found. */
    public enum Rule {
        /** They contain the evidence (book kind) or the answer span (SQuAD kind). */
        CONTAINS,
        /** No parent contains the evidence: the best ROUGE-L recall (book kind). */
        ROUGE_L,
        /** No parent contains the answer span (cut between parents): the largest overlap with it (SQuAD kind). */
        OVERLAP,
        /** No parent of the question's document overlaps its answer (that document was not ingested). */
        NONE
    }

    /**
     * The relevant parents of one question and the rule that found them; {@code score} is 1 for {@link Rule#CONTAINS},
     * else the fallback's best value (ROUGE-L recall, or the fraction of the answer covered), 0 for {@link Rule#NONE}.
     */
    public record Relevance(Set<String> ids, Rule rule, double score) {
        public boolean fallback() {
            return rule != Rule.CONTAINS;
        }
    }

    /**
     * The relevant parents among {@code ids}/{@code texts} (parallel lists; texts already {@link #normalize}d): those
     * containing the normalised evidence; else those with the highest ROUGE-L recall (ties all count).
     */
    public static Relevance relevant(String evidence, List<String> ids, List<String> texts) {
        String needle = normalize(evidence);
        List<String> containing = new ArrayList<>();
        for (int i = 0; i < ids.size(); i++) {
            if (texts.get(i).contains(needle)) {
                containing.add(ids.get(i));
            }
        }
        if (containing.isEmpty() == false) {
            return new Relevance(Set.copyOf(containing), Rule.CONTAINS, 1);
        }
        List<String> evidenceTokens = RougeL.tokens(needle);
        double best = -1;
        List<String> argmax = new ArrayList<>();
        for (int i = 0; i < ids.size(); i++) {
            double r = RougeL.recall(evidenceTokens, RougeL.tokens(texts.get(i)));
            if (r > best + 1e-12) {
                best = r;
                argmax.clear();
            }
            if (Math.abs(r - best) <= 1e-12) {
                argmax.add(ids.get(i));
            }
        }
        return new Relevance(Set.copyOf(argmax), Rule.ROUGE_L, best);
    }

    /** Mean and population standard deviation (numpy's default {@code np.std}, which the paper presumably used). */
    public static double[] meanStd(double[] values) {
        double mean = 0;
        for (double v : values) {
            mean += v;
        }
        mean /= values.length;
        double ss = 0;
        for (double v : values) {
            ss += (v - mean) * (v - mean);
        }
        return new double[] { mean, Math.sqrt(ss / values.length) };
    }

    static String pct(double v) {
        return String.format(Locale.ROOT, "%.2f", v);
    }
}

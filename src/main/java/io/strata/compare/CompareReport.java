package io.strata.compare;

import io.strata.quality.PairedBootstrap;
import io.strata.quality.RetrievalMetrics;
import org.opensearch.core.xcontent.ToXContentObject;
import org.opensearch.core.xcontent.XContentBuilder;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What {@code _compare} answers: per side DCG@1, DCG@k and Recall@k (percentages, averaged over the questions; the
 * eval's {@link RetrievalMetrics}), the paired difference B − A of each with its 95% paired-bootstrap interval over
 * the questions' clusters ({@link PairedBootstrap}, fixed seed: the same questions give the same interval), and per
 * question each side's rank of the first relevant parent and its top hit.
 */
final class CompareReport implements ToXContentObject {
    /** One side: the name the request gave, the chunk index it is, and the source index whose chunks it holds. */
    record Side(String field, String name, String chunkIndex, String source, String sourceUuid) {}

    private static final String[] METRICS = { "dcg@1", "dcg@k", "recall@k" };

    private final CompareRequest request;
    private final Side[] sides;
    private final List<List<List<CompareRun.Hit>>> rankings;
    /** [side][metric][question], in percent. */
    private final double[][][] scores;
    private final int[][] ranks;
    private final int[] clusters;
    private final int clusterCount;
    private final PairedBootstrap.Interval[] differences = new PairedBootstrap.Interval[METRICS.length];

    CompareReport(CompareRequest request, Side a, Side b, List<List<List<CompareRun.Hit>>> rankings) {
        this.request = request;
        this.sides = new Side[] { a, b };
        this.rankings = rankings;
        int n = request.questions().size();
        scores = new double[2][METRICS.length][n];
        ranks = new int[2][n];
        for (int side = 0; side < 2; side++) {
            for (int q = 0; q < n; q++) {
                CompareQuestion question = request.questions().get(q);
                List<String> ids = new ArrayList<>();
                Set<String> relevant = new HashSet<>();
                for (CompareRun.Hit hit : rankings.get(side).get(q)) {
                    ids.add(hit.id());
                    if (question.relevant(hit.sourceId(), hit.start(), hit.end())) {
                        relevant.add(hit.id());
                    }
                }
                scores[side][0][q] = 100 * RetrievalMetrics.dcg(ids, relevant, 1);
                scores[side][1][q] = 100 * RetrievalMetrics.dcg(ids, relevant, request.k());
                scores[side][2][q] = 100 * RetrievalMetrics.recall(ids, relevant, request.k());
                ranks[side][q] = RetrievalMetrics.firstRelevantRank(ids, relevant);
            }
        }
        Map<String, Integer> ids = new LinkedHashMap<>();
        clusters = new int[n];
        for (int q = 0; q < n; q++) {
            clusters[q] = ids.computeIfAbsent(request.questions().get(q).cluster(), c -> ids.size());
        }
        clusterCount = ids.size();
        for (int m = 0; m < METRICS.length; m++) {
            differences[m] = PairedBootstrap.clustered(scores[1][m], scores[0][m], clusters);
        }
    }

    @Override
    public XContentBuilder toXContent(XContentBuilder builder, Params params) throws IOException {
        builder.startObject();
        for (int side = 0; side < 2; side++) {
            Side s = sides[side];
            builder.startObject(s.field()).field("index", s.name()).field("chunk_index", s.chunkIndex()).field("source_index", s.source());
            for (int m = 0; m < METRICS.length; m++) {
                builder.field(METRICS[m], mean(scores[side][m]));
            }
            builder.endObject();
        }
        builder.startObject("difference");
        for (int m = 0; m < METRICS.length; m++) {
            PairedBootstrap.Interval d = differences[m];
            builder.startObject(METRICS[m]).field("mean", d.mean()).field("low", d.low()).field("high", d.high())
                .field("excludes_zero", d.excludesZero()).endObject();
        }
        builder.endObject();
        builder.field("k", request.k()).field("questions", request.questions().size()).field("clusters", clusterCount)
            .field("resamples", PairedBootstrap.RESAMPLES).field("seed", PairedBootstrap.SEED);
        builder.startArray("per_question");
        for (int q = 0; q < request.questions().size(); q++) {
            CompareQuestion question = request.questions().get(q);
            builder.startObject().field("question", question.question()).field("source_id", question.sourceId());
            if (question.hasSpan()) {
                builder.array("span", new int[] { question.spanStart(), question.spanEnd() });
            }
            builder.field("cluster", question.cluster());
            for (int side = 0; side < 2; side++) {
                builder.startObject(sides[side].field()).field("rank", ranks[side][q]);
                for (int m = 0; m < METRICS.length; m++) {
                    builder.field(METRICS[m], scores[side][m][q]);
                }
                List<CompareRun.Hit> hits = rankings.get(side).get(q);
                if (!hits.isEmpty()) {
                    CompareRun.Hit top = hits.get(0);
                    builder.startObject("top").field("_id", top.id()).field("source_id", top.sourceId()).field("start", top.start())
                        .field("end", top.end()).field("score", top.score()).endObject();
                }
                builder.endObject();
            }
            builder.endObject();
        }
        builder.endArray();
        return builder.endObject();
    }

    private static double mean(double[] values) {
        double sum = 0;
        for (double v : values) {
            sum += v;
        }
        return sum / values.length;
    }
}

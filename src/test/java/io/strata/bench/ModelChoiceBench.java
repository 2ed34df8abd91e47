package io.strata.bench;

import ai.djl.Device;
import io.strata.chunking.ChunkedParent;
import io.strata.chunking.Chunk;
import io.strata.chunking.Embedder;
import io.strata.chunking.MultiGranularChunker;
import io.strata.chunking.RecursiveStrategy;
import io.strata.chunking.SentenceSegmenter;
import io.strata.inference.DjlEmbedder;
import io.strata.inference.ModelDescriptor;
import org.opensearch.common.xcontent.XContentHelper;
import org.opensearch.common.xcontent.json.JsonXContent;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Chooses the bundled model: bge-small-en-v1.5 fp32 vs int8, by speed (passages/s) and by retrieval on
 * GutenQA-Emma (questions whose evidence is verbatim; parent θ = 300 with multi-granular children, MAX
 * over children), in one run. {@code bin/strata-bench models}.
 */
public final class ModelChoiceBench {
    public static void main(String[] args) throws Exception {
        Path data = Path.of(args.length > 0 ? args[0] : "src/test/resources/eval/datasets/gutenqa-emma");
        String book = Files.readString(data.resolve("book.txt"));
        List<String[]> questions = new ArrayList<>();
        for (String line : Files.readAllLines(data.resolve("questions.jsonl"))) {
            Map<String, Object> q = XContentHelper.convertToMap(JsonXContent.jsonXContent, line, false);
            if (Boolean.TRUE.equals(q.get("evidence_verbatim_in_book"))) {
                questions.add(new String[] { (String) q.get("question"), (String) q.get("evidence") });
            }
        }
        var chunker = new MultiGranularChunker(new RecursiveStrategy(300), MultiGranularChunker.DEFAULT_GRANULARITIES,
            SentenceSegmenter.english());
        List<ChunkedParent> parents = chunker.chunk(book);
        List<String> texts = new ArrayList<>();
        List<Integer> owner = new ArrayList<>();
        List<Boolean> isParent = new ArrayList<>();
        for (int p = 0; p < parents.size(); p++) {
            for (Chunk c : parents.get(p).all()) {
                texts.add(c.text());
                owner.add(p);
                isParent.add(c.level() == 0);
            }
        }
        System.out.printf(Locale.ROOT, "Emma: %d parents, %d chunks in all; %d verbatim questions%n", parents.size(), texts.size(),
            questions.size());
        Path models = Path.of(System.getProperty("strata.models.dir", "target/models"));
        for (String name : List.of("bge-small-en-v15-q", "bge-small-en-v15")) {
            ModelDescriptor d = ModelDescriptor.read(name, models.resolve(name));
            int threads = Runtime.getRuntime().availableProcessors();
            try (DjlEmbedder e = DjlEmbedder.load(d, Device.cpu(), 1, threads, 32)) {
                e.embed(texts.subList(0, 64), Embedder.Purpose.PASSAGE); // warm-up
                long start = System.nanoTime();
                List<float[]> vectors = e.embed(texts, Embedder.Purpose.PASSAGE);
                double seconds = (System.nanoTime() - start) / 1e9;
                List<float[]> qv = e.embed(questions.stream().map(x -> x[0]).toList(), Embedder.Purpose.QUERY);
                double[] mg = score(parents, owner, isParent, vectors, qv, questions, true);
                double[] flat = score(parents, owner, isParent, vectors, qv, questions, false);
                System.out.printf(Locale.ROOT, "%-20s %7.1f chunks/s (%.1f s)  MG: DCG@1 %.1f R@5 %.1f  parents only: DCG@1 %.1f R@5 %.1f%n",
                    name, texts.size() / seconds, seconds, mg[0], mg[1], flat[0], flat[1]);
            }
        }
    }

    /** [hit@1 %, recall@5 %]: a parent is relevant when it contains the evidence. */
    private static double[] score(List<ChunkedParent> parents, List<Integer> owner, List<Boolean> isParent, List<float[]> vectors, List<float[]> qv,
                                  List<String[]> questions, boolean multiGranular) {
        double at1 = 0;
        double at5 = 0;
        for (int qi = 0; qi < questions.size(); qi++) {
            double[] best = new double[parents.size()];
            java.util.Arrays.fill(best, -2);
            for (int i = 0; i < vectors.size(); i++) {
                if (!multiGranular && !isParent.get(i)) {
                    continue;
                }
                double s = dot(qv.get(qi), vectors.get(i));
                best[owner.get(i)] = Math.max(best[owner.get(i)], s);
            }
            Integer[] order = new Integer[parents.size()];
            for (int i = 0; i < order.length; i++) {
                order[i] = i;
            }
            java.util.Arrays.sort(order, (a, b) -> Double.compare(best[b], best[a]));
            String evidence = questions.get(qi)[1];
            for (int r = 0; r < 5; r++) {
                if (parents.get(order[r]).parent().text().contains(evidence)) {
                    if (r == 0) {
                        at1++;
                    }
                    at5++;
                    break;
                }
            }
        }
        return new double[] { 100 * at1 / questions.size(), 100 * at5 / questions.size() };
    }

    private static double dot(float[] a, float[] b) {
        double s = 0;
        for (int i = 0; i < a.length; i++) {
            s += a[i] * b[i];
        }
        return s;
    }

    private ModelChoiceBench() {}
}

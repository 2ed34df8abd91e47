package io.strata.bench;

import ai.djl.Device;
import io.strata.chunking.ChunkedParent;
import io.strata.chunking.Embedder;
import io.strata.chunking.MultiGranularChunker;
import io.strata.chunking.RecursiveStrategy;
import io.strata.chunking.SentenceSegmenter;
import io.strata.chunking.TestTexts;
import io.strata.inference.DjlEmbedder;
import io.strata.inference.InferenceSettings;
import io.strata.inference.ModelDescriptor;
import org.opensearch.common.settings.Settings;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Texts/s through Strata's embedding path ({@link DjlEmbedder}: tokenizer, DJL, ONNX Runtime, pooling, one pass per
 * text on parallel lanes) against raw ONNX Runtime ({@link RawOrt}) doing the same passes, on the same texts — the
 * chunks (parents θ=300 and children) of Emma's first chapters — in one run. Batched raw rows show what batching
 * would buy (with batch-dependent vectors). {@code bin/strata-bench embedding [MODEL]}.
 */
public final class EmbeddingBench {
    public static void main(String[] args) throws Exception {
        String name = args.length > 0 ? args[0] : InferenceSettings.DEFAULT_MODEL.get(Settings.EMPTY);
        Path dir = Path.of(System.getProperty("strata.models.dir", "target/models")).resolve(name);
        ModelDescriptor d = ModelDescriptor.read(name, dir);
        List<String> texts = new ArrayList<>();
        var chunker = new MultiGranularChunker(new RecursiveStrategy(300), MultiGranularChunker.DEFAULT_GRANULARITIES,
            SentenceSegmenter.english());
        for (ChunkedParent p : chunker.chunk(TestTexts.emma())) {
            p.all().forEach(c -> texts.add(c.text()));
        }
        int cores = Runtime.getRuntime().availableProcessors();
        // DJL creates the process-wide ONNX Runtime environment with its own options; the baseline reuses it
        DjlEmbedder.load(d, Device.cpu(), 1, 1, 1).close();
        System.out.printf(Locale.ROOT, "model %s, %d texts (Emma ch. 1-3, parents θ=300 + children), %d cores%n", d.name(), texts.size(),
            cores);
        System.out.printf(Locale.ROOT, "%-26s %14s %14s %7s%n", "lanes x engine threads", "strata text/s", "raw ORT text/s", "ratio");
        for (int[] c : new int[][] { { cores, 1 }, { 1, cores } }) {
            int lanes = c[0], intra = c[1];
            try (RawOrt raw = new RawOrt(d, intra); DjlEmbedder strata = DjlEmbedder.load(d, Device.cpu(), 1, lanes, intra)) {
                double s = best(() -> strata.embed(texts, Embedder.Purpose.PASSAGE).size(), texts.size());
                double r = best(() -> raw.embedSingly(texts, lanes).size(), texts.size());
                System.out.printf(Locale.ROOT, "%-26s %14.1f %14.1f %7.2f%n", lanes + " x " + intra, s, r, s / r);
            }
        }
        try (RawOrt raw = new RawOrt(d, cores)) {
            for (int batch : new int[] { 8, 32 }) {
                double r = best(() -> raw.embedBatched(texts, batch).size(), texts.size());
                System.out.printf(Locale.ROOT, "%-26s %14s %14.1f%n", "raw batches of " + batch + ", 1 x " + cores, "-", r);
            }
        }
    }

    interface Run {
        int run() throws Exception;
    }

    /** Texts/s: round 0 warms up, best of the next two. */
    static double best(Run run, int n) throws Exception {
        double best = 0;
        for (int round = 0; round < 3; round++) {
            long start = System.nanoTime();
            if (run.run() != n) {
                throw new IllegalStateException("not every text was embedded");
            }
            double rate = n / ((System.nanoTime() - start) / 1e9);
            best = round == 0 ? best : Math.max(best, rate);
        }
        return best;
    }

    private EmbeddingBench() {}
}

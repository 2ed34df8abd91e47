package io.strata.bench;

import ai.djl.Device;
import io.strata.chunking.ChunkingStrategy;
import io.strata.chunking.PseudoInstructionStrategy;
import io.strata.chunking.SemanticStrategy;
import io.strata.chunking.SentenceSegmenter;
import io.strata.chunking.Span;
import io.strata.chunking.TextIndex;
import io.strata.inference.DjlEmbedder;
import io.strata.inference.ModelDescriptor;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * Time per MB and parent lengths (words) of the embedding-based strategies ({@code semantic} with LangChain's defaults,
 * {@code pseudo_instruction} in its mean variant) at θ = 300 on a book, with the bundled int8 bge-small, one thread
 * calling the embedder (2 intra-op threads, batches of 32).
 *
 * <p>Run: {@code bin/strata-bench semantic [BOOK]}; BOOK defaults to ../shared/data/gutenqa-emma/book.txt.
 */
public final class EmbeddingChunkingBench {
    public static void main(String[] args) throws Exception {
        Path book = Path.of(args.length > 0 ? args[0] : "../shared/data/gutenqa-emma/book.txt");
        String text = Files.readString(book);
        double mb = text.getBytes(StandardCharsets.UTF_8).length / 1e6;
        Path dir = Path.of(System.getProperty("strata.models.dir", "target/models")).resolve("bge-small-en-v15-q");
        try (DjlEmbedder embedder = DjlEmbedder.load(ModelDescriptor.read("bge-small-en-v15-q", dir), Device.cpu(), 1, 2, 32)) {
            embedder.embed(List.of("warm up the model once"), io.strata.chunking.Embedder.Purpose.PASSAGE);
            TextIndex probe = new TextIndex(text, SentenceSegmenter.english());
            System.out.printf(Locale.ROOT, "text: %s, %.2f MB, %d words, %d sentences%n", book, mb, probe.totalWords(),
                probe.sentenceBoundaries().length - 1);
            System.out.printf(Locale.ROOT, "%-40s %9s %9s %9s %8s %10s %9s %6s %6s%n", "strategy (θ=300)", "seconds", "s/MB", "cpu s/MB", "parents",
                "mean words", "std", "min", "max");
            run("semantic percentile 95, buffer 1",
                new SemanticStrategy(embedder, 1, SemanticStrategy.ThresholdType.PERCENTILE, 95, 300), text, mb);
            run("pseudo_instruction mean", new PseudoInstructionStrategy(embedder, null, 256, 3000, 300), text, mb);
        }
    }

    private static void run(String name, ChunkingStrategy strategy, String text, double mb) {
        TextIndex index = new TextIndex(text, SentenceSegmenter.english());
        var os = (com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        long c0 = os.getProcessCpuTime();
        long t0 = System.nanoTime();
        List<Span> parents = strategy.split(index);
        double seconds = (System.nanoTime() - t0) / 1e9;
        double cpu = (os.getProcessCpuTime() - c0) / 1e9; // the machine is shared: CPU seconds are the steadier figure
        double sum = 0;
        double sq = 0;
        int min = Integer.MAX_VALUE;
        int max = 0;
        for (Span p : parents) {
            int w = index.words(p);
            sum += w;
            sq += (double) w * w;
            min = Math.min(min, w);
            max = Math.max(max, w);
        }
        double mean = sum / parents.size();
        double std = Math.sqrt(sq / parents.size() - mean * mean);
        System.out.printf(Locale.ROOT, "%-40s %9.1f %9.1f %9.1f %8d %10.1f %9.1f %6d %6d%n", name, seconds, seconds / mb, cpu / mb, parents.size(), mean,
            std, min, max);
    }
}

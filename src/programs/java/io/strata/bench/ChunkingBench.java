package io.strata.bench;

import dev.langchain4j.data.document.Document;
import dev.langchain4j.data.document.DocumentSplitter;
import dev.langchain4j.data.document.splitter.DocumentSplitters;
import io.strata.chunking.ChunkedParent;
import io.strata.chunking.MultiGranularChunker;
import io.strata.chunking.RecursiveStrategy;
import io.strata.chunking.SentenceSegmenter;
import io.strata.chunking.TestTexts;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.function.ToIntFunction;

/**
 * Single-thread throughput of Strata's multi-granular recursive chunking (parents θ plus children θ/2 and
 * θ/4: three levels) against langchain4j's {@code DocumentSplitters.recursive} (one level) on the same
 * text, in one run. The peer gets the character size equal to θ words on this text, no overlap.
 *
 * <p>Run: {@code bin/strata-bench chunking} (or {@code mvn -Pbench test-compile exec:java}).
 */
public final class ChunkingBench {
    public static void main(String[] args) throws Exception {
        String text = loadBook(args);
        double mb = text.getBytes(StandardCharsets.UTF_8).length / 1e6;
        int words = text.split("\\s+").length;
        double charsPerWord = (double) text.length() / words;
        System.out.printf(Locale.ROOT, "text: %.2f MB, %d words%n", mb, words);
        System.out.printf(Locale.ROOT, "%-6s %-34s %10s %10s %8s%n", "theta", "splitter", "MB/s", "chunks", "ratio");
        for (int theta : new int[] { 200, 300, 500 }) {
            var strata = new MultiGranularChunker(new RecursiveStrategy(theta), MultiGranularChunker.DEFAULT_GRANULARITIES,
                SentenceSegmenter.english());
            DocumentSplitter peer = DocumentSplitters.recursive((int) Math.round(theta * charsPerWord), 0);
            Document doc = Document.from(text);
            ToIntFunction<String> strataRun = t -> strata.chunk(t).stream().mapToInt(p -> p.all().size()).sum();
            ToIntFunction<String> peerRun = t -> peer.split(doc).size();
            // interleave rounds so both see the same JIT and machine state
            double strataBest = 0;
            double peerBest = 0;
            int strataChunks = 0;
            int peerChunks = 0;
            for (int round = 0; round < 7; round++) {
                double[] s = throughput(strataRun, text, mb);
                double[] p = throughput(peerRun, text, mb);
                if (round >= 2) { // rounds 0-1 are warm-up
                    strataBest = Math.max(strataBest, s[0]);
                    peerBest = Math.max(peerBest, p[0]);
                }
                strataChunks = (int) s[1];
                peerChunks = (int) p[1];
            }
            System.out.printf(Locale.ROOT, "%-6d %-34s %10.1f %10d %8s%n", theta, "strata multi-granular (3 levels)", strataBest,
                strataChunks, "");
            System.out.printf(Locale.ROOT, "%-6d %-34s %10.1f %10d %8s%n", theta, "langchain4j recursive (1 level)", peerBest,
                peerChunks, "");
            System.out.printf(Locale.ROOT, "%-6d %-34s %10s %10s %8.2f%n", theta, "ratio strata/langchain4j", "", "",
                strataBest / peerBest);
        }
    }

    /** [MB/s, chunks] over repeated runs for at least ~1 s. */
    private static double[] throughput(ToIntFunction<String> run, String text, double mb) {
        long start = System.nanoTime();
        int iterations = 0;
        int chunks = 0;
        do {
            chunks = run.applyAsInt(text);
            iterations++;
        } while (System.nanoTime() - start < 1_000_000_000L);
        double seconds = (System.nanoTime() - start) / 1e9;
        return new double[] { mb * iterations / seconds, chunks };
    }

    private static String loadBook(String[] args) throws Exception {
        List<Path> candidates = args.length > 0 ? List.of(Path.of(args[0]))
            : List.of(Path.of("src/test/resources/eval/datasets/gutenqa-emma/book.txt"));
        for (Path p : candidates) {
            if (Files.isRegularFile(p)) {
                System.out.println("book: " + p);
                return Files.readString(p);
            }
        }
        System.out.println("book: bundled Emma chapters 1-3");
        return TestTexts.emma();
    }

    private ChunkingBench() {}

    @SuppressWarnings("unused")
    private static int count(List<ChunkedParent> parents) {
        return parents.size();
    }
}

package io.strata.bench;

import io.strata.chunking.ChunkingConfig;
import io.strata.chunking.ChunkingStrategy;
import io.strata.chunking.SentenceSegmenter;
import io.strata.chunking.Span;
import io.strata.chunking.TextIndex;
import io.strata.inference.InferenceModels;
import io.strata.inference.InferenceService;
import io.strata.stats.StrataStats;
import org.opensearch.common.settings.Settings;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Every strategy on the same book with the real models the node would use (bundled bge-small int8, the shipped
 * BertChunker head, the causal-LM test fixture): parent count, parent length mean / standard deviation in words (cf.
 * the PIC paper's Table 6) and chunking time per MB, single thread, with recursive chunking measured in the same run as
 * the baseline. {@code bin/strata-bench strategies [BOOK] [CHARS]}: model-guided strategies read the first CHARS characters
 * (default 200,000) so the run stays within minutes on 2 cores; rule-based ones read the whole book.
 */
public final class StrategyBench {
    public static void main(String[] args) throws Exception {
        Path bookPath = Path.of(args.length > 0 ? args[0] : "src/test/resources/eval/datasets/gutenqa-emma/book.txt");
        int modelChars = args.length > 1 ? Integer.parseInt(args[1]) : 200_000;
        String book = Files.readString(bookPath);
        int cut = modelChars >= book.length() ? -1 : book.indexOf("\n\n", modelChars);
        String prefix = cut < 0 ? book : book.substring(0, cut);

        InferenceService service = new InferenceService(Settings.EMPTY, benchModels(), () -> null, null, null, new StrataStats());
        InferenceModels models = new InferenceModels(service, null);
        SentenceSegmenter segmenter = SentenceSegmenter.english();
        Map<String, Map<String, Object>> strategies = new LinkedHashMap<>();
        strategies.put("recursive", Map.of("type", "recursive"));
        strategies.put("sentence (5)", Map.of("type", "sentence", "sentences", 5));
        strategies.put("paragraph", Map.of("type", "paragraph"));
        strategies.put("fixed_token (384)", Map.of("type", "fixed_token"));
        strategies.put("semantic (percentile 95)", Map.of("type", "semantic"));
        strategies.put("semantic (similarity 0.8)", Map.of("type", "semantic", "breakpoint_threshold_type", "similarity"));
        strategies.put("pseudo_instruction (Mean)", Map.of("type", "pseudo_instruction"));
        strategies.put("pseudo_instruction (Mean, τ = μ + σ)", Map.of("type", "pseudo_instruction", "threshold_sigmas", 1));
        strategies.put("pseudo_instruction (Sent)", Map.of("type", "pseudo_instruction", "instruction", "sent"));
        strategies.put("boundary_classifier", Map.of("type", "boundary_classifier"));
        strategies.put("boundary_classifier (any token, latest-start window)", Map.of("type", "boundary_classifier", "boundaries", "token",
            "window", "latest_start"));
        strategies.put("logits_guided (fixture LM)", Map.of("type", "logits_guided", "llm", "strata-tiny-gpt"));
        strategies.put("perplexity (fixture LM)", Map.of("type", "perplexity", "llm", "strata-tiny-gpt"));
        strategies.put("margin_sampling (fixture LM)", Map.of("type", "margin_sampling", "llm", "strata-tiny-gpt"));
        strategies.put("margin_sampling (fixture LM, mean of all, normalised)", Map.of("type", "margin_sampling", "llm", "strata-tiny-gpt",
            "threshold_window", 0, "margin", "normalised"));

        System.out.printf(Locale.ROOT, "%s: %.2f MB; model-guided strategies on the first %.2f MB; θ = 300 words%n", bookPath.getFileName(),
            book.length() / 1e6, prefix.length() / 1e6);
        System.out.printf(Locale.ROOT, "| strategy | text (MB) | parents | words mean | words std | s/MB | vs recursive |%n");
        System.out.printf(Locale.ROOT, "|---|---|---|---|---|---|---|%n");
        double recursiveSecondsPerMb = Double.NaN;
        for (var e : strategies.entrySet()) {
            ChunkingStrategy strategy;
            try {
                strategy = ChunkingConfig.parseStrategy("strategy", new LinkedHashMap<>(e.getValue()), models);
            } catch (IllegalArgumentException unavailable) {
                System.out.printf(Locale.ROOT, "| %s | skipped: %s |%n", e.getKey(), unavailable.getMessage());
                continue;
            }
            String text = strategy.usesModels() ? prefix : book;
            if (strategy.usesModels()) {
                strategy.split(new TextIndex(text.substring(0, Math.min(text.length(), 2000)), segmenter)); // load and warm the models
            }
            long start = System.nanoTime();
            TextIndex index = new TextIndex(text, segmenter);
            List<Span> parents = strategy.split(index);
            double seconds = (System.nanoTime() - start) / 1e9;
            double[] words = new double[parents.size()];
            for (int i = 0; i < words.length; i++) {
                words[i] = index.words(parents.get(i));
            }
            double secondsPerMb = seconds / (text.length() / 1e6);
            if (e.getKey().equals("recursive")) {
                recursiveSecondsPerMb = secondsPerMb;
            }
            System.out.printf(Locale.ROOT, "| %s | %.2f | %d | %.1f | %.1f | %.3f | %.1f× |%n", e.getKey(), text.length() / 1e6,
                parents.size(), mean(words), std(words), secondsPerMb, secondsPerMb / recursiveSecondsPerMb);
        }
        service.close();
    }

    /** The node's model folders for this run: the bundled ones (target/models) plus the causal-LM test fixture. */
    private static Path benchModels() throws Exception {
        Path bundled = Path.of(System.getProperty("strata.models.dir", "target/models")).toAbsolutePath();
        Path dir = Path.of("target/bench-models").toAbsolutePath();
        Files.createDirectories(dir);
        List<Path> sources = new ArrayList<>();
        try (var list = Files.list(bundled)) {
            list.forEach(sources::add);
        }
        sources.add(Path.of("src/test/resources/models/strata-tiny-gpt").toAbsolutePath());
        for (Path source : sources) {
            Path link = dir.resolve(source.getFileName());
            if (!Files.exists(link, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                Files.createSymbolicLink(link, source);
            }
        }
        return dir;
    }

    private static double mean(double[] v) {
        double s = 0;
        for (double x : v) {
            s += x;
        }
        return v.length == 0 ? 0 : s / v.length;
    }

    private static double std(double[] v) {
        double m = mean(v);
        double s = 0;
        for (double x : v) {
            s += (x - m) * (x - m);
        }
        return v.length == 0 ? 0 : Math.sqrt(s / v.length);
    }
}

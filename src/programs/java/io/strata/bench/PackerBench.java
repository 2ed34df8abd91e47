package io.strata.bench;

import io.strata.chunking.Chunk;
import io.strata.chunking.ChunkedParent;
import io.strata.chunking.MultiGranularChunker;
import io.strata.chunking.RecursiveStrategy;
import io.strata.chunking.SentenceSegmenter;
import io.strata.chunking.TestTexts;
import io.strata.context.BaselineContextPacker;
import io.strata.context.ContextOptions;
import io.strata.context.ContextPacker;
import io.strata.context.PackedContext;
import io.strata.context.Seed;
import io.strata.context.SourceText;
import io.strata.context.TokenCounter;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;

/**
 * The context packer's own time against the number of hits: {@code strata_context} at budget 100,000 over 250, 500, 1,000
 * and 2,000 hits of 2,400+ parents (Emma chunked at θ 300, five source documents of it), every parent readable, as the
 * processor gives them (each hit's finest matched chunk, scores falling with rank). The packer now against the one before it
 * ({@link BaselineContextPacker}: it re-sorted and re-costed every passage at every step), on the same inputs, checking both
 * give the same context. Tokens are words with their starts (the embedded models' counter gives starts too), so the figures
 * are the packer's work, not the tokenizer's.
 *
 * <p>Run: {@code bin/strata-bench packer [BUDGET]}.
 */
public final class PackerBench {
    private static final TokenCounter WORDS = new TokenCounter() {
        @Override
        public int count(String text) {
            return text.isBlank() ? 0 : text.strip().split("\\s+").length;
        }

        @Override
        public int[] starts(String text) {
            int n = 0;
            int[] out = new int[text.length() / 2 + 1];
            for (int i = 0; i < text.length(); i++) {
                if (!Character.isWhitespace(text.charAt(i)) && (i == 0 || Character.isWhitespace(text.charAt(i - 1)))) {
                    out[n++] = i;
                }
            }
            return java.util.Arrays.copyOf(out, n);
        }
    };

    public static void main(String[] args) {
        int budget = args.length > 0 ? Integer.parseInt(args[0]) : 100_000;
        List<ChunkedParent> parents = new MultiGranularChunker(new RecursiveStrategy(300), MultiGranularChunker.DEFAULT_GRANULARITIES,
            SentenceSegmenter.english()).chunk(TestTexts.emma());
        int documents = (2400 + parents.size() - 1) / parents.size();
        Map<String, SourceText> texts = new HashMap<>();
        for (int d = 0; d < documents; d++) {
            SourceText doc = new SourceText();
            for (ChunkedParent p : parents) {
                List<int[]> units = new ArrayList<>();
                for (Chunk c : p.children()) {
                    if (c.level() == 2) {
                        units.add(new int[] {c.start(), c.end()});
                    }
                }
                doc.addParent(p.parent().ordinal(), p.parent().start(), p.parent().text(), units);
            }
            texts.put("doc" + d, doc);
        }
        System.out.printf(Locale.ROOT, "context packer, budget %,d tokens, %,d parents in %d documents%n", budget,
            parents.size() * documents, documents);
        System.out.printf(Locale.ROOT, "%6s %12s %12s %8s %8s%n", "hits", "before ms", "now ms", "ratio", "same");
        for (int i = 0; i < 3; i++) { // warm-up
            pack(new ContextPacker(WORDS), seeds(parents, documents, 2000), texts, budget);
        }
        new BaselineContextPacker(WORDS).pack(seeds(parents, documents, 100), texts, new ContextOptions(budget,
            ContextOptions.Order.RANK, ContextOptions.DEFAULT_SEPARATOR));
        for (int hits : new int[] {250, 500, 1000, 2000}) {
            List<Seed> seeds = seeds(parents, documents, hits);
            ContextOptions options = new ContextOptions(budget, ContextOptions.Order.RANK, ContextOptions.DEFAULT_SEPARATOR);
            long t0 = System.nanoTime();
            PackedContext before = new BaselineContextPacker(WORDS).pack(seeds, texts, options);
            long t1 = System.nanoTime();
            PackedContext now = pack(new ContextPacker(WORDS), seeds, texts, budget);
            long t2 = System.nanoTime();
            System.out.printf(Locale.ROOT, "%6d %12.1f %12.1f %8.1f %8s%n", hits, (t1 - t0) / 1e6, (t2 - t1) / 1e6,
                (double) (t1 - t0) / (t2 - t1), before.equals(now));
        }
    }

    private static PackedContext pack(ContextPacker packer, List<Seed> seeds, Map<String, SourceText> texts, int budget) {
        return packer.pack(seeds, texts, new ContextOptions(budget, ContextOptions.Order.RANK, ContextOptions.DEFAULT_SEPARATOR));
    }

    /** {@code n} hits on distinct parents, each its parent's first finest chunk, scores falling slowly with rank. */
    private static List<Seed> seeds(List<ChunkedParent> parents, int documents, int n) {
        Random random = new Random(44);
        List<int[]> all = new ArrayList<>();
        for (int d = 0; d < documents; d++) {
            for (int p = 0; p < parents.size(); p++) {
                all.add(new int[] {d, p});
            }
        }
        java.util.Collections.shuffle(all, random);
        List<Seed> out = new ArrayList<>(n);
        for (int rank = 0; rank < n; rank++) {
            int[] at = all.get(rank);
            ChunkedParent p = parents.get(at[1]);
            Chunk matched = p.children().stream().filter(c -> c.level() == 2).findFirst().orElse(p.parent());
            out.add(new Seed("doc" + at[0], matched.start(), matched.end(), rank, "doc" + at[0] + ":" + at[1],
                20 - rank * 0.001, List.of()));
        }
        return out;
    }
}

package io.strata.context;

import io.strata.chunking.Chunk;
import io.strata.chunking.ChunkedParent;
import io.strata.chunking.MultiGranularChunker;
import io.strata.chunking.RecursiveStrategy;
import io.strata.chunking.SentenceSegmenter;
import io.strata.chunking.TestTexts;
import org.junit.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.IntPredicate;

import static org.junit.Assert.assertEquals;

/**
 * The packer that is O(n log n) in its hits gives the very context of the one that re-sorted and re-costed every passage at
 * every step ({@link BaselineContextPacker}, the code before): same passages, spans, hits, counts and text, over random hit
 * lists — scored and unscored, with alternatives and sentences, on two documents, with unreadable parents, with both kinds of
 * counter — at budgets from a few tokens to the whole text.
 */
public class ContextPackerEquivalenceTests {
    private static final String EMMA = TestTexts.emma();
    private static final List<ChunkedParent> PARENTS = new MultiGranularChunker(new RecursiveStrategy(120),
        MultiGranularChunker.DEFAULT_GRANULARITIES, SentenceSegmenter.english()).chunk(EMMA);
    private static final TokenCounter WORDS = t -> t.isBlank() ? 0 : t.strip().split("\\s+").length;
    private static final TokenCounter WORDS_WITH_STARTS = new TokenCounter() {
        @Override
        public int count(String text) {
            return WORDS.count(text);
        }

        @Override
        public int[] starts(String text) {
            List<Integer> out = new ArrayList<>();
            for (int i = 0; i < text.length(); i++) {
                if (!Character.isWhitespace(text.charAt(i)) && (i == 0 || Character.isWhitespace(text.charAt(i - 1)))) {
                    out.add(i);
                }
            }
            return out.stream().mapToInt(Integer::intValue).toArray();
        }
    };

    private static SourceText emma(IntPredicate readable) {
        SourceText doc = new SourceText();
        for (ChunkedParent p : PARENTS) {
            if (!readable.test(p.parent().ordinal())) {
                continue;
            }
            List<int[]> units = new ArrayList<>();
            for (Chunk c : p.children()) {
                if (c.level() == 2) {
                    units.add(new int[] {c.start(), c.end()});
                }
            }
            doc.addParent(p.parent().ordinal(), p.parent().start(), p.parent().text(), units);
        }
        return doc;
    }

    private static int[] span(Chunk c) {
        return new int[] {c.start(), c.end()};
    }

    @Test
    public void testPack_givesTheContextOfTheBaselinePacker() {
        Random random = new Random(44);
        for (int round = 0; round < 300; round++) {
            int hits = 1 + random.nextInt(round % 25 == 0 ? 400 : 40);
            boolean scored = random.nextBoolean();
            List<Seed> seeds = new ArrayList<>();
            for (int rank = 0; rank < hits; rank++) {
                // hits cluster in a part of the book, so that passages meet and merge
                ChunkedParent p = PARENTS.get(Math.min(PARENTS.size() - 1, random.nextInt(Math.max(1, hits / 2 + 3))
                    + (random.nextBoolean() ? 0 : random.nextInt(PARENTS.size()))));
                List<Chunk> all = p.all();
                Chunk matched = all.get(random.nextInt(all.size()));
                List<int[]> alternatives = new ArrayList<>();
                for (int a = random.nextInt(3); a > 0; a--) {
                    alternatives.add(span(all.get(random.nextInt(all.size()))));
                }
                List<int[]> sentences = new ArrayList<>();
                if (random.nextBoolean()) {
                    int s = matched.start() + random.nextInt(Math.max(1, (matched.end() - matched.start()) / 2));
                    while (s < matched.end() && !Character.isWhitespace(EMMA.charAt(s - 1 < 0 ? 0 : s - 1)) && s > matched.start()) {
                        s++;
                    }
                    sentences.add(new int[] {s, matched.end()});
                }
                double score = scored ? 10 - rank * random.nextDouble() * 0.05 : Double.NaN;
                seeds.add(new Seed(random.nextInt(4) == 0 ? "b" : "a", matched.start(), matched.end(), rank, "hit" + rank, score,
                    alternatives, sentences));
            }
            int hiddenA = random.nextInt(PARENTS.size());
            int hiddenB = random.nextInt(PARENTS.size());
            Map<String, SourceText> documents = Map.of("a", emma(o -> o != hiddenA), "b", emma(o -> o != hiddenB));
            int budget = random.nextInt(4) == 0 ? 1 + random.nextInt(60) : 50 + random.nextInt(random.nextBoolean() ? 3000 : 40_000);
            ContextOptions options = new ContextOptions(budget, random.nextBoolean() ? ContextOptions.Order.RANK
                : ContextOptions.Order.DOCUMENT, random.nextBoolean() ? "\n\n" : "\n--\n");
            TokenCounter counter = random.nextBoolean() ? WORDS : WORDS_WITH_STARTS;
            PackedContext expected = new BaselineContextPacker(counter).pack(seeds, documents, options);
            PackedContext actual = new ContextPacker(counter).pack(seeds, documents, options);
            assertEquals("round " + round + " (" + hits + " hits, budget " + budget + ")", expected, actual);
        }
    }
}

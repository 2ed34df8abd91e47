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
import java.util.function.IntPredicate;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

public class ContextPackerTests {
    private static final String EMMA = TestTexts.emma();
    private static final List<ChunkedParent> PARENTS = new MultiGranularChunker(new RecursiveStrategy(300),
        MultiGranularChunker.DEFAULT_GRANULARITIES, SentenceSegmenter.english()).chunk(EMMA);
    /** Whitespace-separated words: additive over concatenation, so sums and the whole agree, as with WordPiece. */
    private static final TokenCounter WORDS = t -> t.isBlank() ? 0 : t.strip().split("\\s+").length;

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

    private static Chunk child(int parent, int level, int ordinal) {
        return PARENTS.get(parent).children().stream().filter(c -> c.level() == level && c.ordinal() == ordinal).findFirst().orElseThrow();
    }

    private static Seed seed(Chunk c, int rank) {
        return new Seed("emma", c.start(), c.end(), rank, "hit" + rank);
    }

    private static Seed scored(Chunk c, int rank, double score) {
        return new Seed("emma", c.start(), c.end(), rank, "hit" + rank, score, List.of());
    }

    /** The chunk of the finest level with the fewest words. */
    private static Chunk shortestChunk() {
        return PARENTS.stream().flatMap(p -> p.children().stream()).filter(c -> c.level() == 2)
            .min(java.util.Comparator.comparingInt(c -> WORDS.count(c.text()))).orElseThrow();
    }

    private static PackedContext pack(List<Seed> seeds, SourceText doc, int budget, ContextOptions.Order order) {
        return new ContextPacker(WORDS).pack(seeds, Map.of("emma", doc), new ContextOptions(budget, order, "\n\n"));
    }

    private static String squash(String s) {
        return s.strip().replaceAll("\\s+", " ");
    }

    @Test
    public void testPack_atEveryBudget_staysWithinItAndQuotesTheSource() {
        List<Seed> seeds = List.of(seed(child(7, 2, 1), 0), seed(child(3, 2, 0), 1), seed(child(12, 1, 1), 2));
        for (int budget : new int[] {8, 64, 128, 256, 512, 1024, 4096}) {
            PackedContext c = pack(seeds, emma(o -> true), budget, ContextOptions.Order.RANK);
            assertTrue(budget + ": " + c.tokens(), c.tokens() <= budget);
            assertEquals(WORDS.count(c.text()), c.tokens());
            // enough text around the seeds: the fill leaves no whole word of the budget unused
            assertEquals(budget, c.tokens());
            List<String> texts = new ArrayList<>();
            for (Passage p : c.passages()) {
                assertEquals(squash(EMMA.substring(p.start(), p.end())), squash(p.text()));
                texts.add(p.text());
            }
            assertEquals(String.join("\n\n", texts), c.text());
            for (Passage a : c.passages()) { // passages of one document that met were merged
                for (Passage b : c.passages()) {
                    assertTrue(a == b || a.end() < b.start() || b.end() < a.start());
                }
            }
        }
    }

    @Test
    public void testPack_withRoomForTheSeedsOnly_holdsEachMatchedChunkWhole_bestFirst() {
        Chunk first = child(7, 2, 1);
        Chunk second = child(3, 2, 0);
        Chunk third = child(12, 1, 1);
        int budget = WORDS.count(first.text()) + WORDS.count(second.text());
        PackedContext c = pack(List.of(seed(first, 0), seed(second, 1), seed(third, 2)), emma(o -> true), budget,
            ContextOptions.Order.RANK);
        assertEquals(2, c.passages().size());
        assertEquals(List.of(first.start(), first.end()), List.of(c.passages().get(0).start(), c.passages().get(0).end()));
        assertEquals(List.of(second.start(), second.end()), List.of(c.passages().get(1).start(), c.passages().get(1).end()));
        assertEquals(List.of("hit0"), c.passages().get(0).hits());
    }

    @Test
    public void testPack_aSeedThatDoesNotFit_withTooFewTokensLeftToCut_isSkippedForASmallerOneBelowIt() {
        Chunk big = PARENTS.get(3).parent();
        Chunk best = child(7, 2, 1);
        Chunk small = shortestChunk();
        assertTrue(WORDS.count(small.text()) < ContextPacker.MIN_CUT_TOKENS);
        int budget = WORDS.count(best.text()) + WORDS.count(small.text());
        PackedContext c = pack(List.of(seed(best, 0), seed(big, 1), seed(small, 2)), emma(o -> true), budget, ContextOptions.Order.RANK);
        assertEquals(List.of("hit0", "hit2"), c.passages().stream().map(p -> p.hits().get(0)).toList());
    }

    @Test
    public void testPack_aLowerHitThatDoesNotFit_entersWithItsChunksFirstWords_whenEnoughTokensAreLeft() {
        Chunk best = child(7, 2, 1);
        Chunk big = PARENTS.get(3).parent();
        int room = ContextPacker.MIN_CUT_TOKENS + 6;
        PackedContext c = pack(List.of(seed(best, 0), seed(big, 1)), emma(o -> true), WORDS.count(best.text()) + room,
            ContextOptions.Order.RANK);
        assertEquals(List.of("hit0", "hit1"), c.passages().stream().map(p -> p.hits().get(0)).toList());
        Passage cut = c.passages().get(1);
        assertTrue(cut.truncated());
        assertEquals(big.start(), cut.start());
        assertEquals(room, cut.tokens());
        assertTrue(big.text().startsWith(cut.text()));
        // fewer tokens left than that: the best hit's passage takes them
        PackedContext fewer = pack(List.of(seed(best, 0), seed(big, 1)), emma(o -> true),
            WORDS.count(best.text()) + ContextPacker.MIN_CUT_TOKENS - 1, ContextOptions.Order.RANK);
        assertEquals(List.of("hit0"), fewer.passages().stream().map(p -> p.hits().get(0)).toList());
    }

    @Test
    public void testPack_aHitScoredFarBelowTheBest_waitsUntilTheBestHitsSurroundingsAreIn() {
        Chunk best = child(7, 2, 1);
        Chunk other = child(12, 2, 0);
        int budget = WORDS.count(best.text()) + WORDS.count(other.text()) + ContextPacker.MIN_CUT_TOKENS - 1;
        // close scores: breadth first, as without scores — both matched chunks whole, the rest around the best one
        for (double second : new double[] {Double.NaN, 0.98}) {
            PackedContext close = pack(List.of(scored(best, 0, 1.0), scored(other, 1, second)), emma(o -> true), budget,
                ContextOptions.Order.RANK);
            assertEquals(List.of("hit0", "hit1"), close.passages().stream().map(p -> p.hits().get(0)).toList());
            assertEquals(List.of(other.start(), other.end()), List.of(close.passages().get(1).start(), close.passages().get(1).end()));
        }
        // a second hit at half the best score is worth less than the best one's neighbouring chunks: they come first
        PackedContext far = pack(List.of(scored(best, 0, 1.0), scored(other, 1, 0.5)), emma(o -> true), budget,
            ContextOptions.Order.RANK);
        Passage first = far.passages().get(0);
        Chunk next = child(7, 2, 2);
        assertTrue(first.start() <= best.start() && first.end() >= next.end());
        assertTrue(far.passages().stream().noneMatch(p -> p.start() <= other.start() && p.end() >= other.end()));
    }

    @Test
    public void testPack_aSeedThatDoesNotFit_startsFromTheFirstOfItsAlternativesThatFits_citingTheHit() {
        Chunk big = PARENTS.get(3).parent();
        Chunk tooBig = child(3, 1, 0);
        Chunk fits = child(3, 2, 3);
        Chunk other = PARENTS.subList(9, 30).stream().flatMap(p -> p.children().stream()).filter(c -> c.level() == 2)
            .min(java.util.Comparator.comparingInt(c -> WORDS.count(c.text()))).orElseThrow();
        int budget = WORDS.count(fits.text()) + WORDS.count(other.text());
        assertTrue("the first alternative does not fit either", WORDS.count(tooBig.text()) > budget);
        List<Seed> seeds = List.of(new Seed("emma", big.start(), big.end(), 0, "hit0",
            List.of(new int[] {tooBig.start(), tooBig.end()}, new int[] {fits.start(), fits.end()})), seed(other, 1));
        PackedContext c = pack(seeds, emma(o -> true), budget, ContextOptions.Order.RANK);
        assertEquals(List.of("hit0", "hit1"), c.passages().stream().map(p -> p.hits().get(0)).toList());
        assertEquals(List.of(fits.start(), fits.end()), List.of(c.passages().get(0).start(), c.passages().get(0).end()));
        assertFalse(c.passages().get(0).truncated());
        // without alternatives the best hit gets its parent's first words, cut (as before)
        PackedContext without = pack(List.of(seed(big, 0), seed(other, 1)), emma(o -> true), budget, ContextOptions.Order.RANK);
        assertEquals(big.start(), without.passages().get(0).start());
        assertTrue(without.passages().get(0).truncated());
    }

    @Test
    public void testPack_theBestHitTakesOnlyAFinerChunkOfItsOwnMatch_lowerHitsAnyThatFits() {
        Chunk matched = child(3, 1, 0);
        Chunk elsewhere = child(3, 2, 3); // in the parent's other half: outside the matched θ/2 chunk
        assertTrue(elsewhere.start() >= matched.end());
        int budget = WORDS.count(elsewhere.text()) + 1;
        assertTrue("the match does not fit", WORDS.count(matched.text()) > budget);
        List<int[]> alternatives = List.<int[]>of(new int[] {elsewhere.start(), elsewhere.end()});
        // best hit: its match cut to the budget, not a chunk elsewhere in its parent
        PackedContext best = pack(List.of(new Seed("emma", matched.start(), matched.end(), 0, "hit0", alternatives)),
            emma(o -> true), budget, ContextOptions.Order.RANK);
        assertEquals(matched.start(), best.passages().get(0).start());
        assertTrue(best.passages().get(0).truncated());
        // a finer chunk inside the match is taken whole
        Chunk inside = child(3, 2, 0);
        assertTrue(inside.start() >= matched.start() && inside.end() <= matched.end());
        PackedContext finer = pack(List.of(new Seed("emma", matched.start(), matched.end(), 0, "hit0",
            List.<int[]>of(new int[] {elsewhere.start(), elsewhere.end()}, new int[] {inside.start(), inside.end()}))),
            emma(o -> true), WORDS.count(inside.text()), ContextOptions.Order.RANK);
        assertEquals(List.of(inside.start(), inside.end()), List.of(finer.passages().get(0).start(), finer.passages().get(0).end()));
        assertFalse(finer.passages().get(0).truncated());
        // a lower hit: any of its alternatives that fits
        Chunk first = child(9, 2, 0);
        PackedContext lower = pack(List.of(seed(first, 0), new Seed("emma", matched.start(), matched.end(), 1, "hit1", alternatives)),
            emma(o -> true), WORDS.count(first.text()) + WORDS.count(elsewhere.text()) + 2, ContextOptions.Order.RANK);
        assertEquals(List.of("hit0", "hit1"), lower.passages().stream().map(p -> p.hits().get(0)).toList());
        Passage second = lower.passages().get(1);
        assertTrue(second.start() <= elsewhere.start() && second.end() >= elsewhere.end());
    }

    /** The sentences of {@code c} at source offsets (the JDK's sentence breaks, as the query's evidence sentences), longest first. */
    private static List<int[]> sentencesOf(Chunk c) {
        java.text.BreakIterator it = java.text.BreakIterator.getSentenceInstance(java.util.Locale.ROOT);
        it.setText(c.text());
        List<int[]> out = new ArrayList<>();
        for (int from = it.first(), to = it.next(); to != java.text.BreakIterator.DONE; from = to, to = it.next()) {
            String piece = c.text().substring(from, to);
            int lead = piece.length() - piece.stripLeading().length();
            if (!piece.isBlank()) {
                out.add(new int[] {c.start() + from + lead, c.start() + from + lead + piece.strip().length()});
            }
        }
        out.sort(java.util.Comparator.comparingInt((int[] x) -> x[0] - x[1]));
        return out;
    }

    @Test
    public void testPack_theBestHitWhoseMatchDoesNotFit_startsFromItsFirstSentenceInsideTheMatchThatFits() {
        Chunk matched = child(3, 1, 0);
        List<int[]> inside = sentencesOf(matched);
        assertTrue("several sentences of different lengths", inside.size() >= 3);
        int[] longest = inside.get(0);
        int[] fitting = inside.get(1);
        int budget = WORDS.count(EMMA.substring(fitting[0], fitting[1]));
        assertTrue(WORDS.count(EMMA.substring(longest[0], longest[1])) > budget);
        int[] outside = sentencesOf(child(3, 2, 3)).get(0);
        assertTrue(outside[0] >= matched.end());
        // best first: a sentence outside the match, one too long, then the one that fits
        List<int[]> sentences = List.of(outside, longest, fitting);
        PackedContext c = pack(List.of(new Seed("emma", matched.start(), matched.end(), 0, "hit0", 1.0, List.of(), sentences),
            seed(child(9, 2, 0), 1)), emma(o -> true), budget, ContextOptions.Order.RANK);
        assertEquals(1, c.passages().size());
        Passage p = c.passages().get(0);
        // the sentence, whole, inside the match (the fill may add a word its tokens share: "change?—It" counts one word here)
        assertTrue(p.start() <= fitting[0] && p.end() >= fitting[1] && p.start() >= matched.start() && p.end() <= matched.end());
        assertTrue(p.start() > matched.start());
        assertEquals(budget, c.tokens());
        assertEquals(List.of("hit0"), p.hits());
        assertFalse(p.truncated());
        // with room left, it grows from there like any passage: the rest of its chunk first
        PackedContext wider = pack(List.of(new Seed("emma", matched.start(), matched.end(), 0, "hit0", 1.0, List.of(), List.of(fitting))),
            emma(o -> true), budget + 30, ContextOptions.Order.RANK);
        Passage w = wider.passages().get(0);
        assertTrue(w.start() <= fitting[0] && w.end() >= fitting[1] && w.end() - w.start() > fitting[1] - fitting[0]);
        // a lower hit's sentences are not used: its chunk's first words enter, as without them
        Chunk first = shortestChunk();
        PackedContext lower = pack(List.of(seed(first, 0), new Seed("emma", matched.start(), matched.end(), 1, "hit1", 0.99, List.of(),
            sentences)), emma(o -> true), WORDS.count(first.text()) + 2 + budget, ContextOptions.Order.RANK);
        Passage second = lower.passages().stream().filter(x -> x.hits().contains("hit1")).findFirst().orElseThrow();
        assertEquals(matched.start(), second.start());
        assertTrue(second.truncated());
    }

    @Test
    public void testPack_hitsWithOneIdInTwoIndices_packAsHitsWithTwoIds() {
        // an alias or a pattern over two chunk indices: the same source document indexed in both has the same chunk _ids
        Chunk matched = child(5, 2, 1);
        Chunk other = child(20, 2, 2);
        Map<String, SourceText> documents = Map.of("books-1", emma(o -> true), "books-2", emma(o -> true));
        int words = WORDS.count(matched.text());
        for (int budget : new int[] {words + 40, 2 * words + 100, 2 * words + 240, 3 * words + 500, 3000}) {
            List<List<Object>> passages = new ArrayList<>();
            for (String secondId : new String[] {"ch:5", "ch:5 in books-2"}) {
                List<Seed> seeds = List.of(new Seed("books-1", matched.start(), matched.end(), 0, "ch:5", 1.0, List.of()),
                    new Seed("books-2", matched.start(), matched.end(), 1, secondId, 0.97, List.of()),
                    new Seed("books-1", other.start(), other.end(), 2, "ch:20", 0.95, List.of()));
                PackedContext c = new ContextPacker(WORDS).pack(seeds, documents, new ContextOptions(budget, ContextOptions.Order.RANK, "\n\n"));
                passages.add(c.passages().stream().map(p -> (Object) List.of(p.document(), p.start(), p.end())).toList());
            }
            assertEquals("budget " + budget, passages.get(1), passages.get(0));
        }
    }

    @Test
    public void testPack_growsIntoTheNeighbouringParents() {
        Chunk matched = child(5, 2, 1);
        PackedContext c = pack(List.of(seed(matched, 0)), emma(o -> true), 900, ContextOptions.Order.RANK);
        assertEquals(1, c.passages().size());
        Passage p = c.passages().get(0);
        assertTrue(p.start() < PARENTS.get(5).parent().start());
        assertTrue(p.end() > PARENTS.get(5).parent().end());
        assertTrue(p.start() <= matched.start() && p.end() >= matched.end());
    }

    @Test
    public void testPack_neverReadsAcrossAParentTheCallerCannotRead() {
        Chunk hidden = PARENTS.get(6).parent();
        Chunk lastOf5 = PARENTS.get(5).children().stream().filter(ch -> ch.level() == 2).reduce((a, b) -> b).orElseThrow();
        PackedContext c = pack(List.of(seed(lastOf5, 0), seed(child(7, 2, 0), 1)), emma(o -> o != 6), 4000,
            ContextOptions.Order.RANK);
        for (Passage p : c.passages()) {
            assertTrue(p.end() <= hidden.start() || p.start() >= hidden.end());
        }
        assertFalse(c.text().contains(hidden.text().substring(0, 80)));
        assertEquals(2, c.passages().size());
    }

    @Test
    public void testPack_whenNotEvenTheBestChunkFits_quotesItsFirstWords() {
        Chunk matched = child(5, 2, 1);
        PackedContext c = pack(List.of(seed(matched, 0), seed(child(8, 2, 0), 1)), emma(o -> true), 10, ContextOptions.Order.RANK);
        assertEquals(1, c.passages().size());
        Passage p = c.passages().get(0);
        assertTrue(p.truncated());
        assertEquals(matched.start(), p.start());
        assertEquals(10, c.tokens());
        assertTrue(matched.text().startsWith(p.text()));
    }

    @Test
    public void testPack_documentOrder_readsPassagesInSourceOrder() {
        Chunk later = child(9, 2, 0);
        Chunk earlier = child(2, 2, 0);
        int budget = WORDS.count(later.text()) + WORDS.count(earlier.text());
        PackedContext rank = pack(List.of(seed(later, 0), seed(earlier, 1)), emma(o -> true), budget, ContextOptions.Order.RANK);
        PackedContext doc = pack(List.of(seed(later, 0), seed(earlier, 1)), emma(o -> true), budget, ContextOptions.Order.DOCUMENT);
        assertEquals(later.start(), rank.passages().get(0).start());
        assertEquals(earlier.start(), doc.passages().get(0).start());
    }

    @Test
    public void testPack_seedsOfOneParent_mergeIntoOnePassageCitingBothHits() {
        Chunk a = child(4, 2, 0);
        Chunk b = child(4, 2, 1);
        PackedContext c = pack(List.of(seed(a, 0), seed(b, 1)), emma(o -> true), WORDS.count(a.text()) + WORDS.count(b.text()),
            ContextOptions.Order.RANK);
        assertEquals(1, c.passages().size());
        assertEquals(List.of("hit0", "hit1"), c.passages().get(0).hits());
    }

    @Test
    public void testPack_withATokenizerThatCountsMoreTogether_cutsTheLastPassageUntilTheWholeFits() {
        // one extra token per 500 characters: the sum of the parts' counts underestimates the whole's
        TokenCounter sticky = t -> WORDS.count(t) + t.length() / 500;
        List<Seed> seeds = List.of(seed(child(7, 2, 1), 0), seed(child(3, 2, 0), 1), seed(child(12, 2, 1), 2));
        PackedContext c = new ContextPacker(sticky).pack(seeds, Map.of("emma", emma(o -> true)),
            new ContextOptions(300, ContextOptions.Order.RANK, "\n\n"));
        assertTrue(c.tokens() <= 300);
        assertEquals(sticky.count(c.text()), c.tokens());
    }
    /** {@link #WORDS} that also gives its tokens' starts, as the embedded models' counter does. */
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

    @Test
    public void testPack_countingFromEachParentsTokenStarts_equalsCountingEveryPassage() {
        java.util.Random random = new java.util.Random(7);
        for (int round = 0; round < 60; round++) {
            List<Seed> seeds = new ArrayList<>();
            for (int rank = 0; rank < 1 + random.nextInt(8); rank++) {
                ChunkedParent p = PARENTS.get(random.nextInt(PARENTS.size()));
                List<Chunk> all = p.all();
                seeds.add(seed(all.get(random.nextInt(all.size())), rank));
            }
            int budget = 4 + random.nextInt(1200);
            int hidden = random.nextInt(PARENTS.size());
            ContextOptions options = new ContextOptions(budget, random.nextBoolean() ? ContextOptions.Order.RANK
                : ContextOptions.Order.DOCUMENT, "\n\n");
            PackedContext bySpans = new ContextPacker(WORDS).pack(seeds, Map.of("emma", emma(o -> o != hidden)), options);
            PackedContext byStarts = new ContextPacker(WORDS_WITH_STARTS).pack(seeds, Map.of("emma", emma(o -> o != hidden)), options);
            assertEquals("round " + round, bySpans, byStarts);
        }
    }
    @Test
    public void testPack_neverCutsAWord_acrossTheBlankLinesBetweenParents() {
        // Emma's parents are separated by blank lines: a gap of two or more characters in the source, rendered as one line
        // break in a passage; cuts were once computed on the rendered text and fell a character short after each gap
        java.util.Random random = new java.util.Random(11);
        for (int round = 0; round < 60; round++) {
            List<Seed> seeds = new ArrayList<>();
            for (int rank = 0; rank < 1 + random.nextInt(6); rank++) {
                List<Chunk> all = PARENTS.get(random.nextInt(PARENTS.size())).all();
                seeds.add(seed(all.get(random.nextInt(all.size())), rank));
            }
            PackedContext c = pack(seeds, emma(o -> true), 8 + random.nextInt(600), ContextOptions.Order.RANK);
            for (Passage p : c.passages()) {
                assertTrue("round " + round + ": starts inside a word at " + p.start(),
                    p.start() == 0 || Character.isWhitespace(EMMA.charAt(p.start() - 1)));
                assertTrue("round " + round + ": ends inside a word at " + p.end() + ": …" + p.text().substring(Math.max(0,
                    p.text().length() - 20)), p.end() == EMMA.length() || Character.isWhitespace(EMMA.charAt(p.end())));
            }
        }
    }
}

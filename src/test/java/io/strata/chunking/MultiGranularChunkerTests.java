package io.strata.chunking;

import org.junit.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

public class MultiGranularChunkerTests {
    private static final SentenceSegmenter SEGMENTER = SentenceSegmenter.english();
    private static final String EMMA = TestTexts.emma();

    private static MultiGranularChunker recursive(int theta) {
        return new MultiGranularChunker(new RecursiveStrategy(theta), MultiGranularChunker.DEFAULT_GRANULARITIES, SEGMENTER);
    }

    @Test
    public void testChunk_onEmma_everyChunkTextEqualsItsSourceSpan() {
        for (int theta : new int[] { 50, 200, 300, 500 }) {
            for (ChunkedParent p : recursive(theta).chunk(EMMA)) {
                for (Chunk c : p.all()) {
                    assertEquals(EMMA.substring(c.start(), c.end()), c.text());
                    assertFalse("chunks are trimmed", c.text().isBlank());
                    assertEquals(c.text().strip(), c.text());
                }
            }
        }
    }

    @Test
    public void testChunk_onEmma_parentsCoverTheTextInOrderUpToWhitespace_andEachLevelsChildrenAreInOrderInsideTheirParent() {
        // that a level with the coarser chunks where it has none covers its parent: ChildPolicyTests
        List<ChunkedParent> parents = recursive(300).chunk(EMMA);
        assertCovers(EMMA, 0, EMMA.length(), parents.stream().map(ChunkedParent::parent).toList());
        for (ChunkedParent p : parents) {
            for (int level = 1; level <= 2; level++) {
                int l = level;
                List<Chunk> children = p.children().stream().filter(c -> c.level() == l).toList();
                int pos = p.parent().start();
                for (Chunk c : children) {
                    assertTrue(c + " in order inside " + p.parent().span(), c.start() >= pos && c.end() <= p.parent().end());
                    pos = c.end();
                }
                for (int i = 0; i < children.size(); i++) {
                    assertEquals(i, children.get(i).ordinal());
                }
            }
        }
    }

    @Test
    public void testChunk_onEmma_noChunkExceedsItsLevelSize() {
        int theta = 200;
        TextIndex index = new TextIndex(EMMA, SEGMENTER);
        for (ChunkedParent p : recursive(theta).chunk(EMMA)) {
            assertTrue(index.words(p.parent().span()) <= theta);
            for (Chunk c : p.children()) {
                // a child below a quarter of its level joined a neighbour: at most that quarter more
                int limit = c.level() == 1 ? 100 : 50;
                assertTrue(c + " exceeds " + limit, index.words(c.span()) < limit * (1 + ChildPolicy.MIN_FRACTION));
            }
        }
    }

    @Test
    public void testChunk_onEmma_childrenNeverSplitASentenceThatFits() {
        int theta = 300;
        TextIndex index = new TextIndex(EMMA, SEGMENTER);
        int[] bounds = index.sentenceBoundaries();
        List<Span> sentences = new ArrayList<>();
        for (int i = 0; i + 1 < bounds.length; i++) {
            Span s = index.trim(bounds[i], bounds[i + 1]);
            if (s.length() > 0) {
                sentences.add(s);
            }
        }
        for (ChunkedParent p : recursive(theta).chunk(EMMA)) {
            for (Chunk c : p.all()) {
                int limit = c.level() == 0 ? theta : c.level() == 1 ? theta / 2 : theta / 4;
                for (Span s : sentences) {
                    boolean overlaps = s.start() < c.end() && c.start() < s.end();
                    if (overlaps && index.words(s) <= limit) {
                        assertTrue("chunk " + c.span() + " cuts sentence " + s, c.span().contains(s));
                    }
                }
            }
        }
    }

    @Test
    public void testChunk_isDeterministic() {
        assertEquals(recursive(300).chunk(EMMA), recursive(300).chunk(EMMA));
    }

    @Test
    public void testChunk_smallerTheta_givesMoreParentsNearTheBound() {
        TextIndex index = new TextIndex(EMMA, SEGMENTER);
        List<ChunkedParent> p200 = recursive(200).chunk(EMMA);
        List<ChunkedParent> p500 = recursive(500).chunk(EMMA);
        assertTrue(p200.size() > p500.size());
        double mean = p200.stream().mapToInt(p -> index.words(p.parent().span())).average().orElseThrow();
        // greedy merging fills parents: the mean is well above half of θ
        assertTrue("mean " + mean, mean > 120 && mean <= 200);
    }

    @Test
    public void testChunk_withoutGranularities_givesParentsOnly() {
        var chunker = new MultiGranularChunker(new RecursiveStrategy(300), List.of(), SEGMENTER);
        for (ChunkedParent p : chunker.chunk(EMMA)) {
            assertTrue(p.children().isEmpty());
            assertEquals(List.of(p.parent()), p.all());
        }
    }

    @Test
    public void testChunk_levelsFollowGranularityOrder() {
        var chunker = new MultiGranularChunker(new RecursiveStrategy(400), List.of(0.5, 0.25, 0.125), SEGMENTER);
        Map<Integer, Integer> perLevel = new TreeMap<>();
        for (ChunkedParent p : chunker.chunk(EMMA)) {
            p.all().forEach(c -> perLevel.merge(c.level(), 1, Integer::sum));
        }
        assertEquals(List.of(0, 1, 2, 3), List.copyOf(perLevel.keySet()));
        assertTrue(perLevel.get(0) < perLevel.get(1) && perLevel.get(1) < perLevel.get(2) && perLevel.get(2) < perLevel.get(3));
    }

    @Test
    public void testSplit_whenSentenceLongerThanChild_cutsItAtWords() {
        String longSentence = "Long" + " word".repeat(29) + ".";
        String text = "Short one. " + longSentence + " Short two.";
        var chunker = new MultiGranularChunker(new RecursiveStrategy(40), List.of(0.25), SEGMENTER);
        List<ChunkedParent> parents = chunker.chunk(text);
        assertEquals(1, parents.size());
        TextIndex index = new TextIndex(text, SEGMENTER);
        List<Chunk> children = parents.get(0).children();
        for (Chunk c : children) {
            assertTrue(c.toString(), index.words(c.span()) < 10 * (1 + ChildPolicy.MIN_FRACTION));
        }
        // the 2-word sentences are below a quarter of θ/4 = 10: each joins the cut sentence's window beside it
        assertTrue(children.get(0).text().startsWith("Short one. Long word"));
        assertTrue(children.get(children.size() - 1).text().endsWith("word. Short two."));
        assertTrue(children.size() >= 3);
    }

    /**
     * Text beyond the Basic Multilingual Plane (emoji, their ZWJ sequences, rare CJK), combining marks and long runs without
     * spaces: no chunk of any level starts or ends inside a surrogate pair (its text would not be valid UTF-16, and JSON
     * would carry a replacement character instead of the source's), every chunk is its source span, within its level's size.
     */
    @Test
    public void testChunk_onTextBeyondTheBmp_neverCutsASurrogatePair_andEveryChunkIsItsSpan() {
        String[] pieces = { "word", "😀", "👩‍👩‍👧", "𠀀𠀁𠀂", "e\u0301te\u0301", "naïve", "😀😀😀😀😀😀😀😀😀😀😀😀", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
            "x😀y", "。", ".", "!", "\u00A0", "日本語の文です。" };
        String[] separators = { " ", " ", " ", "\n", "\n\n", "", "\t" };
        java.util.Random random = new java.util.Random(20261127);
        for (int round = 0; round < 300; round++) {
            StringBuilder b = new StringBuilder();
            for (int i = 0, n = 1 + random.nextInt(400); i < n; i++) {
                b.append(pieces[random.nextInt(pieces.length)]).append(separators[random.nextInt(separators.length)]);
            }
            String text = b.toString();
            int theta = 4 + random.nextInt(40);
            ChunkingStrategy strategy = switch (round % 3) {
                case 0 -> new RecursiveStrategy(theta);
                case 1 -> new SentenceStrategy(1 + random.nextInt(5), theta);
                default -> new ParagraphStrategy(theta);
            };
            TextIndex index = new TextIndex(text, SEGMENTER);
            for (ChunkedParent p : new MultiGranularChunker(strategy, MultiGranularChunker.DEFAULT_GRANULARITIES, SEGMENTER).chunk(text)) {
                for (Chunk c : p.all()) {
                    String where = "round " + round + " θ " + theta + " " + c.span();
                    assertEquals(where, text.substring(c.start(), c.end()), c.text());
                    assertFalse(where, Character.isLowSurrogate(text.charAt(c.start())));
                    assertFalse(where, Character.isHighSurrogate(text.charAt(c.end() - 1)));
                    assertTrue(where, index.words(c.span()) <= Math.max(1, theta));
                }
            }
        }
    }

    @Test
    public void testChunk_emptyOrBlankText_givesNoChunks() {
        assertTrue(recursive(300).chunk("").isEmpty());
        assertTrue(recursive(300).chunk(" \n\n\t ").isEmpty());
    }

    static void assertCovers(String text, int from, int to, List<Chunk> chunks) {
        int pos = from;
        for (Chunk c : chunks) {
            assertTrue("gap before " + c.span() + " is not whitespace", text.substring(pos, c.start()).isBlank());
            pos = c.end();
        }
        assertTrue(text.substring(pos, to).isBlank());
    }
}

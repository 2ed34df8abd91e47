package io.strata.chunking;

import io.strata.chunking.structure.StructuredLayout;
import org.junit.Test;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

/** Children that add nothing are not written ({@link ChildPolicy}), checked by brute force over the chunks. */
public class ChildPolicyTests {
    private static final SentenceSegmenter SEGMENTER = SentenceSegmenter.english();
    private static final String EMMA = TestTexts.emma();

    private static MultiGranularChunker recursive(int theta) {
        return new MultiGranularChunker(new RecursiveStrategy(theta), MultiGranularChunker.DEFAULT_GRANULARITIES, SEGMENTER);
    }

    @Test
    public void testChunk_onEmma_noChildRepeatsItsParentOrACoarserChild() {
        for (int theta : new int[] { 50, 200, 300, 500 }) {
            for (ChunkedParent p : recursive(theta).chunk(EMMA)) {
                Set<Span> coarser = new HashSet<>(Set.of(p.parent().span()));
                for (int level = 1; level <= 2; level++) {
                    int l = level;
                    List<Chunk> children = p.children().stream().filter(c -> c.level() == l).toList();
                    for (Chunk c : children) {
                        assertFalse("θ " + theta + ": " + c + " repeats a coarser chunk", coarser.contains(c.span()));
                    }
                    children.forEach(c -> coarser.add(c.span()));
                }
            }
        }
    }

    @Test
    public void testChunk_onEmmaTheta200_noChildBelowAQuarterOfItsLevel_andNoneOfThreeWordsOrFewer() {
        int theta = 200;
        TextIndex index = new TextIndex(EMMA, SEGMENTER);
        int tiny = 0;
        for (ChunkedParent p : recursive(theta).chunk(EMMA)) {
            for (int level = 1; level <= 2; level++) {
                int l = level;
                int size = level == 1 ? 100 : 50;
                List<Chunk> children = p.children().stream().filter(c -> c.level() == l).toList();
                for (Chunk c : children) {
                    if (index.words(c.span()) <= 3) {
                        tiny++;
                    }
                    if (children.size() > 1) {
                        assertTrue(c + " is below a quarter of " + size, index.words(c.span()) >= size * ChildPolicy.MIN_FRACTION);
                    }
                    // a merged child exceeds θ·g by less than the quarter it took in
                    assertTrue(c + " exceeds " + size + " by a quarter", index.words(c.span()) < size * (1 + ChildPolicy.MIN_FRACTION));
                }
            }
        }
        assertEquals(0, tiny);
    }

    /**
     * Each level, with the coarser chunks where it has none, still covers its parent up to whitespace, in order: what
     * strata_context grows passages by.
     */
    @Test
    public void testChunk_onEmma_eachLevelWithTheCoarserChunksWhereItHasNone_coversTheParent() {
        for (int theta : new int[] { 50, 200, 500 }) {
            for (ChunkedParent p : recursive(theta).chunk(EMMA)) {
                List<Span> effective = List.of(p.parent().span());
                for (int level = 1; level <= 2; level++) {
                    int l = level;
                    List<Span> mine = p.children().stream().filter(c -> c.level() == l).map(Chunk::span).toList();
                    List<Span> next = new ArrayList<>(mine);
                    for (Span s : effective) {
                        if (mine.stream().noneMatch(m -> m.start() < s.end() && s.start() < m.end())) {
                            next.add(s);
                        }
                    }
                    next.sort((a, b) -> Integer.compare(a.start(), b.start()));
                    int at = p.parent().start();
                    for (Span s : next) {
                        assertTrue("gap before " + s, EMMA.substring(at, s.start()).isBlank());
                        at = s.end();
                    }
                    assertTrue(EMMA.substring(at, p.parent().end()).isBlank());
                    effective = next;
                }
            }
        }
    }

    @Test
    public void testChunk_parentOfAtMostAQuarterTheta_hasNoChildren_andOneOfHalfThetaOnlyQuarterChildren() {
        String small = "Emma Woodhouse, handsome, clever, and rich, had lived nearly twenty-one years in the world.";
        List<ChunkedParent> parents = recursive(200).chunk(small);
        assertEquals(1, parents.size());
        assertEquals(List.of(), parents.get(0).children()); // 15 words: θ/2 and θ/4 children would both be the parent
        String two = small + " " + small + " " + small + " " + small + " " + small; // 75 words: one θ/2 child = the parent
        ChunkedParent p = recursive(200).chunk(two).get(0);
        assertTrue(p.children().stream().allMatch(c -> c.level() == 2));
        assertEquals(2, p.children().size());
    }

    @Test
    public void testMergeTiny_aSentenceBelowAQuarter_joinsItsSmallerNeighbour_andOrdinalsAreRenumbered() {
        // θ/4 = 8 words: sentences of 8, 1 and 7 words (as a splitter leaves them when each pair exceeds 8); the 1-word
        // sentence (below 2) joins the 7-word one, the smaller neighbour
        String a = "One two three four five six seven eight.";
        String b = "Nine.";
        String c = "Ten eleven twelve thirteen fourteen fifteen sixteen.";
        String text = a + " " + b + " " + c;
        TextIndex index = new TextIndex(text, SEGMENTER);
        Span parent = index.trim(0, text.length());
        List<Chunk> children = new ArrayList<>();
        int at = 0;
        for (String sentence : List.of(a, b, c)) {
            Span s = new Span(text.indexOf(sentence, at), text.indexOf(sentence, at) + sentence.length());
            children.add(new Chunk(sentence, s, 1, children.size()));
            at = s.end();
        }
        MultiGranularChunker.Result r = new ChildPolicy(new int[] { 8 }).mergeTiny(new MultiGranularChunker.Result(
            List.of(new ChunkedParent(new Chunk(parent.of(text), parent, 0, 0), children)), List.of(), index));
        List<Chunk> out = r.parents().get(0).children();
        assertEquals(List.of(a, b + " " + c), out.stream().map(Chunk::text).toList());
        assertEquals(List.of(0, 1), out.stream().map(Chunk::ordinal).toList());
        // nothing below the minimum: unchanged, the same object
        MultiGranularChunker.Result same = new MultiGranularChunker.Result(r.parents(), List.of(), index);
        assertTrue(same == new ChildPolicy(new int[] { 8 }).mergeTiny(same));
    }

    @Test
    public void testMarkdown_aHeadingWhoseSectionBodyIsSplit_neverStandsAloneAsAParent() {
        StringBuilder md = new StringBuilder("# Guide\n\nIntro text of the guide.\n\n## Troubleshoot\n\n");
        for (int i = 0; i < 6; i++) {
            md.append("When the node does not start, read its log first. Look for the first error line number ").append(i)
                .append(" and fix it.\n\n"); // 21 words: above θ with the heading
        }
        md.append("## Next\n\nShort closing words.\n");
        String text = md.toString();
        MultiGranularChunker chunker = new MultiGranularChunker(new RecursiveStrategy(20), MultiGranularChunker.DEFAULT_GRANULARITIES,
            SEGMENTER, StructuredLayout.of(DocumentFormat.MARKDOWN));
        for (ChunkedParent p : chunker.chunk(text)) {
            for (Chunk c : p.all()) {
                String stripped = c.text().replaceAll("[#\\s]", "");
                assertFalse("a heading alone: " + c, stripped.equals("Troubleshoot") || stripped.equals("Guide") || stripped.equals("Next"));
            }
        }
        // the heading leads its section's first content
        assertTrue(chunker.chunk(text).stream().anyMatch(p -> p.parent().text().startsWith("## Troubleshoot\n\nWhen the node")));
    }

    /**
     * {@code children.keep_redundant} (for comparison only) writes what the child splitters cut and nothing else: oracle =
     * {@link RecursiveSplitter} run on each parent here, at θ·g.
     */
    @Test
    public void testKeepingRedundantChildren_onEmma_writesEveryChildTheSplittersCut() {
        TextIndex index = new TextIndex(EMMA, SEGMENTER);
        for (int theta : new int[] { 200, 500 }) {
            MultiGranularChunker keeping = recursive(theta).keepingRedundantChildren();
            assertTrue(keeping.keepsRedundantChildren());
            List<ChunkedParent> all = keeping.chunk(EMMA);
            List<ChunkedParent> now = recursive(theta).chunk(EMMA);
            assertEquals("the parents are the same", now.stream().map(p -> p.parent().span()).toList(),
                all.stream().map(p -> p.parent().span()).toList());
            int repeats = 0;
            for (ChunkedParent p : all) {
                List<Span> expected = new ArrayList<>();
                for (int level = 1; level <= 2; level++) {
                    expected.addAll(new RecursiveSplitter(MultiGranularChunker.childWords(theta, level == 1 ? 0.5 : 0.25))
                        .split(index, p.parent().span()));
                }
                assertEquals(expected, p.children().stream().map(Chunk::span).toList());
                repeats += (int) p.children().stream().filter(c -> c.span().equals(p.parent().span())).count();
            }
            // at θ 200 some parents are within θ/2: their θ/2 child repeats them
            assertTrue("θ " + theta + ": the kept children repeat parents", theta > 200 || repeats > 0);
            assertTrue(all.stream().mapToInt(p -> p.children().size()).sum() > now.stream().mapToInt(p -> p.children().size()).sum());
        }
    }
}

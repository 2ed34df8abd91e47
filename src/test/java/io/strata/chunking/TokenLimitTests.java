package io.strata.chunking;

import org.junit.Test;

import java.util.List;
import java.util.Map;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/** The model's token limit and θ in tokens, on {@link CharTokens} (one token per non-whitespace character). */
public class TokenLimitTests {
    private static final SentenceSegmenter SEGMENTER = SentenceSegmenter.english();

    /**
     * Every chunk of every level: its text is its span of the source, and every chunk that is embedded fits the model; a
     * parent that is not embedded is above the window, within {@code maxParent}, and every non-blank character of it lies in
     * one of its children (so the MAX over them sees all of it).
     */
    private static void assertFitsWithExactOffsets(String text, List<ChunkedParent> parents, ModelTokens tokens, int maxParent) {
        for (ChunkedParent p : parents) {
            for (Chunk c : p.all()) {
                assertEquals(text.substring(c.start(), c.end()), c.text());
                assertTrue(p.parent().span().contains(c.span()));
            }
            for (Chunk c : p.embedded()) {
                assertTrue(c + " has " + tokens.embedded(c.text()) + " tokens", tokens.embedded(c.text()) <= tokens.limit());
            }
            if (!p.parentEmbedded()) {
                int n = tokens.embedded(p.parent().text());
                assertTrue(p.parent() + " has " + n + " tokens", n > tokens.limit() && n <= maxParent);
                for (int i = p.parent().start(); i < p.parent().end(); i++) {
                    int at = i;
                    assertTrue("character " + i + " of " + p.parent().span() + " is in no child", Character.isWhitespace(text.charAt(i))
                        || p.children().stream().anyMatch(c -> c.start() <= at && at < c.end()));
                }
            }
        }
    }

    private static void assertFitsWithExactOffsets(String text, List<ChunkedParent> parents, ModelTokens tokens) {
        assertFitsWithExactOffsets(text, parents, tokens, ParentSize.DEFAULT_MAX_TOKENS);
    }

    /** The old behaviour, reachable with {@code parents.max_tokens} at the window: every parent is embedded, cut to fit. */
    private static ParentSize atTheWindow(ModelTokens tokens) {
        return new ParentSize(tokens.limit());
    }

    @Test
    public void testLimit_whenAParentInWordsHasTooManyTokens_itIsCutAtTheSentenceNearestItsMiddle() {
        // 3 sentences of 8 words each, 32 non-space characters each; θ 100 words keeps them in one parent
        String sentence = "Aaaa bbbb cccc dddd eeee ffff gggg hhh. ";
        String text = (sentence + sentence + sentence).strip();
        CharTokens tokens = new CharTokens(90, 4); // 96 tokens + 4 as embedded
        var chunker = new MultiGranularChunker(new RecursiveStrategy(100), List.of(0.5), SEGMENTER).withTokens(tokens, false)
            .withParentSize(atTheWindow(tokens));
        MultiGranularChunker.Result r = chunker.chunkWithEvidence(text);
        assertEquals(1, r.limitSplits());
        assertEquals(2, r.parents().size());
        // the middle token sits in the second sentence; the sentence start nearest to it is that of the second sentence
        assertEquals(sentence.length(), r.parents().get(1).parent().start());
        assertEquals(List.of(0, 1), r.parents().stream().map(p -> p.parent().ordinal()).toList());
        assertFitsWithExactOffsets(text, r.parents(), tokens);
    }

    @Test
    public void testLimit_whenAWordAloneIsAboveTheLimit_itIsCutBetweenItsTokens() {
        String text = "short words first " + "9".repeat(250) + " and after";
        CharTokens tokens = new CharTokens(64, 2);
        var chunker = new MultiGranularChunker(new RecursiveStrategy(300), List.of(0.5, 0.25), SEGMENTER).withTokens(tokens, false);
        MultiGranularChunker.Result r = chunker.chunkWithEvidence(text);
        assertTrue(r.limitSplits() >= 4);
        assertFitsWithExactOffsets(text, r.parents(), tokens);
        // together the parents still cover every character, in order, without overlap
        StringBuilder joined = new StringBuilder();
        int end = 0;
        for (ChunkedParent p : r.parents()) {
            assertTrue(p.parent().start() >= end);
            end = p.parent().end();
            joined.append(p.parent().text());
        }
        assertEquals(text.replace(" ", ""), joined.toString().replace(" ", ""));
    }

    @Test
    public void testLimit_whenEveryChunkFits_theResultIsUnchanged() {
        String text = TestTexts.emma().substring(0, 5000);
        var plain = new MultiGranularChunker(new RecursiveStrategy(100), MultiGranularChunker.DEFAULT_GRANULARITIES, SEGMENTER);
        MultiGranularChunker.Result r = plain.withTokens(new CharTokens(100_000, 2), false).chunkWithEvidence(text);
        assertEquals(0, r.limitSplits());
        assertEquals(plain.chunk(text), r.parents());
    }

    @Test
    public void testLimit_isDeterministic() {
        String text = TestTexts.emma().substring(0, 20000);
        var chunker = new MultiGranularChunker(new ParagraphStrategy(2000), MultiGranularChunker.DEFAULT_GRANULARITIES, SEGMENTER)
            .withTokens(new CharTokens(300, 3), false);
        MultiGranularChunker.Result a = chunker.chunkWithEvidence(text);
        assertTrue(a.limitSplits() > 0);
        assertEquals(a.parents(), chunker.chunkWithEvidence(text).parents());
        assertFitsWithExactOffsets(text, a.parents(), new CharTokens(300, 3));
    }

    @Test
    public void testLimit_whenAParentIsCut_itsChildrenFollowItAndAreRenumberedPerLevel() {
        String text = TestTexts.emma().substring(0, 3000);
        var chunker = new MultiGranularChunker(new RecursiveStrategy(400), MultiGranularChunker.DEFAULT_GRANULARITIES, SEGMENTER)
            .withTokens(new CharTokens(400, 2), false).withParentSize(new ParentSize(400));
        MultiGranularChunker.Result r = chunker.chunkWithEvidence(text);
        assertTrue(r.limitSplits() > 0);
        assertFitsWithExactOffsets(text, r.parents(), new CharTokens(400, 2));
        for (ChunkedParent p : r.parents()) {
            // a piece of a cut parent may be within θ/2: its θ/2 child would repeat it and is not written
            assertTrue(p.children().stream().allMatch(c -> c.start() >= p.parent().start() && c.end() <= p.parent().end()));
            assertTrue(p.children().stream().anyMatch(c -> c.level() == 1) || p.children().stream().noneMatch(c -> c.span().equals(p.parent().span())));
            int[] next = new int[3];
            for (Chunk c : p.children()) {
                assertEquals(next[c.level()]++, c.ordinal());
            }
        }
    }

    @Test
    public void testLimit_whenAParentIsAboveTheWindow_itIsKeptWholeWithoutAVector_andItsChildrenCoverEveryWord() {
        String text = TestTexts.emma().substring(0, 6000);
        CharTokens tokens = new CharTokens(400, 2);
        // every child the splitters cut (no ChildPolicy), so the pieces the limit adds are counted alone
        var plain = new MultiGranularChunker(new RecursiveStrategy(400), MultiGranularChunker.DEFAULT_GRANULARITIES, SEGMENTER)
            .keepingRedundantChildren();
        List<ChunkedParent> uncut = plain.chunk(text);
        MultiGranularChunker.Result r = plain.withTokens(tokens, false).chunkWithEvidence(text);
        // the parents are the strategy's, whole: same spans and texts as without any limit
        assertEquals(uncut.stream().map(p -> p.parent()).toList(), r.parents().stream().map(p -> p.parent()).toList());
        assertTrue(r.parents().stream().anyMatch(p -> !p.parentEmbedded()));
        for (ChunkedParent p : r.parents()) {
            assertEquals(p.parent().toString(), tokens.embedded(p.parent().text()) <= 400, p.parentEmbedded());
        }
        assertFitsWithExactOffsets(text, r.parents(), tokens);
        // only the children above the window were cut: each cut adds one piece
        int before = uncut.stream().mapToInt(p -> p.children().size()).sum();
        int after = r.parents().stream().mapToInt(p -> p.children().size()).sum();
        assertTrue(after > before);
        assertEquals(after - before, r.limitSplits());
    }

    @Test
    public void testLimit_whenAParentIsAboveParentsMaxTokens_itIsCutIntoPiecesWithinIt() {
        String text = TestTexts.emma().substring(0, 6000);
        CharTokens tokens = new CharTokens(100, 2);
        var chunker = new MultiGranularChunker(new RecursiveStrategy(400), MultiGranularChunker.DEFAULT_GRANULARITIES, SEGMENTER)
            .withTokens(tokens, false).withParentSize(new ParentSize(300));
        MultiGranularChunker.Result r = chunker.chunkWithEvidence(text);
        assertTrue(r.parents().stream().anyMatch(p -> !p.parentEmbedded()));
        for (ChunkedParent p : r.parents()) {
            assertTrue(p.parent() + "", tokens.embedded(p.parent().text()) <= 300);
        }
        assertFitsWithExactOffsets(text, r.parents(), tokens, 300);
        assertEquals(java.util.stream.IntStream.range(0, r.parents().size()).boxed().toList(),
            r.parents().stream().map(p -> p.parent().ordinal()).toList());
    }

    @Test
    public void testLimit_whenAParentAboveTheWindowHasNoChildren_itIsCutToTheWindow() {
        String text = TestTexts.emma().substring(0, 3000);
        CharTokens tokens = new CharTokens(400, 2);
        var chunker = new MultiGranularChunker(new RecursiveStrategy(400), List.of(), SEGMENTER).withTokens(tokens, false);
        MultiGranularChunker.Result r = chunker.chunkWithEvidence(text);
        assertTrue(r.limitSplits() > 0);
        assertTrue(r.parents().stream().allMatch(ChunkedParent::parentEmbedded));
        assertFitsWithExactOffsets(text, r.parents(), tokens);
    }

    @Test
    public void testParentSize_parse_readsMaxTokens_andNamesTheFieldAndTheBounds() {
        assertEquals(ParentSize.DEFAULT, ParentSize.parse(null));
        assertEquals(8192, ParentSize.parse(null).maxTokens());
        assertEquals(2048, ParentSize.parse(Map.of("max_tokens", 2048)).maxTokens());
        ConfigException e = assertThrows(ConfigException.class, () -> ParentSize.parse(Map.of("max_tokens", 0)));
        assertEquals("parents.max_tokens", e.field());
        assertEquals("[parents.max_tokens] must be an integer in [1, 32768], got [0]", e.getMessage());
        e = assertThrows(ConfigException.class, () -> ParentSize.parse(Map.of("max_words", 10)));
        assertEquals("parents.max_words", e.field());
        assertEquals("[parents.max_words] is not an option of [parents]; supported: [max_tokens, vector]", e.getMessage());
        assertEquals(new ParentSize(8192, true), ParentSize.parse(Map.of("vector", "mean")));
        e = assertThrows(ConfigException.class, () -> ParentSize.parse(Map.of("vector", "max")));
        assertEquals("[parents.vector] must be one of [none, mean], got [max]", e.getMessage());
        e = assertThrows(ConfigException.class, () -> ParentSize.parse(2048));
        assertEquals("parents", e.field());
        assertEquals("[parents] must be an object like {\"max_tokens\": 8192}, got [2048]", e.getMessage());
    }

    @Test
    public void testMaxTokens_thetaAndChildrenCountTokens() {
        String text = TestTexts.emma().substring(0, 6000);
        CharTokens tokens = new CharTokens(512, 2);
        var chunker = new MultiGranularChunker(new RecursiveStrategy(200), List.of(0.5, 0.25), SEGMENTER).withTokens(tokens, true);
        MultiGranularChunker.Result r = chunker.chunkWithEvidence(text);
        assertEquals(0, r.limitSplits());
        for (ChunkedParent p : r.parents()) {
            assertTrue(p.parent().toString(), tokens.starts(p.parent().text()).length <= 200);
            for (Chunk c : p.children()) {
                // a child below a quarter of its level joined a neighbour: at most that quarter more
                assertTrue(c.toString(), tokens.starts(c.text()).length < (c.level() == 1 ? 100 : 50) * (1 + ChildPolicy.MIN_FRACTION));
            }
        }
        // in tokens (characters here), a parent holds far fewer words than 200
        assertTrue(r.parents().size() > 20);
    }

    @Test
    public void testMaxTokens_whenTextHasLongWords_theyAreCutAtThetaTokens() {
        String text = "a " + "x".repeat(25) + " b";
        TextIndex index = new TextIndex(text, SEGMENTER, new CharTokens(100, 0));
        List<Span> spans = new RecursiveSplitter(10).split(index, new Span(0, text.length()));
        assertEquals(List.of(new Span(0, 1), new Span(2, 12), new Span(12, 22), new Span(22, 29)), spans);
    }

    @Test
    public void testMaxTokens_fixedTokenWindowsCountTheModelsTokens() {
        String text = "abc de fgh";
        TextIndex index = new TextIndex(text, SEGMENTER, new CharTokens(100, 0));
        assertEquals(List.of(new Span(0, 3), new Span(4, 8), new Span(8, 10)), new FixedTokenStrategy(3, 0).split(index));
    }

    /** Strategy models with a tokenizer (and nothing else). */
    private static StrategyModels withTokens(ModelTokens tokens) {
        return new StrategyModels() {
            @Override
            public ModelTokens tokens(String field) {
                return tokens;
            }
        };
    }

    @Test
    public void testParse_maxTokens_givesThetaInTheModelsTokens() {
        CharTokens tokens = new CharTokens(512, 2);
        for (String type : List.of("recursive", "sentence", "paragraph", "fixed_token")) {
            ChunkingConfig.Parsed parsed = ChunkingConfig.parse("strategy", Map.of("type", type, "max_tokens", 128), withTokens(tokens));
            assertEquals(type, 128, parsed.strategy().maxWords());
            assertEquals(tokens, parsed.thetaTokens());
        }
        assertEquals(null, ChunkingConfig.parse("strategy", Map.of("type", "recursive", "max_words", 128), withTokens(tokens)).thetaTokens());
    }

    @Test
    public void testParse_maxTokensAndMaxWords_isRejectedNamingBoth() {
        ConfigException e = assertThrows(ConfigException.class, () -> ChunkingConfig.parse("strategy",
            Map.of("type", "recursive", "max_words", 100, "max_tokens", 100), withTokens(new CharTokens(512, 2))));
        assertEquals("strategy.max_tokens", e.field());
        assertTrue(e.getMessage(), e.getMessage().contains("[strategy.max_words] and [strategy.max_tokens] cannot be combined"));
        e = assertThrows(ConfigException.class, () -> ChunkingConfig.parse("strategy",
            Map.of("type", "fixed_token", "token_limit", 100, "max_tokens", 100), withTokens(new CharTokens(512, 2))));
        assertTrue(e.getMessage(), e.getMessage().contains("[strategy.token_limit] and [strategy.max_tokens] cannot be combined"));
    }

    @Test
    public void testParse_maxTokensAboveTheLargestParent_isRejected_andAboveTheModelsLimitAccepted() {
        ConfigException e = assertThrows(ConfigException.class, () -> ChunkingConfig.parse("strategy",
            Map.of("type", "recursive", "max_tokens", 40000), withTokens(new CharTokens(512, 2))));
        assertEquals("strategy.max_tokens", e.field());
        assertEquals("[strategy.max_tokens] must be an integer in [1, 32768], got [40000]", e.getMessage());
        assertEquals(2048, ChunkingConfig.parse("strategy", Map.of("type", "recursive", "max_tokens", 2048),
            withTokens(new CharTokens(512, 2))).strategy().maxWords());
    }

    @Test
    public void testParse_maxTokensWithoutATokenizer_isRejected() {
        ConfigException e = assertThrows(ConfigException.class, () -> ChunkingConfig.parse("strategy",
            Map.of("type", "recursive", "max_tokens", 100), StrategyModels.NONE));
        assertEquals("strategy.max_tokens", e.field());
        // parseStrategy cannot carry θ's unit: it refuses max_tokens rather than read it as words
        e = assertThrows(ConfigException.class, () -> ChunkingConfig.parseStrategy("strategy",
            Map.of("type", "recursive", "max_tokens", 100), withTokens(new CharTokens(512, 2))));
        assertEquals("strategy.max_tokens", e.field());
    }

    @Test
    public void testTokenStarts_inTokenMode_sizeCountsTokensStartingInTheSpan() {
        TextIndex index = new TextIndex("ab cd", SEGMENTER, new CharTokens(100, 0));
        assertEquals(4, index.size(0, 5));
        assertEquals(2, index.words(0, 5));
        assertArrayEquals(new int[] { 3, 4 }, index.tokenStartsIn(new Span(2, 5)));
    }
}

package io.strata.chunking;

import org.junit.Test;

import java.util.List;
import java.util.Map;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

public class FixedTokenStrategyTests {

    private static List<String> split(FixedTokenStrategy s, String text) {
        TextIndex index = new TextIndex(text, SentenceSegmenter.english());
        return s.split(index).stream().map(span -> span.of(text)).toList();
    }

    @Test
    public void testTokenStarts_skipsSpacesAndPunctuation_keepsApostrophesInsideWords() {
        String text = "“Poor Miss Taylor!—I don’t wish it,” said 2.5 men.";
        List<String> tokens = new java.util.ArrayList<>();
        int[] starts = FixedTokenStrategy.tokenStarts(text);
        for (int start : starts) {
            int end = start;
            while (end < text.length() && (Character.isLetterOrDigit(text.charAt(end)) || text.charAt(end) == '’'
                || text.charAt(end) == '.' && end + 1 < text.length() && Character.isDigit(text.charAt(end + 1)))) {
                end++;
            }
            tokens.add(text.substring(start, end));
        }
        assertEquals(List.of("Poor", "Miss", "Taylor", "I", "don’t", "wish", "it", "said", "2.5", "men"), tokens);
    }

    @Test
    public void testSplit_withoutOverlap_cutsWindowsOfTokenLimitTokens_punctuationStaysWithTheEarlierWindow() {
        FixedTokenStrategy s = new FixedTokenStrategy(3, 0);
        assertEquals(List.of("“One two, three!”", "four — five six.", "seven"),
            split(s, "  “One two, three!” four — five six. seven  "));
    }

    @Test
    public void testSplit_withOverlap_startsEachWindowLimitMinusFloorOfOverlapTokensLater() {
        // limit 4, rate 0.5 → 2 overlapping tokens, step 2
        FixedTokenStrategy s = new FixedTokenStrategy(4, 0.5);
        assertEquals(List.of("a b c d", "c d e f", "e f g"), split(s, "a b c d e f g"));
        // limit 4, rate 0.3 → floor(1.2) = 1 overlapping token, step 3
        assertEquals(List.of("a b c d", "d e f g"), split(new FixedTokenStrategy(4, 0.3), "a b c d e f g"));
    }

    @Test
    public void testSplit_withoutOverlap_coversEveryNonWhitespaceCharacterOnce() {
        String text = TestTexts.emma();
        TextIndex index = new TextIndex(text, SentenceSegmenter.english());
        List<Span> spans = new FixedTokenStrategy(50, 0).split(index);
        int covered = 0;
        int previousEnd = 0;
        for (Span span : spans) {
            assertTrue(span.start() >= previousEnd);
            assertEquals(span, index.trim(span.start(), span.end()));
            for (int i = previousEnd; i < span.start(); i++) {
                assertTrue("uncovered character at " + i, Character.isWhitespace(text.charAt(i)));
            }
            assertTrue(FixedTokenStrategy.tokenStarts(span.of(text)).length <= 50);
            covered += span.length();
            previousEnd = span.end();
        }
        assertTrue(text.substring(previousEnd).isBlank());
        assertTrue(spans.size() > 100);
        assertTrue(covered > 0);
    }

    @Test
    public void testSplit_textWithoutTokens_isOneParent_blankTextNone() {
        FixedTokenStrategy s = new FixedTokenStrategy(10, 0);
        assertEquals(List.of("— !"), split(s, " — ! "));
        assertEquals(List.of(), split(s, "   "));
    }

    @Test
    public void testMultiGranular_overlappingParentsEachGetTheirOwnChildren() {
        var chunker = new MultiGranularChunker(new FixedTokenStrategy(8, 0.5), List.of(0.5), SentenceSegmenter.english());
        String text = "One two three four. Five six seven eight. Nine ten eleven twelve. Thirteen fourteen.";
        List<ChunkedParent> parents = chunker.chunk(text);
        assertEquals(3, parents.size());
        assertTrue(parents.get(1).parent().start() < parents.get(0).parent().end());
        for (ChunkedParent p : parents) {
            for (Chunk c : p.children()) {
                assertTrue(p.parent().span().contains(c.span()));
                assertEquals(text.substring(c.start(), c.end()), c.text());
            }
        }
    }

    @Test
    public void testParse_readsTokenLimitAndOverlapRate_rejectsOverlapAboveHalf() {
        FixedTokenStrategy s = (FixedTokenStrategy) ChunkingConfig.parseStrategy("strategy",
            Map.of("type", "fixed_token", "token_limit", 200, "overlap_rate", 0.25));
        assertEquals(200, s.tokenLimit());
        assertEquals(200, s.maxWords());
        assertEquals(0.25, s.overlapRate(), 0);
        FixedTokenStrategy defaults = (FixedTokenStrategy) ChunkingConfig.parseStrategy("strategy", Map.of("type", "fixed_token"));
        assertEquals(384, defaults.tokenLimit());
        assertEquals(0, defaults.overlapRate(), 0);
        ConfigException e = assertThrows(ConfigException.class,
            () -> ChunkingConfig.parseStrategy("strategy", Map.of("type", "fixed_token", "overlap_rate", 0.6)));
        assertEquals("strategy.overlap_rate", e.field());
        assertEquals("[strategy.overlap_rate] must be a number in [0.0, 0.5], got [0.6]", e.getMessage());
        ConfigException unknown = assertThrows(ConfigException.class,
            () -> ChunkingConfig.parseStrategy("strategy", Map.of("type", "fixed_token", "max_words", 300)));
        assertEquals("strategy.max_words", unknown.field());
    }
}

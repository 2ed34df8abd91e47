package io.strata.chunking;

import org.junit.Test;

import java.util.List;
import java.util.Locale;

import static org.junit.Assert.assertTrue;

/**
 * The model's token limit on a text far above it costs tokenizing each character a bounded number of times, not once per
 * halving: a 200,000-character run of punctuation (200,000 tokens, no word or sentence to cut at) took the bundled model's
 * tokenizer 60 s in a {@code _chunk} of {@code "*" × 100,000 + "x" + "*" × 100,000}.
 */
public class TokenLimitCostTests {
    /** {@link CharTokens}, counting the characters it is given. */
    private static final class Counted implements ModelTokens {
        final CharTokens tokens = new CharTokens(512, 2);
        long chars;

        @Override
        public String model() {
            return tokens.model();
        }

        @Override
        public int limit() {
            return tokens.limit();
        }

        @Override
        public int embedded(String text) {
            chars += text.length();
            return tokens.embedded(text);
        }

        @Override
        public int[] starts(String text) {
            chars += text.length();
            return tokens.starts(text);
        }
    }

    private static void assertLinear(String text) {
        Counted tokens = new Counted();
        var chunker = new MultiGranularChunker(new RecursiveStrategy(300), List.of(), SentenceSegmenter.forLocale(Locale.ENGLISH))
            .withTokens(tokens, false);
        List<ChunkedParent> parents = chunker.chunk(text);
        for (ChunkedParent p : parents) {
            assertTrue(p.parent().text().length() + " tokens", tokens.tokens.embedded(p.parent().text()) <= 512);
        }
        double perChar = (double) tokens.chars / text.length();
        assertTrue(String.format(Locale.ROOT, "%.1f characters tokenized per character of the text", perChar), perChar <= 6);
    }

    @Test
    public void testLimit_onOneHugeToken_tokenizesEachCharacterABoundedNumberOfTimes() {
        assertLinear("*".repeat(100_000) + "x" + "*".repeat(100_000));
    }

    @Test
    public void testLimit_onHugeWordsBetweenSpaces_tokenizesEachCharacterABoundedNumberOfTimes() {
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < 400; i++) {
            text.append("w".repeat(300 + i)).append(i % 9 == 0 ? ". " : " ");
        }
        assertLinear(text.toString());
    }
}

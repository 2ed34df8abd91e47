package io.strata.chunking;

import com.ibm.icu.text.BreakIterator;
import com.ibm.icu.util.ULocale;
import org.junit.Test;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

/**
 * {@code max_words} in scripts written without spaces: θ counts ICU's words (dictionary-based for Chinese and Japanese),
 * and no chunk boundary falls inside a word. Oracle: ICU's word segmentation of the source text, run here on its own.
 */
public class ScriptWordsTests {
    private static final SentenceSegmenter SEGMENTER = SentenceSegmenter.english();

    @Test
    public void testMaxWords_onChinese_parentsFollowThetaInIcuWords_andNoCutSplitsAWord() throws IOException {
        check(text("zh.txt"));
    }

    @Test
    public void testMaxWords_onJapanese_parentsFollowThetaInIcuWords_andNoCutSplitsAWord() throws IOException {
        check(text("ja.txt"));
    }

    @Test
    public void testWords_inScriptsWithoutSpaces_countIcuWords_notWhitespaceRuns() {
        assertEquals(2, new TextIndex("自己的", SEGMENTER).words(0, 3)); // 自己 | 的
        String thai = "ภาษาไทยง่ายนิดเดียว"; // no spaces; ICU's dictionary finds its words
        assertEquals(oracle(thai).size(), new TextIndex(thai, SEGMENTER).totalWords());
        assertTrue(oracle(thai).size() > 1);
        // scripts written with spaces keep counting runs of non-whitespace (θ on English text is as it was)
        assertEquals(3, new TextIndex("Sorrow came—a gentle", SEGMENTER).totalWords());
        // a mixed run: Latin and Han words inside one run, each its own word
        assertEquals(oracle("Strata是一个插件").size(), new TextIndex("Strata是一个插件", SEGMENTER).totalWords());
    }

    /**
     * Punctuation goes with its word: a full stop or closing quote with the word before it, an opening quote with the word
     * after, so a span ending at a sentence's end holds no part of the next word (it counted one word too many).
     */
    @Test
    public void testWords_punctuationGoesWithItsWord_soASentenceEndIsAWordBoundary() {
        String text = "自己的。「他们」说";
        TextIndex index = new TextIndex(text, SEGMENTER);
        assertEquals(List.of("自己", "的", "他们", "说"), oracle(text).stream().map(w -> text.substring(w[0], w[1])).toList());
        assertEquals(2, index.words(0, 4)); // 自己 的。
        assertEquals(2, index.words(4, text.length())); // 「他们」 说
        assertEquals(4, index.totalWords());
        assertEquals(List.of(0, 2, 4, 8), java.util.Arrays.stream(index.wordStartsIn(new Span(0, text.length()))).boxed().toList());
    }

    private static void check(String text) {
        List<int[]> words = oracle(text);
        TextIndex index = new TextIndex(text, SEGMENTER);
        for (int theta : new int[] { 100, 300 }) {
            List<ChunkedParent> parents = new MultiGranularChunker(new RecursiveStrategy(theta), MultiGranularChunker.DEFAULT_GRANULARITIES,
                SEGMENTER).chunk(text);
            assertTrue("θ " + theta + ": " + parents.size() + " parents for " + words.size() + " words",
                parents.size() >= words.size() / theta);
            List<Integer> sizes = parents.stream().map(p -> count(words, p.parent().span())).toList();
            // the words θ counts (and _chunk reports) are ICU's
            assertEquals("θ " + theta, sizes, parents.stream().map(p -> index.words(p.parent().span())).toList());
            // none above θ; the typical parent within ±25 % of θ (one that ends a paragraph holds its remainder, as in English)
            assertTrue("θ " + theta + ": " + sizes, sizes.stream().allMatch(n -> n <= theta));
            List<Integer> sorted = sizes.stream().sorted().toList();
            int median = sorted.get(sorted.size() / 2);
            assertTrue("θ " + theta + ": " + sizes, median >= 0.75 * theta);
            for (ChunkedParent p : parents) {
                for (Chunk c : p.all()) {
                    for (int at : new int[] { c.start(), c.end() }) {
                        for (int[] w : words) {
                            assertTrue("θ " + theta + ": " + c + " cuts the word " + text.substring(w[0], w[1]), at <= w[0] || at >= w[1]);
                        }
                    }
                }
            }
        }
    }

    /** ICU's word segments (word status) of {@code text}: [start, end) each. */
    private static List<int[]> oracle(String text) {
        BreakIterator it = BreakIterator.getWordInstance(ULocale.ROOT);
        it.setText(text);
        List<int[]> out = new ArrayList<>();
        int prev = it.first();
        for (int cur = it.next(); cur != BreakIterator.DONE; prev = cur, cur = it.next()) {
            if (it.getRuleStatus() >= BreakIterator.WORD_NONE_LIMIT) {
                out.add(new int[] { prev, cur });
            }
        }
        return out;
    }

    private static int count(List<int[]> words, Span span) {
        return (int) words.stream().filter(w -> w[0] < span.end() && w[1] > span.start()).count();
    }

    private static String text(String name) throws IOException {
        try (InputStream in = ScriptWordsTests.class.getResourceAsStream("/data/cjk/" + name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}

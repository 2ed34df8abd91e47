package io.strata.it;

import com.ibm.icu.text.BreakIterator;
import com.ibm.icu.util.ULocale;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * {@code max_words} on Chinese and Japanese through {@code _chunk} on the real node: θ counts ICU's words (dictionary-based
 * for scripts written without spaces), so parents follow θ, and no chunk boundary falls inside a word. Oracle: ICU's word
 * segmentation of the source text, run here on its own.
 *
 * <p>Each text is chunked twice: for the ml-commons stand-in model ({@code model_id}: its tokenizer is not known here, so
 * the parents are the strategy's, uncut) and for the default embedded model, whose token limit cuts a parent above its
 * window (one CJK character is one e5 token: a 300-word Chinese parent is ≈ 550 tokens) — there the sizes are checked
 * where the limit cut nothing, and no cut may split a word either way.
 */
@SuppressWarnings("unchecked")
public class ScriptWordsIT extends StrataRestTestCase {
    private static final String PATH = "/_plugins/_strata/_chunk";

    public void testMaxWords_onChinese_parentsWithinAQuarterOfTheta_andNoWordSplit() throws Exception {
        check("zh.txt");
    }

    public void testMaxWords_onJapanese_parentsWithinAQuarterOfTheta_andNoWordSplit() throws Exception {
        check("ja.txt");
    }

    private static void check(String name) throws Exception {
        String text = text(name);
        List<int[]> words = oracle(text);
        for (int theta : new int[] { 100, 300 }) {
            check(name, text, words, theta, Map.of("model_id", "standin-embed"));
            check(name, text, words, theta, Map.of());
        }
    }

    private static void check(String name, String text, List<int[]> words, int theta, Map<String, Object> model) throws Exception {
        Map<String, Object> body = new java.util.HashMap<>(Map.of("text", text, "strategy", Map.of("type", "recursive", "max_words", theta)));
        body.putAll(model);
        Map<String, Object> r = call("POST", PATH, json(body));
        List<Map<String, Object>> parents = (List<Map<String, Object>>) r.get("parents");
        Map<String, Object> tokens = (Map<String, Object>) r.get("tokens");
        int limitSplits = tokens == null ? 0 : (Integer) tokens.get("limit_splits");
        String where = name + " θ " + theta + " " + (model.isEmpty() ? "default model" : model) + " (" + words.size()
            + " ICU words, limit_splits " + limitSplits + ")";
        List<Integer> sizes = new ArrayList<>();
        int covered = 0;
        for (Map<String, Object> p : parents) {
            int size = count(words, (Integer) p.get("start"), (Integer) p.get("end"));
            sizes.add(size);
            covered += size;
            assertEquals(where + ": [words] of parent " + p.get("ordinal") + " is ICU's count", size, p.get("words"));
            assertNoWordSplit(where, text, words, p);
            for (Map<String, Object> c : (List<Map<String, Object>>) p.get("children")) {
                assertNoWordSplit(where, text, words, c);
                assertEquals(where + ": [words] of a child is ICU's count", count(words, (Integer) c.get("start"), (Integer) c.get("end")),
                    c.get("words"));
            }
        }
        assertEquals(where + ": the parents hold every word once", words.size(), covered);
        assertTrue(where + ": " + sizes, sizes.stream().allMatch(n -> n <= theta));
        if (limitSplits > 0) {
            return; // the model's window cut parents: their sizes are the window's, not θ's
        }
        // a parent cut inside a paragraph is within a quarter of θ; one that ends a paragraph holds its remainder (as in
        // English: a paragraph of 1.04 θ gives 0.85 θ and 0.19 θ); the typical parent follows θ
        for (int i = 0; i < sizes.size(); i++) {
            int end = (Integer) parents.get(i).get("end");
            String after = text.substring(end, i + 1 < parents.size() ? (Integer) parents.get(i + 1).get("start") : text.length());
            if (i + 1 < parents.size() && !after.contains("\n\n")) {
                assertTrue(where + ": parent " + i + " of " + sizes.get(i) + " words, cut inside a paragraph, below θ - 25 %: " + sizes,
                    sizes.get(i) >= 0.75 * theta);
            }
        }
        List<Integer> sorted = sizes.stream().sorted().toList();
        assertTrue(where + ": median below θ - 25 %: " + sizes, sorted.get(sorted.size() / 2) >= 0.75 * theta);
    }

    private static void assertNoWordSplit(String where, String text, List<int[]> words, Map<String, Object> chunk) {
        int start = (Integer) chunk.get("start");
        int end = (Integer) chunk.get("end");
        assertEquals(where, text.substring(start, end), chunk.get("text"));
        for (int at : new int[] { start, end }) {
            for (int[] w : words) {
                assertTrue(where + ": " + chunk.get("text") + " cuts the word " + text.substring(w[0], w[1]), at <= w[0] || at >= w[1]);
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

    private static int count(List<int[]> words, int start, int end) {
        return (int) words.stream().filter(w -> w[0] < end && w[1] > start).count();
    }

    private static String text(String name) throws IOException {
        try (InputStream in = ScriptWordsIT.class.getResourceAsStream("/data/cjk/" + name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}

package io.strata.context;

import org.junit.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.Function;

import static org.junit.Assert.assertEquals;

public class WordTokenCounterTests {
    /**
     * A word-by-word tokenizer for the oracle: splits at whitespace (and at the separators U+001C–U+001F it deletes first,
     * as BERT's normalizer does), then cuts each word into pieces of 3 characters; the start of every piece. Counts
     * {@link #calls} and the characters it was given.
     */
    private static final class ThreeCharPieces implements Function<String, int[]> {
        int calls;
        int characters;

        @Override
        public int[] apply(String text) {
            calls++;
            characters += text.length();
            List<Integer> starts = new ArrayList<>();
            int run = 0;
            for (int i = 0; i < text.length(); i++) {
                char c = text.charAt(i);
                if (c >= '\u001C' && c <= '\u001F') {
                    continue; // deleted: joins what is around it
                }
                if (Character.isWhitespace(c) || c == '\u00A0') {
                    run = 0;
                    continue;
                }
                if (run % 3 == 0) {
                    starts.add(i);
                }
                run++;
            }
            return starts.stream().mapToInt(Integer::intValue).toArray();
        }
    }

    private static final String[] WORDS = {"a", "of", "the", "Emma", "Woodhouse", "handsome,", "clever", "rich", "x\u001Fy",
        "w\u00A0v", "\u4e2d\u6587", "—", "don't", "1816."};
    private static final String[] SPACES = {" ", "  ", "\n", "\n\n", "\t", " \r\n", "\u2028", "\u3000"};

    private static String text(Random random, int words) {
        StringBuilder out = new StringBuilder();
        if (random.nextInt(4) == 0) {
            out.append(SPACES[random.nextInt(SPACES.length)]);
        }
        for (int w = 0; w < words; w++) {
            if (w > 0) {
                out.append(SPACES[random.nextInt(SPACES.length)]);
            }
            out.append(WORDS[random.nextInt(WORDS.length)]);
        }
        return out.toString();
    }

    @Test
    public void countsWhatTheTokenizerCountsForTheWholeText() {
        Random random = new Random(7);
        ThreeCharPieces oracle = new ThreeCharPieces();
        WordTokenCounter counter = new WordTokenCounter(new ThreeCharPieces(), 1000);
        for (int i = 0; i < 500; i++) {
            String text = text(random, random.nextInt(40));
            assertEquals(text, oracle.apply(text).length, counter.count(text));
        }
    }

    @Test
    public void startsCountEverySpanCutAtWhitespaceExactly() {
        Random random = new Random(11);
        ThreeCharPieces oracle = new ThreeCharPieces();
        WordTokenCounter counter = new WordTokenCounter(new ThreeCharPieces(), 1000);
        for (int i = 0; i < 300; i++) {
            String text = text(random, 1 + random.nextInt(40));
            int[] starts = counter.starts(text);
            for (int k = 1; k < starts.length; k++) {
                assertEquals("ascending", true, starts[k] >= starts[k - 1]);
            }
            int[] words = WordTokenCounter.wordSpans(text);
            int w = words.length / 2;
            int from = words[2 * random.nextInt(w)];
            int to = words[2 * (random.nextInt(w)) + 1];
            if (to <= from) {
                continue;
            }
            int inSpan = 0;
            for (int s : starts) {
                if (s >= from && s < to) {
                    inSpan++;
                }
            }
            assertEquals(text.substring(from, to), oracle.apply(text.substring(from, to)).length, inSpan);
        }
    }

    @Test
    public void eachDistinctWordIsTokenizedOnce_theUnknownOnesOfATextInOneCall() {
        ThreeCharPieces tokenizer = new ThreeCharPieces();
        WordTokenCounter counter = new WordTokenCounter(tokenizer, 1000);
        assertEquals(2 + 4 + 3 + 2, counter.count("Emma Woodhouse, handsome Emma"));
        assertEquals(1, tokenizer.calls);
        assertEquals("Emma Woodhouse, handsome".length(), tokenizer.characters); // the repeated word not sent twice
        assertEquals(3 + 4 + 2 + 2, counter.count("handsome Woodhouse, Emma Emma"));
        assertEquals(List.of(0, 0, 5, 5, 5, 5), boxed(counter.starts("Emma Woodhouse,")));
        assertEquals(1, tokenizer.calls); // every word known
        assertEquals(2 + 1 + 2, counter.count("Emma was clever"));
        assertEquals(2, tokenizer.calls);
        assertEquals("was clever".length(), tokenizer.characters - "Emma Woodhouse, handsome".length());
    }

    @Test
    public void startsPutEveryTokenOfAWordAtItsFirstCharacter() {
        WordTokenCounter counter = new WordTokenCounter(new ThreeCharPieces(), 1000);
        // a no-break space is not whitespace to Java: "Emma W" is one word here (3 tokens, all at its start); U+001F joins
        assertEquals(List.of(1, 1, 1, 9, 13, 13, 13), boxed(counter.starts(" Emma\u00A0W  x\u001Fy\nhandsome")));
    }

    @Test
    public void aFullMemoStartsOver_andCountsStayExact() {
        Random random = new Random(3);
        ThreeCharPieces oracle = new ThreeCharPieces();
        ThreeCharPieces tokenizer = new ThreeCharPieces();
        WordTokenCounter counter = new WordTokenCounter(tokenizer, 4);
        for (int i = 0; i < 200; i++) {
            String text = text(random, random.nextInt(12));
            assertEquals(text, oracle.apply(text).length, counter.count(text));
        }
        counter.count("Emma");
        int calls = tokenizer.calls;
        assertEquals(2, counter.count("Emma"));
        assertEquals("a known word is not tokenized again", calls, tokenizer.calls);
    }

    @Test
    public void aWordLongerThanTheMemoKeepsIsCountedEveryTime_andExactly() {
        ThreeCharPieces tokenizer = new ThreeCharPieces();
        WordTokenCounter counter = new WordTokenCounter(tokenizer, 1000);
        String blob = "x".repeat(WordTokenCounter.LONGEST_KEPT + 1);
        assertEquals(22 + 2, counter.count("Emma " + blob));
        assertEquals(22 + 2, counter.count("Emma " + blob));
        assertEquals(2, tokenizer.calls);
        assertEquals("Emma ".length() + 2 * blob.length(), tokenizer.characters);
    }

    private static List<Integer> boxed(int[] a) {
        List<Integer> out = new ArrayList<>();
        for (int x : a) {
            out.add(x);
        }
        return out;
    }
}

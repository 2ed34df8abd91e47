package io.strata.inference;

import ai.djl.Device;
import io.strata.chunking.Embedder;
import io.strata.chunking.Embedder.SpannedText;
import io.strata.chunking.Span;
import io.strata.model.TokenEncoder;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/**
 * Late chunking on the bundled default model (e5-small-v2 int8, mean pooling, "passage: " prefix, 512 tokens). The oracle
 * for a span's vector is brute force over the model's own hidden states ({@link DjlEmbedder#hiddenStates}, a separate
 * code path over the same single-row pass): the mean of the states of the tokens starting inside the span, normalised.
 */
public class LateChunkingEmbedderTests {
    private static final String PREFIX = "passage: ";
    private static DjlEmbedder e5;

    @BeforeClass
    public static void load() throws Exception {
        e5 = DjlEmbedder.load(ModelDescriptor.read("e5-small-v2-q", DjlEmbedderTests.MODELS.resolve("e5-small-v2-q")), Device.cpu(), 1, 2, 1);
    }

    @AfterClass
    public static void close() {
        e5.close();
    }

    private static final String TEXT = "Emma Woodhouse, handsome, clever, and rich, seemed to unite some of the best blessings of existence. "
        + "She said it was impossible. Naïve café owners in Highbury had other ideas, and Mr. Knightley walked over from Donwell.";

    private static Span spanOf(String text, String part) {
        int i = text.indexOf(part);
        return new Span(i, i + part.length());
    }

    /** Brute force: the states of {@code tokens} (offsets in the prefixed text shifted by {@code shift}) starting in the span. */
    private static float[] expectedMean(TokenEncoder.Tokens tokens, int shift, Span span, String text, StringBuilder covered) {
        double[] sum = new double[384];
        int n = 0;
        for (int t = 0; t < tokens.size(); t++) {
            int start = tokens.starts()[t] - shift;
            if (start >= span.start() && start < span.end()) {
                for (int d = 0; d < 384; d++) {
                    sum[d] += tokens.hidden()[t][d];
                }
                n++;
                covered.append(text, start, Math.min(span.end(), tokens.ends()[t] - shift));
            }
        }
        assertTrue("no token starts in " + span, n > 0);
        float[] v = new float[384];
        for (int d = 0; d < 384; d++) {
            v[d] = (float) (sum[d] / n);
        }
        DjlEmbedder.normalize(v);
        return v;
    }

    private static void assertClose(float[] expected, float[] actual) {
        for (int d = 0; d < expected.length; d++) {
            assertEquals("dimension " + d, expected[d], actual[d], 1e-5);
        }
    }

    @Test
    public void testEmbedSpans_textVectorIsBitwiseThatOfEmbed() {
        List<float[]> late = e5.embedSpans(List.of(new SpannedText(TEXT, List.of(spanOf(TEXT, "She said it was impossible.")))),
            Embedder.Purpose.PASSAGE).get(0);
        assertArrayEquals(e5.embed(List.of(TEXT), Embedder.Purpose.PASSAGE).get(0), late.get(0), 0f);
    }

    @Test
    public void testEmbedSpans_spanVectorIsTheMeanOfTheTextPassStatesOfTokensStartingInIt() {
        List<Span> spans = List.of(spanOf(TEXT, "She said it was impossible."), spanOf(TEXT, "Naïve café owners in Highbury"),
            new Span(0, TEXT.length()));
        List<float[]> late = e5.embedSpans(List.of(new SpannedText(TEXT, spans)), Embedder.Purpose.PASSAGE).get(0);
        TokenEncoder.Tokens states = e5.hiddenStates(PREFIX + TEXT, 512); // the same pass, read token by token
        assertEquals(spans.size() + 1, late.size());
        for (int i = 0; i < spans.size(); i++) {
            StringBuilder covered = new StringBuilder();
            assertClose(expectedMean(states, PREFIX.length(), spans.get(i), TEXT, covered), late.get(i + 1));
            // the tokens counted are the span's own (character offsets, not bytes: "Naïve café" has non-ASCII letters)
            assertEquals(spans.get(i).of(TEXT).replaceAll("\\s", "").toLowerCase(java.util.Locale.ROOT),
                covered.toString().replaceAll("\\s", "").toLowerCase(java.util.Locale.ROOT));
            assertEquals(1.0, Math.sqrt(DjlEmbedderTests.cos(late.get(i + 1), late.get(i + 1))), 1e-5);
        }
    }

    @Test
    public void testEmbedSpans_spanVectorSeesItsContext_differsFromTheSpanEmbeddedAlone() {
        Span span = spanOf(TEXT, "She said it was impossible.");
        float[] late = e5.embedSpans(List.of(new SpannedText(TEXT, List.of(span))), Embedder.Purpose.PASSAGE).get(0).get(1);
        float[] alone = e5.embed(List.of(span.of(TEXT)), Embedder.Purpose.PASSAGE).get(0);
        float[] text = e5.embed(List.of(TEXT), Embedder.Purpose.PASSAGE).get(0);
        double lateToText = DjlEmbedderTests.cos(late, text);
        double aloneToText = DjlEmbedderTests.cos(alone, text);
        assertTrue(lateToText + " vs " + aloneToText, lateToText > aloneToText);
        assertTrue(DjlEmbedderTests.cos(late, alone) < 0.999);
    }

    @Test
    public void testEmbedSpans_vectorsAreBitwiseTheSameWhateverTheyAreEmbeddedWith() {
        SpannedText a = new SpannedText(TEXT, List.of(spanOf(TEXT, "She said it was impossible."), spanOf(TEXT, "Emma")));
        SpannedText other = new SpannedText("A short other text.", List.of(new Span(0, 7)));
        SpannedText longer = new SpannedText(TEXT + " " + TEXT, List.of(new Span(5, 40)));
        List<float[]> alone = e5.embedSpans(List.of(a), Embedder.Purpose.PASSAGE).get(0);
        List<float[]> mixed = e5.embedSpans(List.of(other, longer, a), Embedder.Purpose.PASSAGE).get(2);
        for (int i = 0; i < alone.size(); i++) {
            assertArrayEquals(alone.get(i), mixed.get(i), 0f);
        }
    }

    /** Common one-token words only, so a substring starting at any token tokenises exactly as that stretch of the whole. */
    private static String longText() {
        String[] subjects = { "The old man", "A young girl", "The tall teacher", "My brother", "Her mother", "The small dog" };
        String[] verbs = { "walked to", "looked at", "talked about", "went past", "came back from", "thought about" };
        String[] objects = { "the market", "the church", "the river", "the school", "the green field", "the big house" };
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < 55; i++) {
            b.append(subjects[i % 6]).append(' ').append(verbs[(i / 6) % 6]).append(' ').append(objects[(i / 2) % 6])
                .append(" in the morning. ");
        }
        return b.append("At last the night came and everyone went home to sleep.").toString();
    }

    @Test
    public void testEmbedSpans_textLongerThanTheContext_windowsGiveEachSpanStatesWithContext() {
        String text = longText();
        int total = e5.tokenCounts(List.of(text), Embedder.Purpose.PASSAGE)[0];
        int fixed = 4; // [CLS] passage : … [SEP]
        int body = total - fixed;
        int window = 512 - fixed;
        assertTrue("the text must exceed the context: " + total, total > 600);
        LateWindows windows = LateWindows.of(body, window);
        assertEquals(windows.toString(), 2, windows.count());
        assertEquals(body - window, windows.start(1)); // the last window ends with the text

        Span first = spanOf(text, "The old man walked to the market in the morning.");
        Span last = spanOf(text, "At last the night came and everyone went home to sleep.");
        long truncated0 = e5.truncatedCount();
        List<float[]> late = e5.embedSpans(List.of(new SpannedText(text, List.of(first, last))), Embedder.Purpose.PASSAGE).get(0);
        assertEquals("one text above the window: counted once as truncated", 1, e5.truncatedCount() - truncated0);

        // the text's vector: the truncated pass, exactly as embed runs it
        assertArrayEquals(e5.embed(List.of(text), Embedder.Purpose.PASSAGE).get(0), late.get(0), 0f);
        // the first sentence: its states from the first window, which is the truncated pass
        TokenEncoder.Tokens head = e5.hiddenStates(PREFIX + text, 512);
        assertClose(expectedMean(head, PREFIX.length(), first, text, new StringBuilder()), late.get(1));
        // the last sentence lies beyond the first window: its states come from a pass over the text's last tokens
        int tailChar = head.starts()[2 + windows.start(1)] - PREFIX.length(); // body token start(1), after "passage", ":"
        String tail = text.substring(tailChar);
        TokenEncoder.Tokens tailStates = e5.hiddenStates(PREFIX + tail, 512);
        assertEquals(2 + window, tailStates.size()); // the same tokens as the window: the pass is the same
        StringBuilder covered = new StringBuilder();
        Span lastInTail = new Span(last.start() - tailChar, last.end() - tailChar);
        assertClose(expectedMean(tailStates, PREFIX.length(), lastInTail, tail, covered), late.get(2));
        assertEquals(last.of(text).replace(" ", ""), covered.toString().replace(" ", ""));
    }

    @Test
    public void testSpanPoolingProblem_meanModelCan_clsModelCannotAndSaysWhy() throws Exception {
        assertNull(e5.spanPoolingProblem());
        try (DjlEmbedder bge = DjlEmbedder.load(ModelDescriptor.read("bge-small-en-v15-q", DjlEmbedderTests.MODELS.resolve("bge-small-en-v15-q")),
            Device.cpu(), 1, 1, 1)) {
            String problem = bge.spanPoolingProblem();
            assertNotNull(problem);
            assertTrue(problem, problem.contains("pooling: cls") && problem.contains("bge-small-en-v15-q"));
            var e = assertThrows(UnsupportedOperationException.class,
                () -> bge.embedSpans(List.of(new SpannedText("x y", List.of(new Span(0, 1)))), Embedder.Purpose.PASSAGE));
            assertEquals(problem, e.getMessage());
        }
    }

    @Test
    public void testLateWindows_fittingText_oneWindow() {
        LateWindows w = LateWindows.of(300, 508);
        assertEquals(1, w.count());
        assertEquals(300, w.end(0));
    }

    @Test
    public void testLateWindows_overlongText_fullWindowsFromStartToEnd_eachTokenFromItsMostCentralWindow() {
        // n 10, w 6: overlap at least 6/4 = 1, stride 5 → 2 windows [0, 6) and [4, 10)
        LateWindows w = LateWindows.of(10, 6);
        assertEquals(2, w.count());
        assertEquals(List.of(0, 6, 4, 10), List.of(w.start(0), w.end(0), w.start(1), w.end(1)));
        // token 4: 1 token to its right in window 0 (full left context there), none to its left in window 1 → window 0
        // token 5: none to its right in window 0, 1 to its left in window 1 (full right context) → window 1
        List<Integer> owners = new ArrayList<>();
        for (int b = 0; b < 10; b++) {
            owners.add(w.owner(b));
        }
        assertEquals(List.of(0, 0, 0, 0, 0, 1, 1, 1, 1, 1), owners);
        // θ 500 on e5 (≈ 650 body tokens, 508 a window): two windows, the second right-aligned
        LateWindows theta500 = LateWindows.of(650, 508);
        assertEquals(List.of(0, 142), List.of(theta500.start(0), theta500.start(1)));
        // a long text: windows spread evenly, every overlap at least w / 4, the last one ending at n
        LateWindows many = LateWindows.of(2000, 508);
        for (int j = 1; j < many.count(); j++) {
            assertTrue(many.toString(), many.end(j - 1) - many.start(j) >= 508 / 4);
        }
        assertEquals(2000, many.end(many.count() - 1));
    }
}

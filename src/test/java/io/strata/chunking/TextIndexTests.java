package io.strata.chunking;

import org.junit.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertTrue;

public class TextIndexTests {
    private static final SentenceSegmenter SEGMENTER = SentenceSegmenter.english();

    /** Oracle: the boundaries of segmenting the whole text at once, strictly inside the span. */
    private static int[] wholeTextBoundariesInside(String text, Span span) {
        return Arrays.stream(SEGMENTER.boundaries(text)).filter(b -> b > span.start() && b < span.end()).toArray();
    }

    private static void assertLineByLineEqualsWholeText(String text, Random random, int spans) {
        TextIndex lazy = new TextIndex(text, SEGMENTER);
        List<Span> asked = new ArrayList<>(List.of(new Span(0, text.length())));
        for (int i = 0; i < spans; i++) {
            int a = random.nextInt(text.length() + 1);
            int b = random.nextInt(text.length() + 1);
            asked.add(new Span(Math.min(a, b), Math.max(a, b)));
        }
        for (Span span : asked.subList(1, asked.size())) { // before and after the whole text's line is cached
            assertArrayEquals(span.toString(), wholeTextBoundariesInside(text, span), lazy.sentenceBoundariesInside(span));
        }
        assertArrayEquals(wholeTextBoundariesInside(text, asked.get(0)), lazy.sentenceBoundariesInside(asked.get(0)));
        TextIndex eager = new TextIndex(text, SEGMENTER);
        eager.sentenceBoundaries();
        for (Span span : asked) {
            assertArrayEquals(span.toString(), wholeTextBoundariesInside(text, span), eager.sentenceBoundariesInside(span));
        }
    }

    @Test
    public void testSentenceBoundariesInside_segmentingLineByLine_equalsSegmentingTheWholeText_onEmma() {
        assertLineByLineEqualsWholeText(TestTexts.emma(), new Random(1), 300);
    }

    @Test
    public void testSentenceBoundariesInside_equalsTheWholeText_onTheStructureCorpusRead() throws IOException {
        Random random = new Random(2);
        int files = 0;
        try (Stream<Path> s = Files.walk(Path.of("src/test/resources/structure-corpus"))) {
            for (Path f : s.filter(Files::isRegularFile).filter(p -> p.toString().endsWith(".md") || p.toString().endsWith(".html"))
                .sorted().limit(60).toList()) {
                assertLineByLineEqualsWholeText(Files.readString(f), random, 20);
                files++;
            }
        }
        assertTrue(files >= 60);
    }

    @Test
    public void testSentenceBoundariesInside_equalsTheWholeText_acrossEverySeparatorAndTheRulesThatLookAround() {
        // abbreviations at line starts and ends, "?" before a lowercase word on the next line, CR LF, NEL, LS, PS,
        // blank lines, spaces around separators, a text ending in a separator
        String[] parts = { "Mr. Knightley came.", "Mrs.", "Weston said so!", "said Emma.", "“Is he?” said she.", "e.g. this",
            "Dr.", "3.14 is pi.", "", "   ", "Done?", "why not. Yes." };
        String[] separators = { "\n", "\r\n", "\r", "\n\n", "\u0085", "\u2028", "\u2029", " \n ", "\n\r", " " };
        Random random = new Random(3);
        for (int t = 0; t < 300; t++) {
            StringBuilder text = new StringBuilder();
            for (int i = random.nextInt(12); i >= 0; i--) {
                text.append(parts[random.nextInt(parts.length)]).append(separators[random.nextInt(separators.length)]);
            }
            if (random.nextBoolean()) {
                text.setLength(text.length() - 1);
            }
            if (text.length() > 0) {
                assertLineByLineEqualsWholeText(text.toString(), random, 15);
            }
        }
    }
}

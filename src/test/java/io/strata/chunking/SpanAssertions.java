package io.strata.chunking;

import java.util.List;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

/** The parent contract every strategy keeps: ordered, non-overlapping, trimmed, covering all non-whitespace, ≤ θ. */
final class SpanAssertions {
    private SpanAssertions() {}

    static void assertCoversWithinTheta(TextIndex index, List<Span> parents, int theta) {
        String text = index.text();
        boolean[] covered = new boolean[text.length()];
        int previousEnd = 0;
        for (Span p : parents) {
            assertTrue("overlap or disorder at " + p, p.start() >= previousEnd);
            assertTrue("empty " + p, p.length() > 0);
            assertEquals("untrimmed " + p, p, index.trim(p.start(), p.end()));
            assertTrue("above θ: " + index.words(p) + " words in " + p, index.words(p) <= theta);
            for (int i = p.start(); i < p.end(); i++) {
                covered[i] = true;
            }
            previousEnd = p.end();
        }
        for (int i = 0; i < text.length(); i++) {
            if (covered[i] == false) {
                assertTrue("uncovered non-whitespace at " + i, Character.isWhitespace(text.charAt(i)) || text.charAt(i) == '\u00A0');
            }
        }
    }
}

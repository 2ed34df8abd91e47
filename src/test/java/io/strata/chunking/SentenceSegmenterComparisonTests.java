package io.strata.chunking;

import opennlp.tools.sentdetect.SentenceDetectorME;
import opennlp.tools.sentdetect.SentenceModel;
import opennlp.tools.util.Span;
import org.junit.Test;

import java.io.InputStream;
import java.text.BreakIterator;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

/**
 * Re-runs the comparison behind {@link SentenceSegmenter}'s choice: the same sample with abbreviations,
 * quotes, decimals and ellipses through JDK BreakIterator, ICU4J ({@code ss=standard}) and OpenNLP.
 */
public class SentenceSegmenterComparisonTests {
    /** The sample and its true sentences. */
    static final List<String> SENTENCES = List.of(
        "Mr. Knightley, a sensible man about seven or eight-and-thirty, was a very old and intimate friend of the family.",
        "“Poor Miss Taylor!—I wish she were here again.”",
        "Mrs. Weston’s friends were all made happy by her marriage, and Dr. Perry was called in.",
        "The price rose to 3.5 shillings, e.g. for the best paper.",
        "She hesitated… and then she went on.",
        "“Is he?” said Emma.",
        "Mr. Woodhouse was fond of society in his own way.");

    static final String SAMPLE = String.join(" ", SENTENCES);

    private static List<String> jdk(String text) {
        BreakIterator it = BreakIterator.getSentenceInstance(Locale.ENGLISH);
        it.setText(text);
        List<String> out = new ArrayList<>();
        for (int s = it.first(), e = it.next(); e != BreakIterator.DONE; s = e, e = it.next()) {
            out.add(text.substring(s, e).strip());
        }
        return out;
    }

    private static List<String> icu(String text) {
        int[] b = SentenceSegmenter.english().boundaries(text);
        List<String> out = new ArrayList<>();
        for (int i = 0; i + 1 < b.length; i++) {
            out.add(text.substring(b[i], b[i + 1]).strip());
        }
        return out;
    }

    private static List<String> openNlp(String text) throws Exception {
        try (InputStream in = SentenceSegmenterComparisonTests.class.getResourceAsStream("/opennlp-en-ud-ewt-sentence-1.3-2.5.4.bin")) {
            SentenceDetectorME detector = new SentenceDetectorME(new SentenceModel(in));
            List<String> out = new ArrayList<>();
            for (Span s : detector.sentPosDetect(text)) {
                out.add(s.getCoveredText(text).toString().strip());
            }
            return out;
        }
    }

    @Test
    public void testIcu_keepsAbbreviationsQuotesAndDecimalsInsideTheirSentence() {
        assertEquals(SENTENCES, icu(SAMPLE));
    }

    @Test
    public void testJdk_breaksAfterTitlesLikeMr_whichIsWhyItWasNotChosen() {
        List<String> jdk = jdk(SAMPLE);
        assertTrue("JDK splits after 'Mr.': " + jdk, jdk.size() > SENTENCES.size());
        assertTrue(jdk.contains("Mr."));
    }

    @Test
    public void testComparison_printsEachSegmenterOnTheSample() throws Exception {
        List<String> nlp = openNlp(SAMPLE);
        System.out.printf(Locale.ROOT, "truth %d sentences; ICU %d; JDK %d; OpenNLP %s%n", SENTENCES.size(), icu(SAMPLE).size(),
            jdk(SAMPLE).size(), nlp.size());
        int exact = (int) nlp.stream().filter(SENTENCES::contains).count();
        System.out.printf(Locale.ROOT, "OpenNLP exact sentences: %d of %d: %s%n", exact, SENTENCES.size(), nlp);
        assertTrue(exact > 0);
    }
}

package io.strata.query;

import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.analysis.tokenattributes.OffsetAttribute;
import org.apache.lucene.search.uhighlight.Passage;
import org.apache.lucene.search.uhighlight.PassageScorer;
import org.apache.lucene.util.BytesRef;
import org.junit.Test;

import java.io.IOException;
import java.text.BreakIterator;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

/** The best sentences of a parent for the query's words, checked against a brute force over the sentences. */
public class EvidenceSentencesTests {
    private static final String TEXT = "Emma Woodhouse, handsome, clever, and rich, had lived nearly twenty-one years in the world. "
        + "She was the youngest of the two daughters of a most affectionate, indulgent father. Her mother had died too long ago "
        + "for her to have more than an indistinct remembrance of her caresses; and her place had been supplied by an excellent "
        + "woman as governess, Miss Taylor, who had fallen little short of a mother in affection.  Sixteen years had Miss Taylor "
        + "been in Mr. Woodhouse's family, less as a governess than a friend, very fond of both daughters, but particularly of Emma. "
        + "Between them it was more the intimacy of sisters.";

    private final Analyzer analyzer = new StandardAnalyzer();

    /**
     * Every sentence (JDK sentence breaks, whitespace trimmed) scored as Lucene's unified highlighter documents its passage
     * score: for each query term in the sentence, {@code weight(contentLength, freq in the text) · tf(freq in the sentence,
     * sentence length)}, summed, times {@code norm(sentence start)} — the sentences without a query term left out.
     */
    private List<int[]> bruteForce(String text, Set<String> queryTerms) throws IOException {
        Map<String, Integer> inText = new HashMap<>();
        List<Object[]> tokens = new ArrayList<>(); // {term, start, end}
        try (TokenStream ts = analyzer.tokenStream("text", text)) {
            CharTermAttribute term = ts.addAttribute(CharTermAttribute.class);
            OffsetAttribute offset = ts.addAttribute(OffsetAttribute.class);
            ts.reset();
            while (ts.incrementToken()) {
                if (queryTerms.contains(term.toString())) {
                    inText.merge(term.toString(), 1, Integer::sum);
                    tokens.add(new Object[] {term.toString(), offset.startOffset(), offset.endOffset()});
                }
            }
            ts.end();
        }
        BreakIterator sentences = BreakIterator.getSentenceInstance(Locale.ROOT);
        sentences.setText(text);
        List<float[]> scored = new ArrayList<>();
        PassageScorer scorer = new PassageScorer();
        for (int start = sentences.first(), end = sentences.next(); end != BreakIterator.DONE; start = end, end = sentences.next()) {
            Passage p = new Passage();
            p.setStartOffset(start);
            p.setEndOffset(end);
            for (Object[] t : tokens) {
                if ((Integer) t[1] >= start && (Integer) t[2] <= end) {
                    p.addMatch((Integer) t[1], (Integer) t[2], new BytesRef((String) t[0]), inText.get(t[0]));
                }
            }
            if (p.getNumMatches() > 0) {
                scored.add(new float[] {start, end, scorer.score(p, text.length())});
            }
        }
        scored.sort((a, b) -> Float.compare(b[2], a[2]));
        List<int[]> out = new ArrayList<>();
        for (float[] s : scored) {
            int a = (int) s[0];
            int b = (int) s[1];
            while (Character.isWhitespace(text.charAt(a))) {
                a++;
            }
            while (Character.isWhitespace(text.charAt(b - 1))) {
                b--;
            }
            out.add(new int[] {a, b});
        }
        return out;
    }

    @Test
    public void testBest_areTheSentencesABruteForceScoresHighest_atSourceOffsets() throws IOException {
        int offset = 1000; // the parent starts at 1000 in its source document
        for (String query : List.of("Who was the governess of Emma?", "How long had Miss Taylor been in the family?", "twenty-one years")) {
            Set<String> terms = new HashSet<>();
            try (TokenStream ts = analyzer.tokenStream("text", query)) {
                CharTermAttribute term = ts.addAttribute(CharTermAttribute.class);
                ts.reset();
                while (ts.incrementToken()) {
                    terms.add(term.toString());
                }
                ts.end();
            }
            List<int[]> expected = bruteForce(TEXT, terms);
            List<Map<String, Object>> best = EvidenceSentences.of(analyzer, analyzer, "text", query).best(TEXT, offset, 3);
            assertEquals(query, Math.min(3, expected.size()), best.size());
            for (int i = 0; i < best.size(); i++) {
                Map<String, Object> s = best.get(i);
                assertEquals(query + " #" + i, expected.get(i)[0] + offset, s.get("start"));
                assertEquals(query + " #" + i, expected.get(i)[1] + offset, s.get("end"));
                assertEquals(TEXT.substring(expected.get(i)[0], expected.get(i)[1]), s.get("text"));
                if (i > 0) {
                    assertTrue("best first", (Float) best.get(i - 1).get("score") >= (Float) s.get("score"));
                }
            }
        }
    }

    @Test
    public void testBest_withNoQueryWordInTheText_isEmpty_andAQueryWithoutTermsHasNoScorer() throws IOException {
        assertEquals(List.of(), EvidenceSentences.of(analyzer, analyzer, "text", "zeppelin octopus").best(TEXT, 0, 3));
        assertNull(EvidenceSentences.of(analyzer, analyzer, "text", " ?! "));
        assertEquals(List.of(), EvidenceSentences.of(analyzer, analyzer, "text", "Emma").best("", 0, 3));
    }
}

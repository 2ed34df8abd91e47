package io.strata.chunking;

import io.strata.chunking.SemanticStrategy.ThresholdType;
import org.junit.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

public class SemanticStrategyTests {
    private static final SentenceSegmenter SEGMENTER = SentenceSegmenter.english();

    /**
     * Distances between consecutive sentences (buffer 0) chosen so the four default thresholds disagree (numpy gives):
     * percentile 95 → 0.41, breaks [2]; standard_deviation 3 → 0.5695, none; interquartile 1.5 → 0.12725, [2, 6];
     * gradient 95 → 0.1905 on the gradient [.01, .24, -.005, -.23, ...], [1].
     */
    private static final double[] DISTANCES = { 0.02, 0.03, 0.5, 0.02, 0.04, 0.03, 0.3, 0.02, 0.03, 0.02 };

    /** Sentence k carries marker [k]; the scripted embedder puts it at an angle so that 1 - cos(k, k+1) = DISTANCES[k]. */
    private static ScriptedEmbedder scriptedDistances() {
        double[] angles = new double[DISTANCES.length + 1];
        for (int k = 0; k < DISTANCES.length; k++) {
            angles[k + 1] = angles[k] + Math.acos(1 - DISTANCES[k]);
        }
        return ScriptedEmbedder.angles(angles);
    }

    private static String numberedSentences(int n) {
        StringBuilder sb = new StringBuilder();
        for (int k = 0; k < n; k++) {
            sb.append(k == 0 ? "" : " ").append("Item [").append(k).append("] stands here.");
        }
        return sb.toString();
    }

    private static TextIndex index(String text) {
        return new TextIndex(text, SEGMENTER);
    }

    /** Breaks (index of the last sentence of each parent but the last) found for a threshold type and amount. */
    private static List<Integer> breaks(ThresholdType type, double amount) {
        String text = numberedSentences(DISTANCES.length + 1);
        TextIndex index = index(text);
        List<Span> parents = new SemanticStrategy(scriptedDistances(), 0, type, amount, 300).split(index);
        SpanAssertions.assertCoversWithinTheta(index, parents, 300);
        List<Span> sentences = RecursiveSplitter.sentences(index, new Span(0, text.length()));
        List<Integer> out = new ArrayList<>();
        for (Span p : parents.subList(0, parents.size() - 1)) {
            out.add(IntStream.range(0, sentences.size()).filter(i -> sentences.get(i).end() == p.end()).findFirst().orElseThrow());
        }
        return out;
    }

    @Test
    public void testSplit_eachDefaultThresholdType_breaksWhereLangChainWould() {
        assertEquals(List.of(2), breaks(ThresholdType.PERCENTILE, 95));
        assertEquals(List.of(), breaks(ThresholdType.STANDARD_DEVIATION, 3));
        assertEquals(List.of(2, 6), breaks(ThresholdType.INTERQUARTILE, 1.5));
        // the gradient peaks one sentence before the distance does, and LangChain cuts there
        assertEquals(List.of(1), breaks(ThresholdType.GRADIENT, 95));
    }

    @Test
    public void testSplit_amountOverridesTheDefault() {
        assertEquals(List.of(2, 6), breaks(ThresholdType.PERCENTILE, 80));
        assertEquals(List.of(2, 6), breaks(ThresholdType.STANDARD_DEVIATION, 1));
        assertEquals(List.of(2), breaks(ThresholdType.STANDARD_DEVIATION, 2));
        assertEquals(List.of(), breaks(ThresholdType.PERCENTILE, 100)); // "exceeds": the maximum itself never breaks
        assertEquals(List.of(1, 2, 4, 5, 6, 8), breaks(ThresholdType.PERCENTILE, 40)); // > 0.026, the 40th percentile
    }

    @Test
    public void testSplit_similarityThreshold_isAbsolute_breakingWhereTheCosineToThePreviousSentenceFallsBelowIt() {
        // papers 002/003: a sentence starts a new chunk when its similarity to the preceding one is below the amount
        assertEquals(List.of(2, 6), breaks(ThresholdType.SIMILARITY, 0.8)); // cos 0.5 and 0.7 < 0.8
        assertEquals(List.of(2), breaks(ThresholdType.SIMILARITY, 0.6)); // only cos 0.5
        assertEquals(List.of(2, 4, 6), breaks(ThresholdType.SIMILARITY, 0.965)); // cos 0.96 too, not 0.97 / 0.98
        assertEquals(List.of(), breaks(ThresholdType.SIMILARITY, 0.49)); // every cosine is above it
        assertEquals(List.of(), breaks(ThresholdType.SIMILARITY, 0));
    }

    @Test
    public void testSegment_reportsDistancesAtSentenceEndsAndTheThreshold() {
        String text = numberedSentences(DISTANCES.length + 1);
        TextIndex index = index(text);
        Segmentation s = new SemanticStrategy(scriptedDistances(), 0, ThresholdType.PERCENTILE, 95, 300).segment(index);
        assertEquals(1, s.evidence().size());
        Segmentation.Evidence e = s.evidence().get(0);
        assertEquals("distance", e.signal());
        assertArrayEquals(DISTANCES, e.values(), 1e-5);
        assertEquals(0.41, e.threshold(), 1e-5);
        List<Span> sentences = RecursiveSplitter.sentences(index, new Span(0, text.length()));
        int[] ends = sentences.subList(0, sentences.size() - 1).stream().mapToInt(Span::end).toArray();
        assertArrayEquals(ends, e.positions());
        assertEquals(text.indexOf("Item [3]") - 1, e.positions()[2]); // the end of "Item [2] stands here."
        assertEquals(s.parents(), new SemanticStrategy(scriptedDistances(), 0, ThresholdType.PERCENTILE, 95, 300).split(index));
    }

    @Test
    public void testSegment_gradient_reportsDistancesAndTheGradientItWasCompared() {
        Segmentation s = new SemanticStrategy(scriptedDistances(), 0, ThresholdType.GRADIENT, 95, 300)
            .segment(index(numberedSentences(DISTANCES.length + 1)));
        assertEquals(List.of("distance", "distance_gradient"), s.evidence().stream().map(Segmentation.Evidence::signal).toList());
        assertTrue(Double.isNaN(s.evidence().get(0).threshold()));
        Segmentation.Evidence g = s.evidence().get(1);
        assertEquals(0.24, g.values()[1], 1e-5);
        assertEquals(-0.23, g.values()[3], 1e-5);
        assertEquals(0.1905, g.threshold(), 1e-5);
    }

    private static final Map<String, float[]> TOPICS = Map.of("a", new float[] { 1, 0 }, "b", new float[] { 0, 1 });

    /** Four sentences on topic a, then four on topic b. */
    private static final String TWO_TOPICS = "First [a] one. Second [a] two. Third [a] three. Fourth [a] four. "
        + "Fifth [b] five. Sixth [b] six. Seventh [b] seven. Eighth [b] eight.";

    @Test
    public void testSegment_bufferSize_embedsEachSentenceWithItsNeighbours() {
        ScriptedEmbedder embedder = new ScriptedEmbedder(TOPICS);
        new SemanticStrategy(embedder, 1, ThresholdType.PERCENTILE, 95, 300).segment(index(TWO_TOPICS));
        List<String> texts = embedder.embeddedTexts();
        assertEquals(8, texts.size());
        assertEquals("First [a] one. Second [a] two.", texts.get(0));
        assertEquals("First [a] one. Second [a] two. Third [a] three.", texts.get(1));
        assertEquals("Seventh [b] seven. Eighth [b] eight.", texts.get(7));
        assertEquals(List.of(Embedder.Purpose.PASSAGE), embedder.purposes);

        ScriptedEmbedder two = new ScriptedEmbedder(TOPICS);
        new SemanticStrategy(two, 2, ThresholdType.PERCENTILE, 95, 300).segment(index(TWO_TOPICS));
        assertEquals("First [a] one. Second [a] two. Third [a] three. Fourth [a] four. Fifth [b] five.", two.embeddedTexts().get(2));
    }

    @Test
    public void testSegment_bufferSize_smoothsTheDistanceAcrossATopicChange() {
        // buffer 0: a|b is a right angle. buffer 1: (2a + b) vs (a + 2b), cos = 4/5
        double[] zero = new SemanticStrategy(new ScriptedEmbedder(TOPICS), 0, ThresholdType.PERCENTILE, 95, 300)
            .segment(index(TWO_TOPICS)).evidence().get(0).values();
        double[] one = new SemanticStrategy(new ScriptedEmbedder(TOPICS), 1, ThresholdType.PERCENTILE, 95, 300)
            .segment(index(TWO_TOPICS)).evidence().get(0).values();
        assertArrayEquals(new double[] { 0, 0, 0, 1, 0, 0, 0 }, zero, 1e-6);
        assertArrayEquals(new double[] { 0, 0, 1 - 2 / Math.sqrt(5), 0.2, 1 - 2 / Math.sqrt(5), 0, 0 }, one, 1e-6);
        for (int buffer : new int[] { 0, 1 }) {
            List<Span> parents = new SemanticStrategy(new ScriptedEmbedder(TOPICS), buffer, ThresholdType.PERCENTILE, 95, 300)
                .split(index(TWO_TOPICS));
            assertEquals(List.of("First [a] one. Second [a] two. Third [a] three. Fourth [a] four.",
                "Fifth [b] five. Sixth [b] six. Seventh [b] seven. Eighth [b] eight."),
                parents.stream().map(p -> p.of(TWO_TOPICS)).toList());
        }
    }

    @Test
    public void testSplit_spansHaveExactOffsetsAcrossParagraphsAndOuterWhitespace() {
        String text = "\n  First [a] one.\nSecond [a] two.\n\n\tThird [b] three.  Fourth [b] four. \n\n";
        TextIndex index = index(text);
        List<Span> parents = new SemanticStrategy(new ScriptedEmbedder(TOPICS), 0, ThresholdType.PERCENTILE, 95, 300).split(index);
        int start2 = text.indexOf("Third");
        assertEquals(List.of(new Span(3, text.indexOf("two.") + 4), new Span(start2, text.indexOf("four.") + 5)), parents);
        SpanAssertions.assertCoversWithinTheta(index, parents, 300);
    }

    @Test
    public void testSplit_parentAboveTheta_isSplitFurtherAndNeverCrossesTheTopicBreak() {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 30; i++) {
            sb.append("Sentence [a] number ").append(i).append(" says little. ");
        }
        for (int i = 0; i < 30; i++) {
            sb.append("Sentence [b] number ").append(i).append(" says more. ");
        }
        String text = sb.toString().strip();
        TextIndex index = index(text);
        int theta = 17; // sentences are 6 words: a parent holds at most two
        List<Span> parents = new SemanticStrategy(new ScriptedEmbedder(TOPICS), 0, ThresholdType.PERCENTILE, 95, theta).split(index);
        SpanAssertions.assertCoversWithinTheta(index, parents, theta);
        assertEquals(30, parents.size());
        for (Span p : parents) {
            String chunk = p.of(text);
            assertTrue(chunk, chunk.contains("[a]") != chunk.contains("[b]"));
        }
    }

    @Test
    public void testSegment_longDocument_embedsInBoundedBatchesWithEachSentenceOnce() {
        int n = 2 * SemanticStrategy.BATCH + 22;
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < n; i++) {
            sb.append(i < 300 ? "Alpha [a] " : "Beta [b] ").append(i).append(". ");
        }
        String text = sb.toString().strip();
        ScriptedEmbedder embedder = new ScriptedEmbedder(TOPICS);
        Segmentation s = new SemanticStrategy(embedder, 0, ThresholdType.PERCENTILE, 95, 2000).segment(index(text));
        assertEquals(List.of(SemanticStrategy.BATCH, SemanticStrategy.BATCH, 22), embedder.calls.stream().map(List::size).toList());
        assertEquals(n - 1, s.evidence().get(0).values().length);
        assertEquals(2, s.parents().size());
        assertTrue(s.parents().get(1).of(text).startsWith("Beta [b] 300."));
        // the distance across a batch edge is computed, not lost
        assertEquals(0, s.evidence().get(0).values()[SemanticStrategy.BATCH - 1], 1e-6);
        assertEquals(1, s.evidence().get(0).values()[299], 1e-6);
    }

    @Test
    public void testSegment_oneSentenceOrNone_isOneParentOrNoneWithoutEmbedding() {
        ScriptedEmbedder embedder = new ScriptedEmbedder(TOPICS);
        SemanticStrategy strategy = new SemanticStrategy(embedder, 1, ThresholdType.PERCENTILE, 95, 300);
        assertEquals(List.of(new Span(1, 14)), strategy.split(index(" Only [a] one. ")));
        assertEquals(List.of(), strategy.split(index(" \n ")));
        assertEquals(List.of(), embedder.calls);
        // the gradient needs two distances, so two sentences stay together (as in LangChain)
        List<Span> two = new SemanticStrategy(embedder, 0, ThresholdType.GRADIENT, 95, 300).split(index("One [a]. Two [b]."));
        assertEquals(List.of(new Span(0, 17)), two);
    }

    @Test
    public void testStrategy_usesModels() {
        SemanticStrategy s = new SemanticStrategy(new ScriptedEmbedder(TOPICS), 1, ThresholdType.PERCENTILE, 95, 300);
        assertTrue(s.usesModels());
        assertEquals("semantic", s.type());
        assertEquals(300, s.maxWords());
        assertEquals(List.of("percentile", "standard_deviation", "interquartile", "gradient", "similarity"), ThresholdType.names());
        assertEquals(Arrays.asList(95.0, 3.0, 1.5, 95.0, 0.8),
            Arrays.stream(ThresholdType.values()).map(t -> t.defaultAmount).toList());
    }
}

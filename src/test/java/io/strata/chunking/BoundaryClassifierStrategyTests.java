package io.strata.chunking;

import org.junit.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

public class BoundaryClassifierStrategyTests {

    /** One token per whitespace-separated word; p(token) from (word, index in window); records every window it scores. */
    static final class ScriptedScorer implements BoundaryScorer {
        final int window;
        final BiFunction<String, Integer, Double> probability;
        final List<String> windows = new ArrayList<>();

        ScriptedScorer(int window, BiFunction<String, Integer, Double> probability) {
            this.window = window;
            this.probability = probability;
        }

        @Override
        public String name() {
            return "scripted";
        }

        @Override
        public int windowTokens() {
            return window;
        }

        @Override
        public synchronized Scores score(String text) {
            windows.add(text);
            List<int[]> spans = new ArrayList<>();
            Matcher m = Pattern.compile("\\S+").matcher(text);
            while (m.find() && spans.size() < window) {
                spans.add(new int[] { m.start(), m.end() });
            }
            int n = spans.size();
            int[] starts = new int[n];
            int[] ends = new int[n];
            double[] p = new double[n];
            for (int i = 0; i < n; i++) {
                starts[i] = spans.get(i)[0];
                ends[i] = spans.get(i)[1];
                p[i] = probability.apply(text.substring(starts[i], ends[i]), i);
            }
            return new Scores(starts, ends, p);
        }
    }

    private static List<String> parents(String text, BoundaryClassifierStrategy strategy) {
        return strategy.split(new TextIndex(text, SentenceSegmenter.english())).stream().map(s -> text.substring(s.start(), s.end())).toList();
    }

    @Test
    public void testSegment_whenSentenceStartExceedsThreshold_startsAParentThereAndOnlyThere() {
        String text = "The river was high. Boats stayed in. Quarterly revenue grew. Margins held too. "
            + "Hot weather came early this year. Nobody expected it.";
        // "Quarterly" passes 0.5; "Hot" is exactly 0.5 (not above); "held" passes but is not a sentence start
        Map<String, Double> p = Map.of("Quarterly", 0.8, "Hot", 0.5, "held", 0.95);
        ScriptedScorer scorer = new ScriptedScorer(100, (word, i) -> p.getOrDefault(word, 0.1));
        BoundaryClassifierStrategy strategy = new BoundaryClassifierStrategy(scorer, 0.5, 300);

        assertEquals(List.of("The river was high. Boats stayed in.",
            "Quarterly revenue grew. Margins held too. Hot weather came early this year. Nobody expected it."), parents(text, strategy));
        Segmentation.Evidence e = strategy.segment(new TextIndex(text, SentenceSegmenter.english())).evidence().get(0);
        assertEquals(BoundaryClassifierStrategy.SIGNAL, e.signal());
        assertArrayEquals(new int[] { text.indexOf("Boats"), text.indexOf("Quarterly"), text.indexOf("Margins"), text.indexOf("Hot"),
            text.indexOf("Nobody") }, e.positions());
        assertArrayEquals(new double[] { 0.1, 0.8, 0.1, 0.5, 0.1 }, e.values(), 0);
        assertEquals(0.5, e.threshold(), 0);

        // a lower threshold adds the sentence at exactly 0.5
        assertEquals(3, parents(text, new BoundaryClassifierStrategy(scorer, 0.4, 300)).size());
    }

    /** 40 sentences, every seventh from the fourth "Break comes here."; their offsets go to {@code breaks}. */
    private static String textWithBreaks(List<Integer> breaks) {
        StringBuilder b = new StringBuilder();
        for (int s = 0; s < 40; s++) {
            if (s % 7 == 3) {
                breaks.add(b.length());
                b.append("Break comes here. ");
            } else {
                b.append(String.format(Locale.ROOT, "Plain sentence %d. ", s));
            }
        }
        return b.toString().trim();
    }

    @Test
    public void testSegment_whenTextLongerThanWindow_stitchesOverlappingWindowsWithoutEdgeArtefacts() {
        List<Integer> breaks = new ArrayList<>();
        String text = textWithBreaks(breaks);
        // the first token of every window (no left context) scores 0.99, as an edge artefact would: the earlier window
        // owns it, so it must never make a boundary
        ScriptedScorer scorer = new ScriptedScorer(8, (word, i) -> i == 0 ? 0.99 : word.equals("Break") ? 0.9 : 0.05);
        BoundaryClassifierStrategy strategy = new BoundaryClassifierStrategy(scorer, 0.5, 300);
        List<Span> spans = strategy.split(new TextIndex(text, SentenceSegmenter.english()));

        assertTrue("windows: " + scorer.windows.size(), scorer.windows.size() > 15);
        List<Integer> starts = new ArrayList<>(spans.stream().map(Span::start).toList());
        assertEquals(0, (int) starts.remove(0));
        assertEquals(breaks, starts);
        // every word was inside some window
        for (String word : text.split(" ")) {
            assertTrue(word, scorer.windows.stream().anyMatch(w -> w.contains(word)));
        }
    }

    @Test
    public void testSegment_tokenBoundaries_startAParentAtAnyWordTheClassifierFiresOn() {
        String text = "The river was high. Boats stayed in. Quarterly revenue grew. Margins held too.";
        Map<String, Double> p = Map.of("Quarterly", 0.8, "held", 0.95);
        ScriptedScorer scorer = new ScriptedScorer(100, (word, i) -> p.getOrDefault(word, 0.1));
        BoundaryClassifierStrategy strategy = new BoundaryClassifierStrategy(scorer, 0.5, 300, true, false);

        assertEquals(List.of("The river was high. Boats stayed in.", "Quarterly revenue grew. Margins", "held too."),
            parents(text, strategy));
        // every word but the first is a candidate, with its own probability as evidence
        Segmentation.Evidence e = strategy.segment(new TextIndex(text, SentenceSegmenter.english())).evidence().get(0);
        assertEquals(text.split(" ").length - 1, e.positions().length);
        assertEquals(text.indexOf("river"), e.positions()[0]);
    }

    /** §2.2: "the window moves to the latest predicted start tokens and continue predicting incoming start tokens". */
    @Test
    public void testSegment_latestStartWindow_movesToTheLatestPredictedStart() {
        List<Integer> breaks = new ArrayList<>();
        String text = textWithBreaks(breaks);
        // position 0 of a window (no left context) scores 0.99: it must never decide a boundary
        ScriptedScorer scorer = new ScriptedScorer(8, (word, i) -> i == 0 ? 0.99 : word.equals("Break") ? 0.9 : 0.05);
        BoundaryClassifierStrategy strategy = new BoundaryClassifierStrategy(scorer, 0.5, 300, false, true);
        List<Integer> starts = new ArrayList<>(strategy.split(new TextIndex(text, SentenceSegmenter.english())).stream()
            .map(Span::start).toList());
        assertEquals(0, (int) starts.remove(0));
        assertEquals(breaks, starts);

        // each window opens at the latest start the previous one predicted, or, with none, at the last word it reached
        for (int w = 1; w < scorer.windows.size(); w++) {
            String[] previous = scorer.windows.get(w - 1).trim().split(" ");
            String opens = scorer.windows.get(w).split(" ")[0];
            int latest = -1;
            for (int i = 1; i < previous.length && i < 8; i++) {
                if (previous[i].equals("Break")) {
                    latest = i;
                }
            }
            String expected = latest > 0 ? "Break" : previous[Math.min(previous.length, 8) - 1];
            assertEquals("window " + w + " after [" + scorer.windows.get(w - 1) + "]", expected, opens);
        }
        // the overlap windows read the text at a fixed pace; these follow the predictions
        ScriptedScorer overlap = new ScriptedScorer(8, (word, i) -> i == 0 ? 0.99 : word.equals("Break") ? 0.9 : 0.05);
        new BoundaryClassifierStrategy(overlap, 0.5, 300).split(new TextIndex(text, SentenceSegmenter.english()));
        assertTrue(scorer.windows.size() + " vs " + overlap.windows.size(), scorer.windows.size() != overlap.windows.size());
    }

    @Test
    public void testSplit_whenSegmentExceedsMaxWords_splitsItBelowTheta() {
        StringBuilder b = new StringBuilder();
        for (int s = 0; s < 30; s++) {
            b.append("One two three four five six. ");
        }
        String text = b.toString().trim();
        ScriptedScorer scorer = new ScriptedScorer(64, (word, i) -> 0.0);
        BoundaryClassifierStrategy strategy = new BoundaryClassifierStrategy(scorer, 0.5, 20);
        TextIndex index = new TextIndex(text, SentenceSegmenter.english());
        List<Span> spans = strategy.split(index);

        assertTrue(spans.size() >= 9);
        int words = 0;
        for (Span s : spans) {
            assertTrue(s + " has " + index.words(s) + " words", index.words(s) <= 20);
            words += index.words(s);
        }
        assertEquals(180, words);
        assertEquals(0, spans.get(0).start());
        assertEquals(text.length(), spans.get(spans.size() - 1).end());
    }

    @Test
    public void testSplit_whenTextBlank_returnsNoParents() {
        ScriptedScorer scorer = new ScriptedScorer(8, (word, i) -> 0.9);
        assertEquals(List.of(), new BoundaryClassifierStrategy(scorer, 0.5, 20).split(new TextIndex("  \n ", SentenceSegmenter.english())));
    }

    private static StrategyModels modelsWith(BoundaryScorer scorer, List<StrategyModels.Name> asked) {
        return new StrategyModels() {
            @Override
            public Embedder embedder(String field, Name name) {
                throw new UnsupportedOperationException();
            }

            @Override
            public CausalLm causalLm(String field, Name name) {
                throw new UnsupportedOperationException();
            }

            @Override
            public TextGenerator generator(String field, Name name) {
                throw new UnsupportedOperationException();
            }

            @Override
            public BoundaryScorer boundaryScorer(String field, Name name) {
                asked.add(name);
                return scorer;
            }
        };
    }

    @Test
    public void testParse_readsModelThresholdAndMaxWords() {
        List<StrategyModels.Name> asked = new ArrayList<>();
        ScriptedScorer scorer = new ScriptedScorer(8, (word, i) -> 0.0);
        ChunkingStrategy s = ChunkingConfig.parseStrategy("strategy",
            Map.of("type", "boundary_classifier", "model", "my-head", "threshold", 0.7, "max_words", 120), modelsWith(scorer, asked));
        assertTrue(s instanceof BoundaryClassifierStrategy);
        assertEquals(0.7, ((BoundaryClassifierStrategy) s).threshold(), 0);
        assertEquals(120, s.maxWords());
        assertTrue(s.usesModels());
        assertEquals(List.of(new StrategyModels.Name("my-head", null)), asked);

        BoundaryClassifierStrategy defaults = (BoundaryClassifierStrategy) ChunkingConfig.parseStrategy("strategy",
            Map.of("type", "boundary_classifier"), modelsWith(scorer, asked));
        assertEquals(BoundaryClassifierStrategy.DEFAULT_THRESHOLD, defaults.threshold(), 0);
        assertEquals(ChunkingConfig.DEFAULT_MAX_WORDS, defaults.maxWords());
        assertEquals(null, asked.get(1)); // the bundled head
        assertTrue(!defaults.anyToken() && !defaults.latestStart());

        BoundaryClassifierStrategy paper = (BoundaryClassifierStrategy) ChunkingConfig.parseStrategy("strategy",
            Map.of("type", "boundary_classifier", "boundaries", "token", "window", "latest_start"), modelsWith(scorer, asked));
        assertTrue(paper.anyToken() && paper.latestStart());
        ConfigException e = assertThrows(ConfigException.class, () -> ChunkingConfig.parseStrategy("strategy",
            Map.of("type", "boundary_classifier", "window", "sliding"), modelsWith(scorer, asked)));
        assertEquals("strategy.window", e.field());
        assertTrue(e.getMessage(), e.getMessage().contains("[overlap, latest_start]"));
    }

    @Test
    public void testParse_whenConfigInvalid_namesTheField() {
        StrategyModels models = modelsWith(new ScriptedScorer(8, (word, i) -> 0.0), new ArrayList<>());
        ConfigException e = assertThrows(ConfigException.class, () -> ChunkingConfig.parseStrategy("strategy",
            Map.of("type", "boundary_classifier", "threshold", 1.5), models));
        assertEquals("strategy.threshold", e.field());
        assertTrue(e.getMessage(), e.getMessage().contains("[strategy.threshold] must be a number in [0.0, 1.0]"));

        e = assertThrows(ConfigException.class, () -> ChunkingConfig.parseStrategy("strategy",
            Map.of("type", "boundary_classifier", "max_words", 0), models));
        assertEquals("strategy.max_words", e.field());

        e = assertThrows(ConfigException.class, () -> ChunkingConfig.parseStrategy("strategy",
            Map.of("type", "boundary_classifier", "stride", 3), models));
        assertEquals("strategy.stride", e.field());
        assertTrue(e.getMessage(), e.getMessage().contains("supported: [boundaries, max_tokens, max_words, model, model_id, threshold, type, window]"));

        e = assertThrows(ConfigException.class, () -> ChunkingConfig.parseStrategy("strategy",
            Map.of("type", "boundary_classifier", "model", "x"), StrategyModels.NONE));
        assertEquals("strategy.model", e.field());
        assertTrue(e.getMessage(), e.getMessage().startsWith("[strategy.model] no boundary models are available here"));
    }
}

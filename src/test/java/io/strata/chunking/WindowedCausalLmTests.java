package io.strata.chunking;

import org.junit.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

public class WindowedCausalLmTests {

    /**
     * A remote-like LM with a context of {@code context} tokens (prompt + one generated token), refusing more. Tokens: up
     * to four non-space characters with the whitespace before them. log p(token) = −1 when the same token occurred among
     * the {@value #MEMORY} before it, else −3: answers depend on a bounded stretch of what precedes, so a window that keeps
     * that much context answers exactly as an unbounded model.
     */
    static final class ShortContextLm implements CausalLm {
        static final int MEMORY = 6;
        static final Pattern TOKEN = Pattern.compile("\\s*\\S{1,4}|\\s+");
        final int context;
        final List<Integer> callTokens = new ArrayList<>();

        ShortContextLm(int context) {
            this.context = context;
        }

        @Override
        public String name() {
            return "short-context";
        }

        @Override
        public TokenLogProbs logProbs(String text) {
            List<int[]> spans = new ArrayList<>();
            Matcher m = TOKEN.matcher(text);
            while (m.find()) {
                spans.add(new int[] {m.start(), m.end()});
            }
            if (spans.size() + 1 > context) {
                throw new IllegalArgumentException("This model's maximum context length is " + context + " tokens; got " + spans.size());
            }
            callTokens.add(spans.size());
            int n = spans.size();
            int[] starts = new int[n];
            int[] ends = new int[n];
            double[] lp = new double[n];
            for (int i = 0; i < n; i++) {
                starts[i] = spans.get(i)[0];
                ends[i] = spans.get(i)[1];
                String t = text.substring(starts[i], ends[i]).strip();
                lp[i] = i == 0 ? Double.NaN : -3;
                for (int j = Math.max(0, i - MEMORY); j < i; j++) {
                    if (text.substring(spans.get(j)[0], spans.get(j)[1]).strip().equals(t)) {
                        lp[i] = -1;
                    }
                }
            }
            return new TokenLogProbs(starts, ends, lp);
        }

        @Override
        public double[] eosProbabilities(String prompt, String text, int[] positions) {
            throw new UnsupportedOperationException();
        }

        @Override
        public double[] continuationLogProbs(String prompt, List<String> candidates) {
            return new double[] {-1, -2};
        }
    }

    private static String words(int n, long seed) {
        String[] vocabulary = {"the", "river", "was", "high", "and", "boats", "stayed", "in", "harbour", "yesterday", "a", "bee"};
        Random r = new Random(seed);
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < n; i++) {
            b.append(i == 0 ? "" : r.nextInt(9) == 0 ? ".  " : r.nextInt(20) == 0 ? "\n\n" : " ").append(vocabulary[r.nextInt(vocabulary.length)]);
        }
        return b.toString();
    }

    @Test
    public void testLogProbs_ofATextLongerThanTheContext_equalAnUnboundedModelsAnswers_withNoCallOverTheContext() {
        String text = words(3000, 7);
        ShortContextLm bounded = new ShortContextLm(64);
        assertThrows(IllegalArgumentException.class, () -> bounded.logProbs(text)); // it does not fit one call
        bounded.callTokens.clear();

        CausalLm.TokenLogProbs windowed = new WindowedCausalLm(bounded, 64).logProbs(text);
        CausalLm.TokenLogProbs expected = new ShortContextLm(Integer.MAX_VALUE).logProbs(text);

        assertArrayEquals(expected.tokenStarts(), windowed.tokenStarts());
        assertArrayEquals(expected.tokenEnds(), windowed.tokenEnds());
        assertArrayEquals(expected.logProbs(), windowed.logProbs(), 0);
        assertTrue(bounded.callTokens.size() > 10);
        // after the first window (sized for one character per token), windows use most of the context
        int full = bounded.callTokens.subList(1, bounded.callTokens.size() - 1).stream().mapToInt(Integer::intValue).min().orElseThrow();
        assertTrue("calls: " + bounded.callTokens, full >= 32);
    }

    @Test
    public void testLogProbs_withoutWhitespace_cutsWindowsAnywhere_andCoversEveryCharacter() {
        String text = "x".repeat(1000);
        ShortContextLm bounded = new ShortContextLm(40);
        CausalLm.TokenLogProbs windowed = new WindowedCausalLm(bounded, 40).logProbs(text);
        int covered = 0;
        for (int t = 0; t < windowed.size(); t++) {
            assertEquals(covered, windowed.tokenStarts()[t]);
            covered = windowed.tokenEnds()[t];
        }
        assertEquals(text.length(), covered);
    }

    @Test
    public void testLogProbs_ofAShortText_isOneCall() {
        ShortContextLm bounded = new ShortContextLm(64);
        new WindowedCausalLm(bounded, 64).logProbs("The river was high.");
        assertEquals(List.of(6), bounded.callTokens); // The, " rive", r, " was", " high", .
    }

    private static StrategyModels remoteAndEmbedded(CausalLm lm, List<StrategyModels.Name> asked) {
        return new StrategyModels() {
            @Override
            public Embedder embedder(String field, Name name) {
                throw new AssertionError();
            }

            @Override
            public CausalLm causalLm(String field, Name name) {
                asked.add(name);
                return lm;
            }

            @Override
            public TextGenerator generator(String field, Name name) {
                throw new AssertionError();
            }

            @Override
            public BoundaryScorer boundaryScorer(String field, Name name) {
                throw new AssertionError();
            }
        };
    }

    @Test
    public void testParse_llmMaxTokens_windowsMlCommonsModels_andIsRejectedForEmbeddedOnes() {
        List<StrategyModels.Name> asked = new ArrayList<>();
        StrategyModels models = remoteAndEmbedded(new ShortContextLm(64), asked);
        Map<String, Object> config = new HashMap<>(Map.of("type", "perplexity", "llm_model_id", "remote-lm", "llm_max_tokens", 64));
        PerplexityStrategy s = (PerplexityStrategy) ChunkingConfig.parseStrategy("strategy", config, models);
        // a 3000-word text through a 64-token model: windowed, so no call is refused
        List<Span> parents = s.split(new TextIndex(words(3000, 3), SentenceSegmenter.english()));
        assertTrue(parents.size() > 1);

        ConfigException e = assertThrows(ConfigException.class, () -> ChunkingConfig.parseStrategy("strategy",
            Map.of("type", "margin_sampling", "llm", "tiny", "llm_max_tokens", 64), models));
        assertEquals("strategy.llm_max_tokens", e.field());
        assertTrue(e.getMessage(), e.getMessage().contains("applies to [strategy.llm_model_id]"));

        e = assertThrows(ConfigException.class, () -> ChunkingConfig.parseStrategy("strategy",
            Map.of("type", "perplexity", "llm_model_id", "remote-lm", "llm_max_tokens", 3), models));
        assertEquals("strategy.llm_max_tokens", e.field());
    }
}

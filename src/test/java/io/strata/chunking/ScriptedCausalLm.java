package io.strata.chunking;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A deterministic {@link CausalLm} for strategy tests. Test sentences carry an id word "S<n>" ({@link #sentence});
 * every answer is scripted per sentence id:
 * <ul>
 *   <li>EOS probability after a position = {@code eos[id of the last sentence before it]} (default 0.1);</li>
 *   <li>each whitespace-separated word gets log-probability −{@code ppl[id of its sentence]} (default 1), so a
 *       sentence's mean NLL is exactly its scripted value; the very first word is NaN (no start token);</li>
 *   <li>the answers "1"/"2" to a Table 5 prompt get probabilities {@code split[id of sentence_2]} and 1 − that
 *       (default 0.5), both halved so only the normalised values are meaningful.</li>
 * </ul>
 * Calls are recorded.
 */
final class ScriptedCausalLm implements CausalLm {
    private static final Pattern ID = Pattern.compile("\\bS(\\d+)\\b");

    final Map<Integer, Double> eos = new HashMap<>();
    final Map<Integer, Double> ppl = new HashMap<>();
    final Map<Integer, Double> split = new HashMap<>();
    final List<String> eosWindows = new ArrayList<>();
    final List<String> eosPrompts = new ArrayList<>();
    final List<String> logProbTexts = new ArrayList<>();
    final List<String> prompts = new ArrayList<>();

    /** "S<id> w w … end." with {@code words} words in all. */
    static String sentence(int id, int words) {
        StringBuilder sb = new StringBuilder("S").append(id);
        for (int w = 1; w < words - 1; w++) {
            sb.append(" w");
        }
        return words > 1 ? sb.append(" end.").toString() : sb.append('.').toString();
    }

    /** Sentences S1..Sn of {@code words} words each, joined by spaces. */
    /** Sentences S{from}..S{to} of {@code words} words each, joined by spaces. */
    static String range(int from, int to, int words) {
        StringBuilder sb = new StringBuilder();
        for (int i = from; i <= to; i++) {
            sb.append(i > from ? " " : "").append(sentence(i, words));
        }
        return sb.toString();
    }

    static List<String> texts(TextIndex index, List<Span> spans) {
        return spans.stream().map(s -> s.of(index.text())).toList();
    }

    static String sentences(int n, int words) {
        StringBuilder sb = new StringBuilder();
        for (int i = 1; i <= n; i++) {
            sb.append(i > 1 ? " " : "").append(sentence(i, words));
        }
        return sb.toString();
    }

    static int lastId(String text) {
        Matcher m = ID.matcher(text);
        int id = -1;
        while (m.find()) {
            id = Integer.parseInt(m.group(1));
        }
        return id;
    }

    /** Models that answer every {@code llm} with this LM. */
    StrategyModels models() {
        CausalLm self = this;
        return new StrategyModels() {
            @Override
            public Embedder embedder(String field, Name name) {
                throw new AssertionError("no embedder expected");
            }

            @Override
            public CausalLm causalLm(String field, Name name) {
                return self;
            }

            @Override
            public TextGenerator generator(String field, Name name) {
                throw new AssertionError("no generator expected");
            }

        };
    }

    @Override
    public String name() {
        return "scripted";
    }

    @Override
    public TokenLogProbs logProbs(String text) {
        logProbTexts.add(text);
        List<int[]> words = new ArrayList<>();
        int i = 0;
        while (i < text.length()) {
            while (i < text.length() && Character.isWhitespace(text.charAt(i))) {
                i++;
            }
            int start = i;
            while (i < text.length() && !Character.isWhitespace(text.charAt(i))) {
                i++;
            }
            if (i > start) {
                // tokens carry their leading space, as BPE tokens do
                words.add(new int[] { words.isEmpty() ? start : start - 1, i });
            }
        }
        int[] starts = new int[words.size()];
        int[] ends = new int[words.size()];
        double[] logProbs = new double[words.size()];
        for (int t = 0; t < words.size(); t++) {
            starts[t] = words.get(t)[0];
            ends[t] = words.get(t)[1];
            logProbs[t] = t == 0 ? Double.NaN : -ppl.getOrDefault(lastId(text.substring(0, ends[t])), 1.0);
        }
        return new TokenLogProbs(starts, ends, logProbs);
    }

    @Override
    public double[] eosProbabilities(String prompt, String text, int[] positions) {
        eosPrompts.add(prompt);
        eosWindows.add(text);
        double[] out = new double[positions.length];
        for (int k = 0; k < positions.length; k++) {
            out[k] = eos.getOrDefault(lastId(text.substring(0, positions[k])), 0.1);
        }
        return out;
    }

    @Override
    public double[] continuationLogProbs(String prompt, List<String> candidates) {
        prompts.add(prompt);
        if (!candidates.equals(List.of("1", "2"))) {
            throw new AssertionError("unexpected candidates " + candidates);
        }
        int id = lastId(prompt.substring(0, prompt.indexOf(" two parts;")));
        double p = split.getOrDefault(id, 0.5);
        return new double[] { Math.log(0.5 * p), Math.log(0.5 * (1 - p)) };
    }

    /** Asserts the contract every parent list must keep (overlap allowed only when {@code mayOverlap}). */
    static void assertValidParents(TextIndex text, List<Span> parents, int theta, boolean mayOverlap) {
        String s = text.text();
        boolean[] covered = new boolean[s.length()];
        Span previous = null;
        for (Span p : parents) {
            org.junit.Assert.assertTrue("empty parent", p.length() > 0);
            org.junit.Assert.assertEquals("untrimmed " + p, text.trim(p.start(), p.end()), p);
            org.junit.Assert.assertTrue("above θ: " + p.of(s), text.words(p) <= theta);
            if (previous != null) {
                org.junit.Assert.assertTrue("out of order " + p, p.start() > previous.start());
                org.junit.Assert.assertTrue("overlap " + previous + " " + p, mayOverlap || p.start() >= previous.end());
            }
            for (int c = p.start(); c < p.end(); c++) {
                covered[c] = true;
            }
            previous = p;
        }
        for (int c = 0; c < s.length(); c++) {
            org.junit.Assert.assertTrue("uncovered char " + c, covered[c] || Character.isWhitespace(s.charAt(c)));
        }
    }
}

package io.strata.chunking;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A deterministic embedder for tests: every {@code [key]} marker in a text contributes the vector scripted for that
 * key, and a text's vector is their sum (so a sentence combined with its neighbours mixes their directions, as a real
 * model roughly does). Vectors are returned as scripted, not normalised: cosine is scale-free, and exact small
 * integers keep expected similarities exact. Records every call.
 */
final class ScriptedEmbedder implements Embedder {
    private static final Pattern MARKER = Pattern.compile("\\[(\\w+)]");
    private final Function<String, float[]> vectors;
    private final int dimension;
    final List<List<String>> calls = Collections.synchronizedList(new ArrayList<>());
    final List<Purpose> purposes = Collections.synchronizedList(new ArrayList<>());

    ScriptedEmbedder(int dimension, Function<String, float[]> vectors) {
        this.dimension = dimension;
        this.vectors = vectors;
    }

    ScriptedEmbedder(Map<String, float[]> vectors) {
        this(vectors.values().iterator().next().length, vectors::get);
    }

    /** Key "k" (a number) → the unit vector at cumulative angle {@code angles[k]} in a plane. */
    static ScriptedEmbedder angles(double[] angles) {
        return new ScriptedEmbedder(2, key -> {
            double a = angles[Integer.parseInt(key)];
            return new float[] { (float) Math.cos(a), (float) Math.sin(a) };
        });
    }

    @Override
    public String name() {
        return "scripted";
    }

    @Override
    public int dimension() {
        return dimension;
    }

    @Override
    public int maxTokens() {
        return 512;
    }

    @Override
    public List<float[]> embed(List<String> texts, Purpose purpose) {
        calls.add(List.copyOf(texts));
        purposes.add(purpose);
        List<float[]> out = new ArrayList<>();
        for (String text : texts) {
            float[] sum = new float[dimension];
            Matcher m = MARKER.matcher(text);
            boolean any = false;
            while (m.find()) {
                float[] v = vectors.apply(m.group(1));
                if (v == null) {
                    throw new IllegalArgumentException("no vector scripted for [" + m.group(1) + "] in " + text);
                }
                for (int d = 0; d < dimension; d++) {
                    sum[d] += v[d];
                }
                any = true;
            }
            if (any == false) {
                throw new IllegalArgumentException("no marker in [" + text + "]");
            }
            out.add(sum);
        }
        return out;
    }

    @Override
    public int[] tokenCounts(List<String> texts, Purpose purpose) {
        return texts.stream().mapToInt(t -> t.split("\\s+").length + 2).toArray();
    }

    /** Texts embedded so far, over all calls, in order. */
    List<String> embeddedTexts() {
        return calls.stream().flatMap(List::stream).toList();
    }
}

package io.strata.chunking;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * {@code semantic}: Kamradt's semantic chunking (the "Semantic" baseline of PIC §4.1 and of Meta-Chunking), with the
 * behaviour of LangChain's {@code SemanticChunker}: each sentence is embedded together with {@code buffer_size}
 * neighbours on each side; the cosine distance between consecutive combined sentences is a breakpoint where it
 * exceeds (strictly) a threshold computed from all distances of the document by {@code breakpoint_threshold_type}:
 * <ul>
 *   <li>{@code percentile} (default amount 95): that percentile of the distances (linear interpolation);</li>
 *   <li>{@code standard_deviation} (3): mean + amount · population standard deviation;</li>
 *   <li>{@code interquartile} (1.5): mean + amount · (Q3 − Q1);</li>
 *   <li>{@code gradient} (95): the amount-th percentile of the gradient of the distances (central differences,
 *       one-sided at the ends), and breakpoints where the gradient, not the distance, exceeds it;</li>
 *   <li>{@code similarity} (0.8): an absolute cosine similarity in [0, 1], the same for every document — a sentence
 *       starts a new chunk when its similarity to the preceding one is below it (distance above 1 − amount): the
 *       "similarity threshold" of the chunk-splitting comparison (paper 003 §2.2, which gives no value) and of
 *       Meta-Chunking's Similarity Chunking baseline (paper 002 Table 3: 0.73–0.83; 0.8 is inside that range). With
 *       {@code buffer_size} 0 each sentence is compared with the preceding one alone, as both papers do.</li>
 * </ul>
 * Differences from LangChain: sentences come from the shared ICU segmentation, not the regex {@code (?<=[.?!])\s+};
 * no {@code number_of_chunks} or {@code min_chunk_size}; and parents above θ = {@code max_words} words are split
 * further with the {@link RecursiveSplitter} (LangChain has no size bound). Combined sentences are embedded in
 * batches of {@value #BATCH} and only the previous embedding is kept, so memory is linear in the sentence count.
 */
public final class SemanticStrategy extends ModelGuidedStrategy {
    public static final String TYPE = "semantic";

    /** Threshold types with their default amounts, in LangChain's order (the first is the default). */
    public enum ThresholdType {
        PERCENTILE(95), STANDARD_DEVIATION(3), INTERQUARTILE(1.5), GRADIENT(95), SIMILARITY(0.8);

        final double defaultAmount;

        ThresholdType(double defaultAmount) {
            this.defaultAmount = defaultAmount;
        }

        public String value() {
            return name().toLowerCase(Locale.ROOT);
        }

        /** The config values, default first. */
        public static List<String> names() {
            return Arrays.stream(values()).map(ThresholdType::value).toList();
        }
    }

    static final int BATCH = 256; // texts per embed call: the embedder sorts a call by length, so larger calls pad less
    public static final int MAX_BUFFER_SIZE = 20;

    private final Embedder embedder;
    private final int bufferSize;
    private final ThresholdType thresholdType;
    private final double amount;

    public SemanticStrategy(Embedder embedder, int bufferSize, ThresholdType thresholdType, double amount, int maxWords) {
        super(maxWords);
        if (bufferSize < 0) {
            throw new IllegalArgumentException("buffer size must be >= 0, got " + bufferSize);
        }
        this.embedder = embedder;
        this.bufferSize = bufferSize;
        this.thresholdType = thresholdType;
        this.amount = amount;
    }

    /** Reads {@code model}/{@code model_id}, {@code buffer_size}, {@code breakpoint_threshold_type}, {@code breakpoint_threshold_amount}, {@code max_words}. */
    static SemanticStrategy parse(ChunkingConfig.Options o) {
        int maxWords = o.maxWords();
        int bufferSize = o.intValue("buffer_size", 1, 0, MAX_BUFFER_SIZE);
        ThresholdType type = ThresholdType.valueOf(
            o.enumValue("breakpoint_threshold_type", ThresholdType.names()).toUpperCase(Locale.ROOT));
        // percentiles are in [0, 100]; multiples of a spread are >= 0 (above ~(n-1)/sqrt(n) they never fire); a similarity
        // is a cosine in [0, 1]
        double amount = o.doubleValue("breakpoint_threshold_amount", type.defaultAmount, 0, type == ThresholdType.SIMILARITY ? 1 : 100);
        Embedder embedder = o.embedder();
        return new SemanticStrategy(embedder, bufferSize, type, amount, maxWords);
    }

    @Override
    public String type() {
        return TYPE;
    }

    public int bufferSize() {
        return bufferSize;
    }

    public ThresholdType thresholdType() {
        return thresholdType;
    }

    public double thresholdAmount() {
        return amount;
    }

    public Embedder embedder() {
        return embedder;
    }

    @Override
    public Segmentation segment(TextIndex text) {
        List<Span> sentences = RecursiveSplitter.sentences(text, new Span(0, text.length()));
        int n = sentences.size();
        // LangChain returns one chunk for one sentence, and for two with the gradient (it needs two distances)
        if (n <= 1 || (thresholdType == ThresholdType.GRADIENT && n == 2)) {
            return Segmentation.of(bound(text, sentences, new int[0]));
        }
        double[] distances = distances(text, sentences);
        double[] compared = thresholdType == ThresholdType.GRADIENT ? gradient(distances) : distances;
        double threshold = threshold(compared);
        int[] breaks = new int[n - 1]; // break after sentence i
        int k = 0;
        for (int i = 0; i < compared.length; i++) {
            if (compared[i] > threshold) {
                breaks[k++] = i;
            }
        }
        int[] positions = new int[n - 1];
        for (int i = 0; i < n - 1; i++) {
            positions[i] = sentences.get(i).end();
        }
        List<Segmentation.Evidence> evidence = new ArrayList<>();
        if (thresholdType == ThresholdType.GRADIENT) {
            evidence.add(new Segmentation.Evidence("distance", positions, distances, Double.NaN));
            evidence.add(new Segmentation.Evidence("distance_gradient", positions, compared, threshold));
        } else {
            evidence.add(new Segmentation.Evidence("distance", positions, distances, threshold));
        }
        return new Segmentation(bound(text, sentences, Arrays.copyOf(breaks, k)), evidence);
    }

    /** {@code 1 - cos} between combined sentence i and i + 1, embedding in bounded batches. */
    private double[] distances(TextIndex text, List<Span> sentences) {
        int n = sentences.size();
        double[] out = new double[n - 1];
        float[] previous = null;
        for (int from = 0; from < n; from += BATCH) {
            int to = Math.min(n, from + BATCH);
            List<String> batch = new ArrayList<>(to - from);
            for (int i = from; i < to; i++) {
                batch.add(combined(text, sentences, i));
            }
            List<float[]> vectors = embedder.embed(batch, Embedder.Purpose.PASSAGE);
            if (vectors.size() != batch.size()) {
                throw new IllegalStateException("embedder [" + embedder.name() + "] returned " + vectors.size()
                    + " vectors for " + batch.size() + " texts");
            }
            for (int i = from; i < to; i++) {
                float[] v = vectors.get(i - from);
                if (previous != null) {
                    out[i - 1] = 1 - Vectors.cosine(previous, v);
                }
                previous = v;
            }
        }
        return out;
    }

    /** Sentence i with {@code bufferSize} neighbours on each side, joined by single spaces (as LangChain does). */
    private String combined(TextIndex text, List<Span> sentences, int i) {
        StringBuilder sb = new StringBuilder();
        for (int j = Math.max(0, i - bufferSize); j <= Math.min(sentences.size() - 1, i + bufferSize); j++) {
            if (sb.length() > 0) {
                sb.append(' ');
            }
            sb.append(text.text(), sentences.get(j).start(), sentences.get(j).end());
        }
        return sb.toString();
    }

    double threshold(double[] values) {
        return switch (thresholdType) {
            case PERCENTILE, GRADIENT -> Vectors.percentile(values, amount);
            case STANDARD_DEVIATION -> Vectors.mean(values) + amount * Vectors.std(values);
            case INTERQUARTILE -> Vectors.mean(values)
                + amount * (Vectors.percentile(values, 75) - Vectors.percentile(values, 25));
            case SIMILARITY -> 1 - amount; // distances are 1 - cos: a similarity below the amount is a distance above this
        };
    }

    /** numpy's {@code gradient} with unit spacing: central differences inside, one-sided at both ends (needs >= 2). */
    static double[] gradient(double[] d) {
        int n = d.length;
        double[] g = new double[n];
        g[0] = d[1] - d[0];
        g[n - 1] = d[n - 1] - d[n - 2];
        for (int i = 1; i < n - 1; i++) {
            g[i] = (d[i + 1] - d[i - 1]) / 2;
        }
        return g;
    }

    /** Groups of sentences cut after each sentence in {@code breaks} (ascending); groups above θ are split further. */
    private List<Span> bound(TextIndex text, List<Span> sentences, int[] breaks) {
        List<Span> out = new ArrayList<>();
        int start = 0;
        for (int b = 0; b <= breaks.length; b++) {
            int last = b < breaks.length ? breaks[b] : sentences.size() - 1;
            if (last < start) {
                continue;
            }
            Span group = new Span(sentences.get(start).start(), sentences.get(last).end());
            if (text.size(group) > maxWords()) {
                out.addAll(splitter.split(text, group));
            } else {
                out.add(group);
            }
            start = last + 1;
        }
        return out;
    }
}

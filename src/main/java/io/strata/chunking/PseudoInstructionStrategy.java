package io.strata.chunking;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * {@code pseudo_instruction}: PIC, "Pseudo-Instruction for document Chunking" (paper 001, §3). A pseudo-instruction
 * stands for the document's unknown queries; each sentence's cosine similarity r_i to it (eq. 1) is compared with
 * τ = the mean of all r_i (§3.2, "dynamic threshold"), and every maximal run of adjacent sentences on the same side
 * of τ is one chunk: r ≥ τ runs are C_rel (eq. 2), r &lt; τ runs are C_irr (eq. 3), C = C_rel + C_irr (eq. 4).
 *
 * <p>Pseudo-instruction variants:
 * <ul>
 *   <li>{@code summary} (the paper's method, §3.1) when {@code llm_model_id} (or {@code llm}) names a text generator:
 *       its summary of the document with the prompt of the paper's Table 7, embedded by the same model and the same
 *       function φ as the sentences (eq. 1 uses one φ for both), i.e. as a {@link Embedder.Purpose#PASSAGE};</li>
 *   <li>{@code mean} (the paper's "PIC-Mean" ablation, §6.1) without an LLM: the mean of the sentence embeddings,
 *       re-normalised;</li>
 *   <li>{@code sent} (the "PIC-Sent" ablation, §6.1: "a randomly chosen sentence from the document"), asked for with
 *       {@code instruction: sent}: one of the document's sentences — chosen by the text's hash instead of at random, so
 *       the same document always gets the same parents.</li>
 * </ul>
 * The threshold family of §6.2 (Figure 2: μ − 2σ … μ + 2σ): {@code threshold_sigmas} k gives τ = μ + kσ (σ the
 * population standard deviation of the r_i); the default k = 0 is the paper's τ = μ, which it found best.
 * Where we differ from the paper, which states no length bound (its chunks average 42.8 words, Table 6): parents above
 * θ = {@code max_words} words are split further with the {@link RecursiveSplitter}. The document given to the LLM is
 * cut to its first {@code llm_max_input_words} words (the paper summarised Wikipedia articles whole; a book does not
 * fit a prompt). Sentences come from the shared ICU segmentation (the paper used NLTK), and are embedded alone, as in
 * eq. 1. If the LLM answers with a blank summary, that document falls back to the mean variant (its evidence says so).
 */
public final class PseudoInstructionStrategy extends ModelGuidedStrategy {
    public static final String TYPE = "pseudo_instruction";
    public static final String VARIANT_SUMMARY = "summary";
    public static final String VARIANT_MEAN = "mean";
    public static final String VARIANT_SENT = "sent";
    /** The paper's §6.2 range of k in τ = μ + kσ, widened by one σ each side. */
    public static final double MAX_SIGMAS = 3;

    /** The summarizer prompt of PIC's Table 7, verbatim; {@code {context}} is the document. */
    public static final String PROMPT = "Read this passage:\n{context}\nWrite a summary for this passage. Your summary should be "
        + "concise and informative. Give the summary directly, without any other text.";
    public static final int DEFAULT_SUMMARY_MAX_TOKENS = 256;
    public static final int DEFAULT_LLM_MAX_INPUT_WORDS = 3000;

    static final int BATCH = 256; // texts per embed call: the embedder sorts a call by length, so larger calls pad less

    private final Embedder embedder;
    private final TextGenerator generator; // null: mean variant
    private final int summaryMaxTokens;
    private final int llmMaxInputWords;
    /** {@link #VARIANT_SENT}, or null: summary with a generator, else mean. */
    private final String fixedVariant;
    private final double sigmas;

    public PseudoInstructionStrategy(Embedder embedder, TextGenerator generator, int summaryMaxTokens, int llmMaxInputWords,
        int maxWords) {
        this(embedder, generator, summaryMaxTokens, llmMaxInputWords, maxWords, null, 0);
    }

    /** With {@code variant} {@value #VARIANT_SENT} (no generator) or null, and τ = μ + {@code sigmas} σ. */
    public PseudoInstructionStrategy(Embedder embedder, TextGenerator generator, int summaryMaxTokens, int llmMaxInputWords,
        int maxWords, String variant, double sigmas) {
        super(maxWords);
        if (variant != null && (!VARIANT_SENT.equals(variant) || generator != null)) {
            throw new IllegalArgumentException("variant must be null or [sent] without a generator, got [" + variant + "]");
        }
        this.embedder = embedder;
        this.generator = generator;
        this.summaryMaxTokens = summaryMaxTokens;
        this.llmMaxInputWords = llmMaxInputWords;
        this.fixedVariant = variant;
        this.sigmas = sigmas;
    }

    /** Reads {@code model}/{@code model_id}, {@code llm}/{@code llm_model_id}, {@code summary_max_tokens}, {@code llm_max_input_words}, {@code max_words}. */
    static PseudoInstructionStrategy parse(ChunkingConfig.Options o) {
        int maxWords = o.maxWords();
        int summaryMaxTokens = o.intValue("summary_max_tokens", DEFAULT_SUMMARY_MAX_TOKENS, 1, 4096);
        int llmMaxInputWords = o.intValue("llm_max_input_words", DEFAULT_LLM_MAX_INPUT_WORDS, 1, 1_000_000);
        StrategyModels.Name llm = o.modelName("llm", "llm_model_id");
        TextGenerator generator = llm == null ? null
            : o.models().generator(o.path(llm.model() != null ? "llm" : "llm_model_id"), llm);
        String instruction = o.enumValue("instruction", List.of(generator != null ? VARIANT_SUMMARY : VARIANT_MEAN,
            generator != null ? VARIANT_MEAN : VARIANT_SUMMARY, VARIANT_SENT));
        if (VARIANT_SUMMARY.equals(instruction) && generator == null) {
            throw o.error("instruction", "[summary] needs an LLM: set [llm] or [llm_model_id]");
        }
        if (!VARIANT_SUMMARY.equals(instruction) && generator != null) {
            throw o.error("instruction", "[" + instruction + "] uses no LLM: remove [llm] / [llm_model_id], or use [summary]");
        }
        double sigmas = o.doubleValue("threshold_sigmas", 0, -MAX_SIGMAS, MAX_SIGMAS);
        Embedder embedder = o.embedder();
        return new PseudoInstructionStrategy(embedder, generator, summaryMaxTokens, llmMaxInputWords, maxWords,
            VARIANT_SENT.equals(instruction) ? VARIANT_SENT : null, sigmas);
    }

    @Override
    public String type() {
        return TYPE;
    }

    /** {@code pseudo_instruction/mean} or {@code pseudo_instruction/summary}. */
    @Override
    public String label() {
        return TYPE + "/" + variant();
    }

    /** {@value #VARIANT_SUMMARY} with an LLM, {@value #VARIANT_SENT} when asked for, else {@value #VARIANT_MEAN}. */
    public String variant() {
        return fixedVariant != null ? fixedVariant : generator != null ? VARIANT_SUMMARY : VARIANT_MEAN;
    }

    /** k in τ = μ + kσ. */
    public double thresholdSigmas() {
        return sigmas;
    }

    public Embedder embedder() {
        return embedder;
    }

    public TextGenerator generator() {
        return generator;
    }

    /** The evidence signal of a variant: {@code similarity_to_summary} or {@code similarity_to_mean}. */
    public static String signal(String variant) {
        return "similarity_to_" + variant;
    }

    /** The Table 7 prompt for {@code document}. */
    public static String prompt(String document) {
        return PROMPT.replace("{context}", document);
    }

    @Override
    public Segmentation segment(TextIndex text) {
        List<Span> sentences = RecursiveSplitter.sentences(text, new Span(0, text.length()));
        int n = sentences.size();
        if (n <= 1) { // nothing to group (and no LLM call for it)
            return Segmentation.of(bound(text, sentences, new boolean[n]));
        }
        float[] instruction = generator != null ? summaryEmbedding(text) : null;
        String variant = instruction != null ? VARIANT_SUMMARY : VARIANT_MEAN;
        double[] r = new double[n];
        if (VARIANT_SENT.equals(fixedVariant)) {
            // PIC-Sent: one sentence of the document as the instruction, by the text's hash (the paper draws it at random)
            Span chosen = sentences.get(Math.floorMod(text.text().hashCode(), n));
            float[] sent = embedder.embed(List.of(text.text().substring(chosen.start(), chosen.end())), Embedder.Purpose.PASSAGE).get(0);
            variant = VARIANT_SENT;
            forEachBatch(text, sentences, (i, v) -> r[i] = Vectors.cosine(v, sent));
        } else if (instruction != null) {
            // r_i on the fly: only one batch of sentence vectors is alive at a time
            forEachBatch(text, sentences, (i, v) -> r[i] = Vectors.cosine(v, instruction));
        } else {
            // PIC-Mean: the mean needs every vector before any r_i; n x dim floats, linear in the sentences
            float[][] vectors = new float[n][];
            forEachBatch(text, sentences, (i, v) -> vectors[i] = v);
            float[] mean = new float[vectors[0].length];
            for (float[] v : vectors) {
                for (int d = 0; d < mean.length; d++) {
                    mean[d] += v[d] / n;
                }
            }
            for (int i = 0; i < n; i++) {
                r[i] = Vectors.cosine(vectors[i], mean); // cosine re-normalises the mean
            }
        }
        // §3.2: τ = μ = (1/n) Σ r_i; §6.2's family μ + kσ with threshold_sigmas k (0 by default)
        double tau = sigmas == 0 ? Vectors.mean(r) : Vectors.mean(r) + sigmas * Vectors.std(r);
        boolean[] relevant = new boolean[n];
        int[] positions = new int[n];
        for (int i = 0; i < n; i++) {
            relevant[i] = r[i] >= tau; // eq. 2 puts r = τ on the relevant side
            positions[i] = sentences.get(i).end();
        }
        return new Segmentation(bound(text, sentences, relevant),
            List.of(new Segmentation.Evidence(signal(variant), positions, r, tau)));
    }

    /** The LLM's summary of the (cut) document embedded as a passage, or null when the summary is blank. */
    private float[] summaryEmbedding(TextIndex text) {
        String document = text.text();
        if (text.totalWords() > llmMaxInputWords) {
            int[] starts = text.wordStartsIn(new Span(0, text.length()));
            document = text.trim(0, starts[llmMaxInputWords]).of(text.text());
        }
        String summary = generator.generate(prompt(document), summaryMaxTokens);
        if (summary == null || summary.isBlank()) {
            return null;
        }
        return embedder.embed(List.of(summary.strip()), Embedder.Purpose.PASSAGE).get(0);
    }

    private interface VectorSink {
        void accept(int sentence, float[] vector);
    }

    private void forEachBatch(TextIndex text, List<Span> sentences, VectorSink sink) {
        for (int from = 0; from < sentences.size(); from += BATCH) {
            int to = Math.min(sentences.size(), from + BATCH);
            List<String> batch = new ArrayList<>(to - from);
            for (int i = from; i < to; i++) {
                batch.add(sentences.get(i).of(text.text()));
            }
            List<float[]> vectors = embedder.embed(batch, Embedder.Purpose.PASSAGE);
            if (vectors.size() != batch.size()) {
                throw new IllegalStateException(String.format(Locale.ROOT, "embedder [%s] returned %d vectors for %d texts",
                    embedder.name(), vectors.size(), batch.size()));
            }
            for (int i = from; i < to; i++) {
                sink.accept(i, vectors.get(i - from));
            }
        }
    }

    /** Maximal runs of equal {@code relevant} flags (eq. 2-4); runs above θ are split further. */
    private List<Span> bound(TextIndex text, List<Span> sentences, boolean[] relevant) {
        List<Span> out = new ArrayList<>();
        int start = 0;
        for (int i = 0; i < sentences.size(); i++) {
            if (i == sentences.size() - 1 || relevant[i + 1] != relevant[i]) {
                Span run = new Span(sentences.get(start).start(), sentences.get(i).end());
                if (text.size(run) > maxWords()) {
                    out.addAll(splitter.split(text, run));
                } else {
                    out.add(run);
                }
                start = i + 1;
            }
        }
        return out;
    }
}

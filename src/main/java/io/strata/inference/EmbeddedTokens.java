package io.strata.inference;

import io.strata.chunking.ModelTokens;
import io.strata.model.ModelRef;
import org.opensearch.common.CheckedSupplier;

/**
 * {@link ModelTokens} of an embedded embedding model: its own tokenizer through {@link DjlEmbedder}, loaded on first use
 * (so chunkers holding one run on inference threads), its limit from the descriptor's {@code max_tokens} at once. ml-commons
 * models have none: Strata cannot reach their tokenizer ({@link #of} is null for them).
 */
final class EmbeddedTokens implements ModelTokens {
    private final String model;
    private final int limit;
    private final CheckedSupplier<DjlEmbedder, Exception> embedder;
    private volatile int overhead = -1;

    /** @param embedder the loaded model (loads it on first use) */
    EmbeddedTokens(String model, int limit, CheckedSupplier<DjlEmbedder, Exception> embedder) {
        this.model = model;
        this.limit = limit;
        this.embedder = embedder;
    }

    /** The tokens of {@code ref}'s model, or null when it is an ml-commons model. */
    static ModelTokens of(InferenceService service, ModelRef ref) {
        if (!ref.isEmbedded()) {
            return null;
        }
        String model = ref.model();
        return new EmbeddedTokens(model, service.registry().descriptor(model).maxTokens(), () -> service.embedded().embedder(model));
    }

    @Override
    public String model() {
        return model;
    }

    @Override
    public int limit() {
        return limit;
    }

    @Override
    public int embedded(String text) {
        return call(e -> e.passageTokens(text));
    }

    @Override
    public int[] starts(String text) {
        return call(e -> e.tokenStarts(text));
    }

    @Override
    public int overhead() {
        int o = overhead;
        if (o < 0) {
            overhead = o = embedded("");
        }
        return o;
    }

    private <T> T call(java.util.function.Function<DjlEmbedder, T> work) {
        try {
            DjlEmbedder loaded = embedder.get();
            return Privileged.run(() -> work.apply(loaded));
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("[" + model + "] tokenizer failed: " + e.getMessage(), e);
        }
    }

    @Override
    public String toString() {
        return "tokens of [" + model + "]";
    }
}

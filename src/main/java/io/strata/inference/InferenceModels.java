package io.strata.inference;

import io.strata.model.ModelInfo;
import io.strata.model.ModelRef;
import io.strata.chunking.CausalLm;
import io.strata.chunking.ConfigException;
import io.strata.chunking.Embedder;
import io.strata.chunking.StrategyModels;
import io.strata.chunking.TextGenerator;
import io.strata.chunking.BoundaryScorer;

import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * The models a pipeline's (or a preview's) model-guided strategy asks for, resolved against this node's inference layer.
 * Resolution validates at pipeline creation (unknown folder, wrong kind of model, disabled engine → a
 * {@link ConfigException} naming the strategy field); the returned models load on first use and block, so strategies
 * using them run on inference threads ({@link InferenceService#run}).
 */
public final class InferenceModels implements StrategyModels {
    /**
     * A backstop only: an ml-commons call fails on its own after {@link InferenceSettings#REMOTE_TIMEOUT} (at most 10
     * minutes), so this never fires before it.
     */
    static final Duration REMOTE_TIMEOUT = Duration.ofMinutes(11);

    private final InferenceService service;
    private final ModelRef pipelineModel;

    /** @param pipelineModel the model that embeds the chunks (null when the pipeline writes no vectors) */
    public InferenceModels(InferenceService service, ModelRef pipelineModel) {
        this.service = service;
        this.pipelineModel = pipelineModel;
    }

    @Override
    public Embedder embedder(String field, Name name) {
        ModelRef ref = name == null ? (pipelineModel != null ? pipelineModel : service.defaultRef()) : ref(name);
        validate(field, ref);
        return new BlockingEmbedder(service, ref);
    }

    @Override
    public io.strata.chunking.ModelTokens tokens(String field) {
        ModelRef ref = pipelineModel != null ? pipelineModel : service.defaultRef();
        validate(field, ref);
        if (!ref.isEmbedded()) {
            throw new ConfigException(field, String.format(Locale.ROOT,
                "[%s] counts the tokens of the embedding model, and the tokenizer of ml-commons model [%s] is not reachable "
                    + "from Strata: use [max_words] with it, or an embedded model ([model])", field, ref.modelId()));
        }
        return EmbeddedTokens.of(service, ref);
    }

    /** The tokens the limit of every chunk is checked with: the embedding model's, or null for an ml-commons model. */
    public static io.strata.chunking.ModelTokens limitTokens(InferenceService service, ModelRef embeddingModel) {
        return EmbeddedTokens.of(service, embeddingModel != null ? embeddingModel : service.defaultRef());
    }

    @Override
    public CausalLm causalLm(String field, Name name) {
        if (name.modelId() != null) {
            return service.causalLm(ref(name));
        }
        return translate(field, () -> service.lazyCausalLm(field, name.model()));
    }

    @Override
    public TextGenerator generator(String field, Name name) {
        if (name.modelId() == null) {
            throw new ConfigException(field, String.format(Locale.ROOT,
                "[%s] text generation runs on ml-commons models only: name one with a [..._model_id] key", field));
        }
        return service.generator(ref(name));
    }

    @Override
    public BoundaryScorer boundaryScorer(String field, Name name) {
        if (name != null && name.modelId() != null) {
            throw new ConfigException(field, String.format(Locale.ROOT,
                "[%s] boundary models are embedded model folders ([model]); ml-commons models cannot serve them", field));
        }
        return translate(field, () -> service.boundaryScorer(field, name == null ? InferenceService.DEFAULT_BOUNDARY_MODEL : name.model()));
    }

    private static <T> T translate(String field, java.util.function.Supplier<T> resolve) {
        try {
            return resolve.get();
        } catch (ConfigException e) {
            throw e;
        } catch (IllegalArgumentException e) {
            throw new ConfigException(field, e.getMessage());
        }
    }

    static ModelRef ref(Name name) {
        return new ModelRef(name.model(), name.modelId());
    }

    private void validate(String field, ModelRef ref) {
        try {
            service.validate("[" + field + "]", ref);
        } catch (ConfigException e) {
            throw e;
        } catch (IllegalArgumentException e) {
            throw new ConfigException(field, e.getMessage());
        }
    }

    /** An {@link Embedder} over {@link InferenceService#embedNow}: for strategies, on inference threads. */
    private record BlockingEmbedder(InferenceService service, ModelRef ref) implements Embedder {
        @Override
        public String name() {
            return ref.isEmbedded() ? ref.model() : ref.modelId();
        }

        @Override
        public int dimension() {
            if (ref.isEmbedded()) {
                return service.registry().descriptor(ref.model()).dimension();
            }
            var future = new org.opensearch.action.support.PlainActionFuture<ModelInfo>();
            service.describe(ref, future);
            return future.actionGet(REMOTE_TIMEOUT.toMillis()).dimension();
        }

        @Override
        public int maxTokens() {
            return ref.isEmbedded() ? service.registry().descriptor(ref.model()).maxTokens() : Integer.MAX_VALUE;
        }

        @Override
        public List<float[]> embed(List<String> texts, Purpose purpose) {
            try {
                return service.embedNow(ref, texts, purpose, REMOTE_TIMEOUT);
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new IllegalStateException("[" + name() + "] embedding failed: " + e.getMessage(), e);
            }
        }

        @Override
        public int[] tokenCounts(List<String> texts, Purpose purpose) {
            if (!ref.isEmbedded()) {
                throw new UnsupportedOperationException("token counts of ml-commons model [" + ref.modelId() + "] are not known here");
            }
            try {
                DjlEmbedder embedder = service.embedded().embedder(ref.model());
                return Privileged.run(() -> embedder.tokenCounts(texts, purpose));
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
    }
}

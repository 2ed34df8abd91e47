package io.strata.chunking;

import java.util.Locale;

/**
 * Where model-guided strategies get their models. A strategy's configuration names its models with its own keys
 * (e.g. {@code llm} / {@code llm_model_id}); {@link ChunkingConfig} resolves them here once, at pipeline creation,
 * so a missing or unsuitable model fails the pipeline, not the first document. Returned models load lazily. Every
 * method fails by default, so scripted implementations in tests serve only what they script.
 *
 * <p>Implemented by the inference layer (embedded DJL models, ml-commons); tests pass scripted models.
 */
public interface StrategyModels {

    /** A model reference as written in a strategy config: an embedded model folder name or an ml-commons model id. */
    record Name(String model, String modelId) {
        public Name {
            if ((model == null) == (modelId == null)) {
                throw new IllegalArgumentException("exactly one of model and modelId");
            }
        }
    }

    /**
     * The sentence embedder of a strategy.
     *
     * @param field the config field that named it, for error messages
     * @param name  null for the pipeline's embedding model (or the node default when the pipeline embeds nothing)
     */
    default Embedder embedder(String field, Name name) {
        throw unavailable(field, "embedding models");
    }

    /** A causal LM (log-probabilities); throws {@link ConfigException} naming {@code field} when it is unknown or not one. */
    default CausalLm causalLm(String field, Name name) {
        throw unavailable(field, "causal language models");
    }

    /** An LLM that writes text (PIC's document summary); throws {@link ConfigException} when unavailable. */
    default TextGenerator generator(String field, Name name) {
        throw unavailable(field, "text generation models");
    }

    /** BertChunker's frozen encoder + chunk-start head, a model folder with {@code task: boundary_head}; null name = the bundled head. */
    default BoundaryScorer boundaryScorer(String field, Name name) {
        throw unavailable(field, "boundary models");
    }

    /**
     * The tokenizer of the pipeline's embedding model (the node's default when the pipeline embeds nothing), for θ in
     * tokens ({@code max_tokens}); throws {@link ConfigException} naming {@code field} when it has none here (an ml-commons
     * model). Its {@link ModelTokens#limit()} is known without loading the model.
     */
    default ModelTokens tokens(String field) {
        throw unavailable(field, "model tokenizers");
    }

    private static ConfigException unavailable(String field, String what) {
        return new ConfigException(field, String.format(Locale.ROOT, "[%s] no %s are available here", field, what));
    }

    /** For contexts without models (e.g. parsing rule-based strategies only): every request fails clearly. */
    StrategyModels NONE = new StrategyModels() {};
}

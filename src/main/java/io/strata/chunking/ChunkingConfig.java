package io.strata.chunking;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * The one place where chunking configuration (the JSON of a processor's {@code strategy} and
 * {@code granularities}) is parsed and validated. Every error names the field and what is allowed.
 */
public final class ChunkingConfig {
    public static final int DEFAULT_MAX_WORDS = 300;
    public static final int MAX_MAX_WORDS = 8192;
    public static final int MAX_LEVELS = 4;

    /** strategy type → parser of the remaining strategy keys (consumed from the map). */
    private static final Map<String, Function<Options, ChunkingStrategy>> STRATEGIES = new LinkedHashMap<>();

    static {
        STRATEGIES.put(RecursiveStrategy.TYPE, o -> new RecursiveStrategy(o.maxWords()));
        STRATEGIES.put(SentenceStrategy.TYPE, o -> new SentenceStrategy(o.intValue("sentences", 1, 1, 1000), o.maxWords()));
        STRATEGIES.put(ParagraphStrategy.TYPE, o -> new ParagraphStrategy(o.maxWords()));
        STRATEGIES.put(SemanticStrategy.TYPE, SemanticStrategy::parse);
        STRATEGIES.put(PseudoInstructionStrategy.TYPE, PseudoInstructionStrategy::parse);
        STRATEGIES.put(LogitsGuidedStrategy.TYPE, LogitsGuidedStrategy::parse);
        STRATEGIES.put(PerplexityStrategy.TYPE, PerplexityStrategy::parse);
        STRATEGIES.put(MarginSamplingStrategy.TYPE, MarginSamplingStrategy::parse);
        STRATEGIES.put(BoundaryClassifierStrategy.TYPE, BoundaryClassifierStrategy::parse);
        STRATEGIES.put(FixedTokenStrategy.TYPE, FixedTokenStrategy::parse);
    }

    /**
     * A parsed strategy and the unit of its θ: {@code thetaTokens} is the embedding model's tokenizer when the strategy
     * set {@code max_tokens} (θ and θ·g then count its tokens), null when θ counts words ({@code max_words}).
     */
    public record Parsed(ChunkingStrategy strategy, ModelTokens thetaTokens) {}

    private ChunkingConfig() {}

    public static Set<String> strategyTypes() {
        return STRATEGIES.keySet();
    }

    /**
     * Parses {@code strategy} (null means the default recursive strategy with θ = 300 words).
     *
     * @param field the name of the setting, used in error messages
     */
    /**
     * Removes and parses the {@code strategy} of a configuration map: absent means the default (recursive, 300 words),
     * an explicit null is an error — it would otherwise silently mean the default.
     */
    public static Parsed removeStrategy(Map<String, Object> config, StrategyModels models) {
        if (config.containsKey("strategy") && config.get("strategy") == null) {
            throw new ConfigException("strategy", "[strategy] must be an object like {\"type\": \"recursive\", \"max_words\": 300}, "
                + "got [null]; leave it out for the default (recursive, " + DEFAULT_MAX_WORDS + " words)");
        }
        return parse("strategy", config.remove("strategy"), models);
    }

    public static ChunkingStrategy parseStrategy(String field, Object strategy) {
        return parseStrategy(field, strategy, StrategyModels.NONE);
    }

    /**
     * Parses {@code strategy}, resolving the models a model-guided strategy names through {@code models}.
     *
     * @param field the name of the setting, used in error messages
     */
    public static ChunkingStrategy parseStrategy(String field, Object strategy, StrategyModels models) {
        Parsed parsed = parse(field, strategy, models);
        if (parsed.thetaTokens() != null) { // θ's unit would be lost: callers that support max_tokens use removeStrategy
            throw new ConfigException(field + ".max_tokens", String.format(Locale.ROOT,
                "[%s.max_tokens] is not supported here; use [%s.max_words]", field, field));
        }
        return parsed.strategy();
    }

    /** Parses {@code strategy} with the unit of its θ; see {@link #parseStrategy(String, Object, StrategyModels)}. */
    public static Parsed parse(String field, Object strategy, StrategyModels models) {
        if (strategy == null) {
            return new Parsed(new RecursiveStrategy(DEFAULT_MAX_WORDS), null);
        }
        if (!(strategy instanceof Map<?, ?> raw)) {
            throw new ConfigException(field, String.format(Locale.ROOT,
                "[%s] must be an object like {\"type\": \"recursive\", \"max_words\": 300}", field));
        }
        Map<String, Object> map = new LinkedHashMap<>();
        raw.forEach((k, v) -> map.put(String.valueOf(k), v));
        Object type = map.remove("type");
        if (type instanceof String == false) {
            throw new ConfigException(field + ".type", String.format(Locale.ROOT,
                "[%s.type] is required and must be one of %s", field, STRATEGIES.keySet()));
        }
        var parser = STRATEGIES.get(type);
        if (parser == null) {
            throw new ConfigException(field + ".type", String.format(Locale.ROOT,
                "[%s.type] unknown strategy [%s]; supported: %s", field, type, STRATEGIES.keySet()));
        }
        Options options = new Options(field, (String) type, map, models);
        ChunkingStrategy parsed = parser.apply(options);
        options.rejectUnknown();
        return new Parsed(parsed, options.thetaTokens);
    }

    /**
     * Removes and parses {@code format}: absent means {@code text}; anything but one of {@link DocumentFormat#names()}
     * (an explicit null included) fails naming the field and the supported values.
     */
    public static DocumentFormat removeFormat(Map<String, Object> config) {
        if (config.containsKey("format") == false) {
            return DocumentFormat.TEXT;
        }
        Object value = config.remove("format");
        for (DocumentFormat format : DocumentFormat.values()) {
            if (format.value().equals(value)) {
                return format;
            }
        }
        String reason = String.format(Locale.ROOT, "unknown value [%s]; supported: %s", value, DocumentFormat.names());
        throw new ConfigException("format", "[format] " + reason, reason);
    }

    /** Parses {@code granularities} (null means the paper's [0.5, 0.25]; an empty list means parents only). */
    public static List<Double> parseGranularities(String field, Object value, int maxWords) {
        if (value == null) {
            for (double g : MultiGranularChunker.DEFAULT_GRANULARITIES) {
                if (MultiGranularChunker.childWords(maxWords, g) < 1) {
                    throw new ConfigException(field, String.format(Locale.ROOT,
                        "[%s] default %s gives children of less than one word (or token) at θ [%d]: set [%s] "
                            + "(e.g. [] for parents only) or a larger θ", field, MultiGranularChunker.DEFAULT_GRANULARITIES,
                        maxWords, field));
                }
            }
            return MultiGranularChunker.DEFAULT_GRANULARITIES;
        }
        if (!(value instanceof List<?> list)) {
            throw new ConfigException(field, String.format(Locale.ROOT,
                "[%s] must be a list of fractions of max_words in (0, 1), e.g. [0.5, 0.25]; [] for parents only", field));
        }
        if (list.size() > MAX_LEVELS) {
            throw new ConfigException(field, String.format(Locale.ROOT,
                "[%s] allows at most %d child levels, got %d", field, MAX_LEVELS, list.size()));
        }
        List<Double> out = new ArrayList<>();
        for (Object o : list) {
            if (!(o instanceof Number n) || n.doubleValue() <= 0 || n.doubleValue() >= 1 || Double.isNaN(n.doubleValue())) {
                throw new ConfigException(field, String.format(Locale.ROOT,
                    "[%s] values must be numbers in (0, 1) (fractions of max_words), got [%s]", field, o));
            }
            double g = n.doubleValue();
            if (out.isEmpty() == false && g >= out.get(out.size() - 1)) {
                throw new ConfigException(field, String.format(Locale.ROOT,
                    "[%s] must be strictly decreasing (level 1 is the coarsest child), got %s", field, list));
            }
            if (MultiGranularChunker.childWords(maxWords, g) < 1) {
                throw new ConfigException(field, String.format(Locale.ROOT,
                    "[%s] value [%s] gives children of less than one word (or token) at θ [%d]", field, o, maxWords));
            }
            out.add(g);
        }
        return List.copyOf(out);
    }

    /** The keys of one strategy object, consumed as they are read so unknown keys can be reported. */
    static final class Options extends ConfigMap {
        private final String field;
        private final String type;
        private final StrategyModels models;

        Options(String field, String type, Map<String, Object> remaining, StrategyModels models) {
            super(null, field, remaining);
            this.field = field;
            this.type = type;
            this.models = models;
            expect(Set.of("type"));
        }

        /** The context assumed for an ml-commons LLM without {@code llm_max_tokens}: what most served models exceed. */
        static final int DEFAULT_LLM_MAX_TOKENS = 2048;

        /** The embedding model's tokenizer once θ was read from {@code max_tokens}, else null. */
        private ModelTokens thetaTokens;

        /**
         * θ: {@code max_words} (default {@value ChunkingConfig#DEFAULT_MAX_WORDS}) or {@code max_tokens} — exactly one of
         * them —, the latter in the tokens of the pipeline's embedding model, at most {@value ParentSize#MAX_MAX_TOKENS}.
         */
        int maxWords() {
            return theta("max_words", DEFAULT_MAX_WORDS);
        }

        /** θ read from {@code wordsKey} (in words, default {@code defaultWords}) or from {@code max_tokens}. */
        int theta(String wordsKey, int defaultWords) {
            if (has(wordsKey) && has("max_tokens")) {
                remove(wordsKey);
                remove("max_tokens");
                throw new ConfigException(path("max_tokens"), String.format(Locale.ROOT,
                    "[%s.%s] and [%s.max_tokens] cannot be combined: θ is counted either in words or in the embedding model's "
                        + "tokens", field, wordsKey, field));
            }
            if (!has("max_tokens")) {
                remove("max_tokens"); // known, so unknown-key messages list it
                return intValue(wordsKey, defaultWords, 1, MAX_MAX_WORDS);
            }
            ModelTokens tokens = models.tokens(path("max_tokens"));
            // above the model's window a parent is kept whole and scored through its children (ParentSize)
            int theta = intValue("max_tokens", 0, 1, ParentSize.MAX_MAX_TOKENS);
            thetaTokens = tokens;
            return theta;
        }

        /**
         * A model named by {@code modelKey} (embedded folder) or {@code idKey} (ml-commons model id), or null when
         * neither is set.
         */
        StrategyModels.Name modelName(String modelKey, String idKey) {
            Object model = remove(modelKey);
            Object id = remove(idKey);
            if (model != null && id != null) {
                throw new ConfigException(path(modelKey), String.format(Locale.ROOT,
                    "[%s.%s] and [%s.%s] cannot be combined: the first names an embedded model, the second an ml-commons model",
                    field, modelKey, field, idKey));
            }
            for (Object v : new Object[] { model, id }) {
                if (v != null && (!(v instanceof String s) || s.isBlank())) {
                    throw new ConfigException(path(v == model ? modelKey : idKey), String.format(Locale.ROOT,
                        "[%s.%s] must be a model name, got [%s]", field, v == model ? modelKey : idKey, v));
                }
            }
            return model != null ? new StrategyModels.Name((String) model, null)
                : id != null ? new StrategyModels.Name(null, (String) id) : null;
        }

        /** The sentence embedder: {@code model} / {@code model_id} of the strategy, else the pipeline's model. */
        Embedder embedder() {
            return models.embedder(path("model"), modelName("model", "model_id"));
        }

        /**
         * The causal LM named by {@code llm} / {@code llm_model_id}; required. An ml-commons model's context is
         * {@code llm_max_tokens} (default {@value #DEFAULT_LLM_MAX_TOKENS}): Strata cannot read it from the remote
         * model, and long texts are scored in windows of it ({@link WindowedCausalLm}). An embedded model's context is
         * its model.json {@code max_tokens}.
         */
        CausalLm causalLm() {
            StrategyModels.Name name = modelName("llm", "llm_model_id");
            if (name == null) {
                throw new ConfigException(path("llm"), String.format(Locale.ROOT,
                    "[%s] strategy [%s] needs a causal language model: set [%s.llm] (a model folder in config/strata/models) "
                        + "or [%s.llm_model_id] (an ml-commons model)", field, type, field, field));
            }
            if (name.model() != null && has("llm_max_tokens")) {
                throw new ConfigException(path("llm_max_tokens"), String.format(Locale.ROOT,
                    "[%s.llm_max_tokens] applies to [%s.llm_model_id] (an ml-commons model); the context of [%s.llm] is its model.json "
                        + "[max_tokens]", field, field, field));
            }
            if (name.model() != null) {
                return models.causalLm(path("llm"), name);
            }
            int context = intValue("llm_max_tokens", DEFAULT_LLM_MAX_TOKENS, 16, 10_000_000);
            return new WindowedCausalLm(models.causalLm(path("llm_model_id"), name), context);
        }

        StrategyModels models() {
            return models;
        }

        @Override
        public void rejectUnknown() {
            String key = firstUnknown();
            if (key != null) {
                String reason = String.format(Locale.ROOT, "unknown option [%s] for strategy [%s]; supported: %s", key, type, known());
                throw new ConfigException(path(key), "[" + field + "] " + reason, reason);
            }
        }
    }
}

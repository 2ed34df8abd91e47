package io.strata.inference;

import io.strata.chunking.ChunkingConfig;
import io.strata.chunking.ChunkingStrategy;
import io.strata.chunking.ConfigException;
import io.strata.chunking.DocumentFormat;
import io.strata.chunking.ModelTokens;
import io.strata.chunking.MultiGranularChunker;
import io.strata.chunking.ParentSize;
import io.strata.chunking.SentenceSegmenter;
import io.strata.chunking.structure.NestingLimit;
import io.strata.chunking.structure.StructuredLayout;
import io.strata.model.ModelRef;
import org.opensearch.common.CheckedFunction;
import org.opensearch.common.settings.Setting;
import org.opensearch.core.action.ActionListener;

import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Builds chunkers from configuration and runs them, the same way for the ingest processor and {@code _chunk}: parses
 * {@code strategy} and {@code granularities}, resolves the models a strategy names against this node, and runs rule-based
 * strategies on the calling thread (microseconds per kilobyte) and model-guided ones on the inference pool, where they
 * may block on their models. Every chunker built here keeps its chunks within the embedding model's token limit when that
 * model is embedded (its tokenizer is known), and so runs on the inference pool too.
 */
public final class Chunkers {
    /**
     * How deep block quotes and lists (Markdown), lists, tables and pre blocks (HTML) and emphasis and links in a Markdown heading may nest in
     * one document (node setting): a deeper document is a 400 naming this setting, refused while it is read.
     */
    public static final Setting<Integer> MAX_NESTING_DEPTH = Setting.intSetting(NestingLimit.SETTING, NestingLimit.DEFAULT, 1,
        NestingLimit.MAX, Setting.Property.NodeScope);

    private final InferenceService inference;
    private final SentenceSegmenter segmenter;

    public Chunkers(InferenceService inference, SentenceSegmenter segmenter) {
        this.inference = inference;
        this.segmenter = segmenter;
    }

    /**
     * The chunker of a configuration: consumes {@code format}, {@code strategy}, {@code granularities} and {@code parents}
     * from {@code config}.
     *
     * @param embeddingModel the model that embeds the chunks, which embedding-based strategies use when they name none
     *                       (null: the node's default model)
     * @throws ConfigException naming the offending field
     */
    public MultiGranularChunker parse(Map<String, Object> config, ModelRef embeddingModel) {
        DocumentFormat format = ChunkingConfig.removeFormat(config);
        ChunkingConfig.Parsed parsed = ChunkingConfig.removeStrategy(config, new InferenceModels(inference, embeddingModel));
        ChunkingStrategy strategy = parsed.strategy();
        if (parsed.thetaTokens() != null && format != DocumentFormat.TEXT) {
            throw new ConfigException("strategy.max_tokens", String.format(Locale.ROOT,
                "[strategy.max_tokens] is supported with [format] text only, got [%s]: use [strategy.max_words] (no chunk "
                    + "exceeds the embedding model's token limit either way)", format.value()));
        }
        List<Double> granularities = ChunkingConfig.parseGranularities("granularities", config.remove("granularities"),
            strategy.maxWords());
        MultiGranularChunker chunker = new MultiGranularChunker(strategy, granularities, segmenter, StructuredLayout.of(format,
            inference == null ? NestingLimit.DEFAULTS : inference.nestingLimit()));
        ModelTokens limit = parsed.thetaTokens() != null ? parsed.thetaTokens()
            : InferenceModels.limitTokens(inference, embeddingModel);
        ParentSize parents = ParentSize.parse(config.remove(ParentSize.FIELD));
        return limit == null ? chunker : chunker.withTokens(limit, parsed.thetaTokens() != null).withParentSize(parents);
    }

    /** Runs {@code work} with {@code chunker}: inline when its strategy is rule-based, on the inference pool otherwise. */
    public static <T> void run(InferenceService inference, MultiGranularChunker chunker,
                               CheckedFunction<MultiGranularChunker, T, Exception> work, ActionListener<T> listener) {
        if (chunker.usesModels()) {
            inference.run(() -> work.apply(chunker), listener);
            return;
        }
        T result;
        try {
            result = work.apply(chunker);
        } catch (Exception e) {
            listener.onFailure(e);
            return;
        } catch (StackOverflowError e) {
            // a task boundary of Strata's on the caller's (write, analyze) thread: see InferenceExecutor#contained
            listener.onFailure(InferenceExecutor.contained(e));
            return;
        }
        listener.onResponse(result);
    }

    public InferenceService inference() {
        return inference;
    }
}

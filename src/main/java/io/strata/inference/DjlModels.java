package io.strata.inference;

import io.strata.model.ModelRef;
import ai.djl.Device;
import ai.djl.Model;
import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import org.opensearch.common.xcontent.json.JsonXContent;
import org.opensearch.core.xcontent.DeprecationHandler;
import org.opensearch.core.xcontent.NamedXContentRegistry;
import org.opensearch.core.xcontent.XContentParser;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Loads a model folder's tokenizer and network through DJL, the same way for every kind of model. */
final class DjlModels {
    private DjlModels() {}

    /**
     * The folder's Hugging Face tokenizer; never truncating or padding (callers count and cut tokens themselves).
     *
     * @param specialTokens whether the tokenizer adds the model's special tokens ([CLS]/[SEP]); causal LMs add their BOS
     *                      themselves so offsets stay those of the text
     */
    static HuggingFaceTokenizer tokenizer(ModelDescriptor d, boolean specialTokens) throws java.io.IOException {
        return HuggingFaceTokenizer.builder()
            .optTokenizerPath(d.dir().resolve(d.tokenizerFile()))
            .optAddSpecialTokens(specialTokens)
            .optTruncation(false)
            .optPadding(false)
            .build();
    }

    /** Pre-tokenizers that split at whitespace; after one of them, those that only split further. */
    private static final Set<String> WHITESPACE_SPLITS = Set.of("BertPreTokenizer", "Whitespace", "WhitespaceSplit");
    private static final Set<String> FURTHER_SPLITS = Set.of("BertPreTokenizer", "Whitespace", "WhitespaceSplit", "Punctuation",
        "Digits");
    /** Normalizers that rewrite character by character (BERT's also puts spaces around CJK characters: more splits). */
    private static final Set<String> PER_CHARACTER = Set.of("BertNormalizer", "Lowercase", "NFC", "NFD", "NFKC", "NFKD",
        "StripAccents", "Strip");

    /**
     * Whether a text's tokens under the Hugging Face tokenizer file are the sum of its whitespace-separated words' tokens:
     * its pre-tokenizer splits at whitespace first, its normalizer works character by character, and none of its added
     * tokens holds whitespace. Read from the file's {@code normalizer}, {@code pre_tokenizer} and {@code added_tokens}
     * (the vocabulary is skipped unread); anything else, or a file that cannot be read so, answers false.
     */
    static boolean splitsWordByWord(Path tokenizerFile) {
        Object normalizer = null;
        Object preTokenizer = null;
        Object addedTokens = null;
        try (InputStream in = Files.newInputStream(tokenizerFile);
             XContentParser parser = JsonXContent.jsonXContent.createParser(NamedXContentRegistry.EMPTY,
                 DeprecationHandler.IGNORE_DEPRECATIONS, in)) {
            if (parser.nextToken() != XContentParser.Token.START_OBJECT) {
                return false;
            }
            while (parser.nextToken() == XContentParser.Token.FIELD_NAME) {
                String field = parser.currentName();
                XContentParser.Token value = parser.nextToken();
                switch (field) {
                    case "normalizer" -> normalizer = value == XContentParser.Token.VALUE_NULL ? null : parser.mapOrdered();
                    case "pre_tokenizer" -> preTokenizer = value == XContentParser.Token.VALUE_NULL ? null : parser.mapOrdered();
                    case "added_tokens" -> addedTokens = value == XContentParser.Token.START_ARRAY ? parser.list() : null;
                    default -> parser.skipChildren();
                }
            }
        } catch (IOException | RuntimeException e) {
            return false;
        }
        if (!(preTokenizer instanceof Map<?, ?> pre) || !perCharacter(normalizer)) {
            return false;
        }
        List<?> steps = "Sequence".equals(pre.get("type")) && pre.get("pretokenizers") instanceof List<?> l ? l : List.of(pre);
        for (int i = 0; i < steps.size(); i++) {
            if (!(steps.get(i) instanceof Map<?, ?> step) || !(i == 0 ? WHITESPACE_SPLITS : FURTHER_SPLITS).contains(step.get("type"))) {
                return false;
            }
        }
        if (addedTokens instanceof List<?> tokens) {
            for (Object t : tokens) {
                if (!(t instanceof Map<?, ?> token) || !(token.get("content") instanceof String content)
                    || content.chars().anyMatch(Character::isWhitespace)) {
                    return false;
                }
            }
        }
        return !steps.isEmpty();
    }

    private static boolean perCharacter(Object normalizer) {
        if (normalizer == null) {
            return true;
        }
        if (!(normalizer instanceof Map<?, ?> n)) {
            return false;
        }
        if ("Sequence".equals(n.get("type")) && n.get("normalizers") instanceof List<?> parts) {
            return parts.stream().allMatch(DjlModels::perCharacter);
        }
        return PER_CHARACTER.contains(n.get("type"));
    }

    /** Builds a loaded model from its tokenizer and network. */
    interface Assembly<M> {
        M assemble(HuggingFaceTokenizer tokenizer, Model network);
    }

    /**
     * Opens the folder's tokenizer and network and hands both to {@code assembly}; if the network fails to load or the
     * assembly throws, whatever was opened is closed before the failure propagates (native memory is not left behind).
     */
    static <M> M open(ModelDescriptor d, Device device, int intraOpThreads, boolean specialTokens, Assembly<M> assembly)
        throws java.io.IOException {
        HuggingFaceTokenizer tokenizer = tokenizer(d, specialTokens);
        Model model = null;
        try {
            model = network(d, device, intraOpThreads);
            return assembly.assemble(tokenizer, model);
        } catch (RuntimeException | Error e) {
            tokenizer.close();
            if (model != null) {
                model.close();
            }
            throw e;
        }
    }

    /**
     * The network on {@code device}: ONNX Runtime with one inter-op and {@code intraOpThreads} intra-op threads, or
     * TorchScript. A failure closes what was opened and names the model and file.
     */
    static Model network(ModelDescriptor d, Device device, int intraOpThreads) {
        Model model = Model.newInstance(d.name(), device, d.engine().djlName);
        Map<String, String> options = d.engine() == ModelDescriptor.Engine.ONNX
            ? Map.of("interOpNumThreads", "1", "intraOpNumThreads", Integer.toString(intraOpThreads))
            : Map.of();
        try {
            model.load(d.dir(), d.modelFile(), options);
            return model;
        } catch (Exception | Error e) {
            model.close();
            // the engine's message may name the file by its absolute path: name the folder as the docs do
            String message = String.valueOf(e.getMessage()).replace(d.dir().toString(), ModelRef.shownFolder(d.name()));
            throw new IllegalArgumentException("model [" + d.name() + "] failed to load [" + d.modelFile() + "]: " + message, e);
        }
    }
}

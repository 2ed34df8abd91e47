package io.strata.inference;

import io.strata.model.ModelRef;
import ai.djl.Device;
import ai.djl.Model;
import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;

import java.util.Map;

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

package io.strata.inference;

import ai.djl.Device;
import ai.djl.Model;
import ai.djl.huggingface.tokenizers.Encoding;
import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import ai.djl.huggingface.tokenizers.jni.CharSpan;
import ai.djl.inference.Predictor;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.translate.NoopTranslator;
import io.strata.chunking.CausalLm;

import java.io.Closeable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;

/**
 * A decoder-only language model run by DJL (ONNX Runtime, or PyTorch for TorchScript) with its Hugging Face
 * tokenizer. The model maps {@code input_ids} [1, T] to {@code logits} [1, T, V]; log-softmax runs in plain Java on
 * the output array (ONNX Runtime NDArrays have few operators, and DJL would otherwise fall back to another engine).
 *
 * <p>Every sequence starts with the descriptor's {@code bos_token} when it has one. Texts longer than the context
 * ({@code max_tokens}) slide: each window advances by half its text part, so every token keeps at least half a window
 * of preceding context and is scored exactly once. A prompt stays at the start of every window; a prompt longer
 * than half the context (when the text does not fit beside it) keeps only its last tokens.
 *
 * <p>Thread-safe: the engine session is shared, predictors come from a pool.
 */
public final class DjlCausalLm implements CausalLm, Closeable {
    private final ModelDescriptor descriptor;
    private final HuggingFaceTokenizer tokenizer;
    private final Model model;
    private final BlockingQueue<Predictor<NDList, NDList>> predictors;
    private final long eosId;
    private final long[] bos;

    private DjlCausalLm(ModelDescriptor descriptor, HuggingFaceTokenizer tokenizer, Model model, int parallelism) {
        this.descriptor = descriptor;
        this.tokenizer = tokenizer;
        this.model = model;
        this.eosId = tokenId(descriptor.eosToken(), "eos_token");
        this.bos = descriptor.bosToken() == null ? new long[0] : new long[] {tokenId(descriptor.bosToken(), "bos_token")};
        if (descriptor.maxTokens() < 4) {
            throw new IllegalArgumentException(err("[max_tokens] must be at least 4 for a causal LM"));
        }
        this.predictors = new ArrayBlockingQueue<>(parallelism);
        for (int i = 0; i < parallelism; i++) {
            predictors.add(model.newPredictor(new NoopTranslator()));
        }
    }

    /**
     * Loads the model. Call through {@link Privileged} inside the node.
     *
     * @param parallelism    how many threads may run it at once (one predictor each)
     * @param intraOpThreads engine threads per call; parallelism × intraOpThreads should not exceed the cores
     */
    public static DjlCausalLm load(ModelDescriptor d, Device device, int parallelism, int intraOpThreads) throws Exception {
        if (!d.isCausalLm()) {
            throw new IllegalArgumentException("model [" + d.name() + "] is not a causal LM (its model.json has no [task] [causal_lm])");
        }
        // the BOS token is ours to add, so offsets stay those of the text
        return DjlModels.open(d, device, intraOpThreads, false, (tokenizer, model) -> new DjlCausalLm(d, tokenizer, model, parallelism));
    }

    public ModelDescriptor descriptor() {
        return descriptor;
    }

    @Override
    public String name() {
        return descriptor.name();
    }

    /** The model's tokens of {@code text}: ids and their character spans in {@code text}. */
    record Tokens(long[] ids, int[] starts, int[] ends) {
        int size() {
            return ids.length;
        }
    }

    Tokens tokenize(String text) {
        if (text.isEmpty()) {
            return new Tokens(new long[0], new int[0], new int[0]);
        }
        Encoding e = tokenizer.encode(text, false, false);
        CharSpan[] spans = e.getCharTokenSpans();
        int[] utf16 = utf16Offsets(text);
        int[] starts = new int[spans.length];
        int[] ends = new int[spans.length];
        for (int i = 0; i < spans.length; i++) {
            starts[i] = spans[i] == null ? (i == 0 ? 0 : ends[i - 1]) : at(utf16, spans[i].getStart());
            ends[i] = spans[i] == null ? starts[i] : at(utf16, spans[i].getEnd());
        }
        return new Tokens(e.getIds(), starts, ends);
    }

    /**
     * The tokenizer's offsets count Unicode code points; Java strings count UTF-16 units. Null when they agree
     * (no character outside the Basic Multilingual Plane), else code point index → UTF-16 index.
     */
    static int[] utf16Offsets(String text) {
        int codePoints = text.codePointCount(0, text.length());
        if (codePoints == text.length()) {
            return null;
        }
        int[] map = new int[codePoints + 1];
        for (int cp = 0, i = 0; cp <= codePoints; cp++) {
            map[cp] = i;
            if (i < text.length()) {
                i += Character.charCount(text.codePointAt(i));
            }
        }
        return map;
    }

    private static int at(int[] utf16, int codePointOffset) {
        return utf16 == null ? codePointOffset : utf16[Math.min(codePointOffset, utf16.length - 1)];
    }

    @Override
    public TokenLogProbs logProbs(String text) {
        Tokens t = tokenize(text);
        int n = t.size();
        double[] logProbs = new double[n];
        Arrays.fill(logProbs, Double.NaN);
        long[] body = t.ids();
        rows(bos, body, (j, logits, offset, vocab) -> {
            if (j + 1 < n) {
                logProbs[j + 1] = logits[offset + (int) body[j + 1]] - logSumExp(logits, offset, vocab);
            }
        });
        return new TokenLogProbs(t.starts(), t.ends(), logProbs);
    }

    /**
     * Each position reads the row after the last token that ends at or before it; a position inside a token (possible
     * with multi-byte merges, never with byte-level vocabularies at character boundaries) thus ignores that token.
     */
    @Override
    public double[] eosProbabilities(String prompt, String text, int[] positions) {
        Tokens t = tokenize(text);
        long[] prefix = concat(bos, tokenize(prompt).ids());
        int n = t.size();
        double[] eosLogProb = new double[n + 1]; // index j + 1: after token j
        Arrays.fill(eosLogProb, Double.NaN);
        rows(prefix, t.ids(), (j, logits, offset, vocab) -> eosLogProb[j + 1] = logits[offset + (int) eosId] - logSumExp(logits, offset, vocab));
        double[] out = new double[positions.length];
        int covered = 0; // tokens ending at or before the current position
        int previous = 0;
        for (int i = 0; i < positions.length; i++) {
            int p = positions[i];
            if (p <= 0 || p > text.length() || p < previous) {
                throw new IllegalArgumentException(err(String.format(Locale.ROOT,
                    "EOS positions must be ascending character offsets in (0, %d], got [%d] after [%d]", text.length(), p, previous)));
            }
            previous = p;
            while (covered < n && t.ends()[covered] <= p) {
                covered++;
            }
            out[i] = Math.exp(eosLogProb[covered]);
        }
        return out;
    }

    @Override
    public double[] continuationLogProbs(String prompt, List<String> candidates) {
        long[] prefix = concat(bos, tokenize(descriptor.asChat(prompt)).ids());
        List<long[]> bodies = new ArrayList<>(candidates.size());
        boolean singleTokens = true;
        for (String c : candidates) {
            long[] ids = tokenize(c).ids();
            bodies.add(ids);
            singleTokens &= ids.length == 1;
        }
        double[] out = new double[candidates.size()];
        if (singleTokens && prefix.length > 0) {
            // one forward pass over the prompt answers every single-token candidate (Meta-Chunking's "1" / "2")
            rows(prefix, new long[0], (j, logits, offset, vocab) -> {
                double lse = logSumExp(logits, offset, vocab);
                for (int i = 0; i < out.length; i++) {
                    out[i] = logits[offset + (int) bodies.get(i)[0]] - lse;
                }
            });
            return out;
        }
        for (int i = 0; i < out.length; i++) {
            long[] body = bodies.get(i);
            double[] sum = {prefix.length == 0 && body.length > 0 ? Double.NaN : 0};
            rows(prefix, body, (j, logits, offset, vocab) -> {
                if (j + 1 < body.length) {
                    sum[0] += logits[offset + (int) body[j + 1]] - logSumExp(logits, offset, vocab);
                }
            });
            out[i] = sum[0];
        }
        return out;
    }

    /** Receives the logits row that predicts the token after body token {@code j} ({@code j == -1}: after the prefix). */
    private interface RowConsumer {
        void accept(int j, float[] logits, int offset, int vocab);
    }

    /**
     * Runs {@code prefix + body} through the model, sliding over the body when it does not fit, and hands every row
     * j = -1 (only with a non-empty prefix) .. body.length - 1 to {@code consumer} exactly once, in order.
     */
    private void rows(long[] prefix, long[] body, RowConsumer consumer) {
        int context = descriptor.maxTokens();
        int n = body.length;
        if (prefix.length + n > context && prefix.length > context / 2) {
            prefix = keepTail(prefix, Math.max(context / 2, context - n));
        }
        int p = prefix.length;
        int window = context - p;
        int stride = Math.max(1, window / 2);
        int end = 0;
        boolean first = true;
        while (first || end < n) {
            int newEnd = Math.min(n, first ? window : end + stride);
            int begin = Math.max(0, newEnd - window);
            int len = p + newEnd - begin;
            if (len == 0) {
                return;
            }
            long[] seq = new long[len];
            System.arraycopy(prefix, 0, seq, 0, p);
            System.arraycopy(body, begin, seq, p, newEnd - begin);
            Logits out = forward(seq);
            for (int j = first ? -1 : end; j < newEnd; j++) {
                int row = p + j - begin;
                if (row >= 0) {
                    consumer.accept(j, out.values, row * out.vocab, out.vocab);
                }
            }
            end = newEnd;
            first = false;
        }
    }

    /** Keeps the BOS token and the last tokens of a too-long prefix. */
    private long[] keepTail(long[] prefix, int max) {
        long[] kept = new long[max];
        System.arraycopy(bos, 0, kept, 0, bos.length);
        System.arraycopy(prefix, prefix.length - (max - bos.length), kept, bos.length, max - bos.length);
        return kept;
    }

    private record Logits(float[] values, int vocab) {}

    private Logits forward(long[] ids) {
        Predictor<NDList, NDList> predictor = takePredictor();
        try (NDManager manager = model.getNDManager().newSubManager()) {
            NDArray input = manager.create(ids, new Shape(1, ids.length));
            input.setName("input_ids");
            NDArray logits = predictor.predict(new NDList(input)).get(0);
            Shape shape = logits.getShape();
            if (shape.dimension() != 3 || shape.get(1) != ids.length) {
                throw new IllegalStateException(err("returned logits of shape " + shape + " for " + ids.length
                    + " tokens; a causal LM must return [1, T, vocabulary]"));
            }
            return new Logits(logits.toFloatArray(), (int) shape.get(2));
        } catch (IllegalStateException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(err("inference failed: " + e.getMessage()), e);
        } finally {
            predictors.add(predictor);
        }
    }

    static double logSumExp(float[] logits, int offset, int vocab) {
        float max = Float.NEGATIVE_INFINITY;
        for (int i = offset; i < offset + vocab; i++) {
            max = Math.max(max, logits[i]);
        }
        double sum = 0;
        for (int i = offset; i < offset + vocab; i++) {
            sum += Math.exp(logits[i] - max);
        }
        return max + Math.log(sum);
    }

    private long tokenId(String token, String key) {
        long[] ids = tokenizer.encode(token, false, false).getIds();
        if (ids.length != 1) {
            throw new IllegalArgumentException(err("[" + key + "] [" + token + "] is not a single token of its tokenizer (it encodes to "
                + ids.length + " tokens)"));
        }
        return ids[0];
    }

    private static long[] concat(long[] a, long[] b) {
        long[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    private String err(String message) {
        return "model [" + descriptor.name() + "] " + message;
    }

    private Predictor<NDList, NDList> takePredictor() {
        try {
            return predictors.take();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(err("interrupted while waiting for the model"), e);
        }
    }

    @Override
    public void close() {
        List<Predictor<NDList, NDList>> all = new ArrayList<>();
        predictors.drainTo(all);
        all.forEach(Predictor::close);
        model.close();
        tokenizer.close();
    }
}

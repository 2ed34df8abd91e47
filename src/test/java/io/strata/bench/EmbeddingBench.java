package io.strata.bench;

import ai.djl.Device;
import ai.djl.huggingface.tokenizers.Encoding;
import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtSession;
import io.strata.chunking.ChunkedParent;
import io.strata.chunking.Embedder;
import io.strata.chunking.MultiGranularChunker;
import io.strata.chunking.RecursiveStrategy;
import io.strata.chunking.SentenceSegmenter;
import io.strata.chunking.TestTexts;
import io.strata.inference.DjlEmbedder;
import io.strata.inference.ModelDescriptor;

import java.nio.LongBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Texts/s through Strata's embedding path ({@link DjlEmbedder}: tokenizer, DJL, ONNX Runtime, pooling)
 * against raw ONNX Runtime ({@code OrtSession.run} on the same model, same tokenizer, CLS pooling), on the
 * same texts — the chunks (parents θ=300 and children) of Emma's first chapters — for batch sizes and
 * caller threads, in one run. {@code bin/strata-bench embedding}.
 */
public final class EmbeddingBench {
    public static void main(String[] args) throws Exception {
        Path dir = Path.of(System.getProperty("strata.models.dir", "target/models")).resolve("bge-small-en-v15-q");
        ModelDescriptor d = ModelDescriptor.read("bge-small-en-v15-q", dir);
        List<String> texts = new ArrayList<>();
        var chunker = new MultiGranularChunker(new RecursiveStrategy(300), MultiGranularChunker.DEFAULT_GRANULARITIES,
            SentenceSegmenter.english());
        for (ChunkedParent p : chunker.chunk(TestTexts.emma())) {
            p.all().forEach(c -> texts.add(c.text()));
        }
        int cores = Runtime.getRuntime().availableProcessors();
        // DJL creates the process-wide ONNX Runtime environment with its own options; the baseline reuses it
        DjlEmbedder.load(d, Device.cpu(), 1, 1, 1).close();
        System.out.printf(Locale.ROOT, "model %s, %d texts (Emma ch. 1-3, parents θ=300 + children), %d cores%n", d.name(), texts.size(),
            cores);
        System.out.printf(Locale.ROOT, "%-6s %-8s %14s %14s %7s%n", "batch", "threads", "strata text/s", "raw ORT text/s", "ratio");
        try (HuggingFaceTokenizer tokenizer = HuggingFaceTokenizer.builder().optTokenizerPath(dir.resolve(d.tokenizerFile()))
            .optTruncation(true).optMaxLength(d.maxTokens()).optPadding(false).build()) {
            for (int threads : new int[] { 1, cores }) {
                int intra = Math.max(1, cores / threads);
                OrtEnvironment env = OrtEnvironment.getEnvironment();
                OrtSession.SessionOptions options = new OrtSession.SessionOptions();
                options.setIntraOpNumThreads(intra);
                options.setInterOpNumThreads(1);
                try (OrtSession session = env.createSession(dir.resolve(d.modelFile()).toString(), options)) {
                    for (int batch : new int[] { 1, 8, 32 }) {
                        try (DjlEmbedder strata = DjlEmbedder.load(d, Device.cpu(), threads, intra, batch)) {
                            Runner strataRun = part -> strata.embed(part, Embedder.Purpose.PASSAGE).size();
                            Runner rawRun = part -> raw(env, session, tokenizer, part, batch);
                            double s = 0;
                            double r = 0;
                            for (int round = 0; round < 3; round++) { // round 0 warms up; best of the rest
                                double si = rate(strataRun, texts, threads);
                                double ri = rate(rawRun, texts, threads);
                                if (round > 0) {
                                    s = Math.max(s, si);
                                    r = Math.max(r, ri);
                                }
                            }
                            System.out.printf(Locale.ROOT, "%-6d %-8d %14.1f %14.1f %7.2f%n", batch, threads, s, r, s / r);
                        }
                    }
                }
            }
        }
    }

    interface Runner {
        int run(List<String> texts) throws Exception;
    }

    /** Texts/s with the texts split evenly over {@code threads} callers. */
    private static double rate(Runner runner, List<String> texts, int threads) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            long start = System.nanoTime();
            List<Future<Integer>> parts = new ArrayList<>();
            int per = (texts.size() + threads - 1) / threads;
            for (int t = 0; t < threads; t++) {
                List<String> part = texts.subList(Math.min(texts.size(), t * per), Math.min(texts.size(), (t + 1) * per));
                parts.add(pool.submit(() -> runner.run(part)));
            }
            int n = 0;
            for (Future<Integer> f : parts) {
                n += f.get();
            }
            return n / ((System.nanoTime() - start) / 1e9);
        } finally {
            pool.shutdown();
        }
    }

    /** The baseline: the same batches (sorted by length, like Strata's), straight through OrtSession. */
    private static int raw(OrtEnvironment env, OrtSession session, HuggingFaceTokenizer tokenizer, List<String> texts, int batch)
        throws Exception {
        long[][] ids = new long[texts.size()][];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = tokenizer.encode(texts.get(i)).getIds();
        }
        Integer[] order = new Integer[ids.length];
        for (int i = 0; i < order.length; i++) {
            order[i] = i;
        }
        Arrays.sort(order, (a, b) -> Integer.compare(ids[a].length, ids[b].length));
        int done = 0;
        for (int from = 0; from < order.length; from += batch) {
            int rows = Math.min(batch, order.length - from);
            int len = 0;
            for (int b = 0; b < rows; b++) {
                len = Math.max(len, ids[order[from + b]].length);
            }
            long[] in = new long[rows * len];
            long[] mask = new long[rows * len];
            for (int b = 0; b < rows; b++) {
                long[] row = ids[order[from + b]];
                System.arraycopy(row, 0, in, b * len, row.length);
                Arrays.fill(mask, b * len, b * len + row.length, 1L);
            }
            long[] shape = { rows, len };
            try (OnnxTensor a = OnnxTensor.createTensor(env, LongBuffer.wrap(in), shape);
                 OnnxTensor m = OnnxTensor.createTensor(env, LongBuffer.wrap(mask), shape);
                 OnnxTensor t = OnnxTensor.createTensor(env, LongBuffer.wrap(new long[rows * len]), shape);
                 OrtSession.Result result = session.run(Map.of("input_ids", a, "attention_mask", m, "token_type_ids", t))) {
                float[][][] hidden = (float[][][]) result.get(0).getValue();
                for (float[][] row : hidden) {
                    float[] cls = row[0];
                    double norm = 0;
                    for (float x : cls) {
                        norm += x * x;
                    }
                    done += norm > 0 ? 1 : 0;
                }
            }
        }
        return done;
    }

    private EmbeddingBench() {}
}

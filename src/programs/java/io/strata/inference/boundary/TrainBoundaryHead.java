package io.strata.inference.boundary;

import io.strata.model.TokenEncoder;
import ai.djl.Device;
import io.strata.chunking.BoundaryClassifierStrategy;
import io.strata.demo.RunArgs;
import io.strata.chunking.ChunkingConfig;
import io.strata.chunking.Segmentation;
import io.strata.chunking.SentenceSegmenter;
import io.strata.chunking.TextIndex;
import io.strata.inference.DjlEmbedder;
import io.strata.inference.DjlTokenEncoder;
import io.strata.inference.ModelDescriptor;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;

/**
 * Trains BertChunker's head (Luo §2.3–2.4) on the frozen bundled encoder: {@code bin/strata-train-boundary}.
 *
 * <p>Lives in the test sources: it is a build-time tool (it reads {@code /usr/share/doc} and writes into
 * {@code config/models}), not something a node runs, and it shares {@link MixedDocuments} with the tests.
 *
 * <p>Differences from the paper: only the head is trained (the paper fine-tunes the whole BERT; a frozen encoder keeps the
 * bundled embedding model shared and the training within minutes on two CPU cores); it is logistic regression with Adam
 * and balanced class weights (starts are ~1% of tokens); after training the bias is shifted so that the paper's t_c = 0
 * (p = 0.5) is the F1-best threshold on a validation part of the TRAINING documents, so the strategy's default threshold
 * is the head's tuned operating point. Held-out documents come from other packages' files and are used only for the
 * final report.
 *
 * <p>Arguments (all optional): {@code out=DIR train=N heldout=N window=TOKENS epochs=N seed=N
 * context=K} (K: context tokens of {@link BoundaryHead#features}, 0 for h_t alone).
 */
public final class TrainBoundaryHead {
    public static final String ENCODER = "bge-small-en-v15-q";
    private static final SentenceSegmenter SEGMENTER = SentenceSegmenter.english();

    public static void main(String[] args) throws Exception {
        RunArgs a = RunArgs.parse(args, "out", "train", "heldout", "window", "epochs", "seed", "context");
        int trainDocs = a.integer("train", 1500);
        int heldOutDocs = a.integer("heldout", 300);
        int window = a.integer("window", 256);
        int context = a.integer("context", 16);
        long seed = a.longValue("seed", 42);
        int epochs = a.integer("epochs", 30);
        long t0 = System.nanoTime();

        List<MixedDocuments.Source> trainSources = MixedDocuments.sources(MixedDocuments.DOC_ROOT, false);
        List<MixedDocuments.Source> heldOutSources = MixedDocuments.sources(MixedDocuments.DOC_ROOT, true);
        log("sources: %d train files (%d sentences), %d held-out files (%d sentences)", trainSources.size(),
            sentences(trainSources), heldOutSources.size(), sentences(heldOutSources));
        List<MixedDocuments.Mixed> train = MixedDocuments.mix(trainSources, trainDocs, 4, seed);
        List<MixedDocuments.Mixed> heldOut = MixedDocuments.mix(heldOutSources, heldOutDocs, 4, seed + 1);

        Path models = Path.of(System.getProperty("strata.models.dir", "target/models"));
        try (DjlEmbedder embedder = DjlEmbedder.load(ModelDescriptor.read(ENCODER, models.resolve(ENCODER)), Device.cpu(), 1, 1,
            Runtime.getRuntime().availableProcessors())) {
            TokenEncoder encoder = new DjlTokenEncoder(embedder, window + 2);
            // features: every token of every training document (the tail past one window is cut, as the paper's 255)
            List<float[]> x = new ArrayList<>();
            List<Boolean> y = new ArrayList<>();
            List<Integer> docOf = new ArrayList<>();
            for (int d = 0; d < train.size(); d++) {
                MixedDocuments.Mixed doc = train.get(d);
                TokenEncoder.Tokens tokens = encoder.encode(doc.text());
                float[][] features = BoundaryHead.features(tokens.hidden(), context);
                boolean[] sentenceStart = sentenceStartTokens(doc.text(), tokens);
                for (int t = 0; t < tokens.size(); t++) {
                    if (!sentenceStart[t]) {
                        continue; // the strategy reads the head at sentence starts only
                    }
                    x.add(features[t]);
                    y.add(Arrays.binarySearch(doc.switches(), tokens.starts()[t]) >= 0);
                    docOf.add(d);
                }
                if ((d + 1) % 250 == 0) {
                    log("encoded %d/%d training documents (%d tokens)", d + 1, train.size(), x.size());
                }
            }
            int validationFrom = (int) (train.size() * 0.85);
            int split = docOf.indexOf(validationFrom);
            long positives = y.stream().filter(b -> b).count();
            log("training sentence-start tokens: %d (%d chunk starts), validation from token %d; encoding took %d s", x.size(), positives, split,
                (System.nanoTime() - t0) / 1_000_000_000);

            float[][] features = x.toArray(new float[0][]);
            boolean[] labels = new boolean[y.size()];
            for (int i = 0; i < labels.length; i++) {
                labels[i] = y.get(i);
            }
            LogisticHead fitted = LogisticHead.fit(features, labels, split, epochs, seed);
            double shift = fitted.bestThresholdLogit(features, labels, split, features.length);
            log("validation: F1-best logit threshold %.3f, folded into the bias", shift);
            BoundaryHead head = new BoundaryHead("bertchunker-bge-small", ENCODER, window, context, fitted.weights(), fitted.bias() - shift);

            Map<String, Object> report = new LinkedHashMap<>();
            report.put("data", "/usr/share/doc READMEs and *.txt of this machine's Debian packages, 4 sources per mixed document");
            report.put("train_documents", validationFrom);
            report.put("validation_documents", train.size() - validationFrom);
            report.put("train_sentence_starts", split);
            report.put("train_chunk_starts", countTrue(labels, 0, split));
            report.put("seed", seed);
            report.put("epochs", epochs);
            // held-out: the real strategy (sliding windows, word snapping), θ high enough never to split
            HeadBoundaryScorer scorer = new HeadBoundaryScorer(encoder, head);
            BoundaryClassifierStrategy strategy = new BoundaryClassifierStrategy(scorer, 0.5, ChunkingConfig.MAX_MAX_WORDS);
            List<Segmentation.Evidence> evidence = new ArrayList<>();
            for (MixedDocuments.Mixed doc : heldOut) {
                evidence.add(strategy.segment(new TextIndex(doc.text(), SentenceSegmenter.english())).evidence().get(0));
            }
            for (double threshold : new double[] { 0.3, 0.5, 0.7, 0.9 }) {
                double[] prf = prf(heldOut, evidence, threshold);
                log("held-out (%d documents, %d switches) threshold %.1f: P %.3f R %.3f F1 %.3f", heldOut.size(), heldOut.size() * 3,
                    threshold, prf[0], prf[1], prf[2]);
                if (threshold == 0.5) {
                    report.put("heldout_documents", heldOut.size());
                    report.put("heldout_precision", round(prf[0]));
                    report.put("heldout_recall", round(prf[1]));
                    report.put("heldout_f1", round(prf[2]));
                }
            }
            Path out = Path.of(a.string("out", "config/models/bertchunker-bge-small"));
            head.write(out, "BertChunker head (linear, chunk-start logit) over the frozen bge-small-en-v1.5 int8 encoder; "
                + "trained by bin/strata-train-boundary", report);
            log("wrote %s in %d s total", out, (System.nanoTime() - t0) / 1_000_000_000);
        }
    }

    /** Whether each token is the first token of a sentence (but the first sentence), by the strategy's segmenter. */
    static boolean[] sentenceStartTokens(String text, TokenEncoder.Tokens tokens) {
        boolean[] out = new boolean[tokens.size()];
        int t = 0;
        for (int b : SEGMENTER.boundaries(text)) {
            while (b < text.length() && Character.isWhitespace(text.charAt(b))) {
                b++;
            }
            while (t < tokens.size() && tokens.starts()[t] < b) {
                t++;
            }
            if (b > 0 && t < tokens.size()) {
                out[t] = true;
            }
        }
        return out;
    }

    /** Boundary precision, recall, F1 over documents: a predicted start counts when it is exactly a switch offset. */
    static double[] prf(List<MixedDocuments.Mixed> docs, List<Segmentation.Evidence> evidence, double threshold) {
        long tp = 0;
        long predicted = 0;
        long actual = 0;
        for (int d = 0; d < docs.size(); d++) {
            Segmentation.Evidence e = evidence.get(d);
            int[] switches = docs.get(d).switches();
            actual += switches.length;
            for (int w = 0; w < e.positions().length; w++) {
                if (e.values()[w] > threshold) {
                    predicted++;
                    if (Arrays.binarySearch(switches, e.positions()[w]) >= 0) {
                        tp++;
                    }
                }
            }
        }
        double p = predicted == 0 ? 0 : (double) tp / predicted;
        double r = actual == 0 ? 0 : (double) tp / actual;
        return new double[] { p, r, p + r == 0 ? 0 : 2 * p * r / (p + r) };
    }

    private static long countTrue(boolean[] labels, int from, int to) {
        long n = 0;
        for (int i = from; i < to; i++) {
            n += labels[i] ? 1 : 0;
        }
        return n;
    }

    private static int sentences(List<MixedDocuments.Source> sources) {
        return sources.stream().mapToInt(s -> s.sentences().size()).sum();
    }

    private static double round(double v) {
        return Math.round(v * 1000) / 1000.0;
    }

    static void log(String format, Object... args) {
        System.out.println(String.format(Locale.ROOT, format, args));
    }

    /** Weighted logistic regression on standardised features, trained with minibatch Adam; weights returned unstandardised. */
    record LogisticHead(float[] weights, double bias) {
        static LogisticHead fit(float[][] x, boolean[] y, int n, int epochs, long seed) {
            int dim = x[0].length;
            double[] mean = new double[dim];
            double[] std = new double[dim];
            for (int i = 0; i < n; i++) {
                for (int d = 0; d < dim; d++) {
                    mean[d] += x[i][d];
                }
            }
            for (int d = 0; d < dim; d++) {
                mean[d] /= n;
            }
            for (int i = 0; i < n; i++) {
                for (int d = 0; d < dim; d++) {
                    double v = x[i][d] - mean[d];
                    std[d] += v * v;
                }
            }
            for (int d = 0; d < dim; d++) {
                std[d] = Math.sqrt(std[d] / n) + 1e-6;
            }
            long pos = countTrue(y, 0, n);
            double posWeight = (double) (n - pos) / Math.max(1, pos); // balanced classes
            double[] w = new double[dim + 1]; // last: bias
            double[] m = new double[dim + 1];
            double[] v = new double[dim + 1];
            double lr = 1e-3;
            double l2 = 1e-4;
            double b1 = 0.9;
            double b2 = 0.999;
            int batch = 256;
            int[] order = new int[n];
            for (int i = 0; i < n; i++) {
                order[i] = i;
            }
            Random random = new Random(seed);
            double[] z = new double[dim];
            double[] grad = new double[dim + 1];
            long step = 0;
            for (int epoch = 0; epoch < epochs; epoch++) {
                for (int i = n - 1; i > 0; i--) {
                    int j = random.nextInt(i + 1);
                    int t = order[i];
                    order[i] = order[j];
                    order[j] = t;
                }
                double loss = 0;
                for (int from = 0; from < n; from += batch) {
                    Arrays.fill(grad, 0);
                    int to = Math.min(n, from + batch);
                    double weightSum = 0;
                    for (int k = from; k < to; k++) {
                        int i = order[k];
                        double s = w[dim];
                        for (int d = 0; d < dim; d++) {
                            z[d] = (x[i][d] - mean[d]) / std[d];
                            s += w[d] * z[d];
                        }
                        double p = BoundaryHead.sigmoid(s);
                        double weight = y[i] ? posWeight : 1;
                        double g = weight * (p - (y[i] ? 1 : 0));
                        loss -= weight * Math.log(Math.max(1e-12, y[i] ? p : 1 - p));
                        weightSum += weight;
                        for (int d = 0; d < dim; d++) {
                            grad[d] += g * z[d];
                        }
                        grad[dim] += g;
                    }
                    step++;
                    for (int d = 0; d <= dim; d++) {
                        double gd = grad[d] / weightSum + (d < dim ? l2 * w[d] : 0);
                        m[d] = b1 * m[d] + (1 - b1) * gd;
                        v[d] = b2 * v[d] + (1 - b2) * gd * gd;
                        double mh = m[d] / (1 - Math.pow(b1, step));
                        double vh = v[d] / (1 - Math.pow(b2, step));
                        w[d] -= lr * mh / (Math.sqrt(vh) + 1e-8);
                    }
                }
                if (epoch % 5 == 4 || epoch == epochs - 1) {
                    log("epoch %d: weighted loss %.4f", epoch + 1, loss / (n + pos * (posWeight - 1)));
                }
            }
            // fold the standardisation into the weights: w·(x − μ)/σ + b = (w/σ)·x + (b − Σ w μ/σ)
            float[] weights = new float[dim];
            double bias = w[dim];
            for (int d = 0; d < dim; d++) {
                weights[d] = (float) (w[d] / std[d]);
                bias -= w[d] * mean[d] / std[d];
            }
            return new LogisticHead(weights, bias);
        }

        /** The logit threshold with the best token-level F1 on tokens [from, to). */
        double bestThresholdLogit(float[][] x, boolean[] y, int from, int to) {
            int n = to - from;
            double[] logits = new double[n];
            Integer[] order = new Integer[n];
            long positives = 0;
            for (int i = 0; i < n; i++) {
                double s = bias;
                for (int d = 0; d < weights.length; d++) {
                    s += weights[d] * x[from + i][d];
                }
                logits[i] = s;
                order[i] = i;
                positives += y[from + i] ? 1 : 0;
            }
            Arrays.sort(order, (p, q) -> Double.compare(logits[q], logits[p]));
            double best = 0;
            double bestThreshold = 0;
            long tp = 0;
            for (int k = 0; k < n; k++) {
                tp += y[from + order[k]] ? 1 : 0;
                double p = (double) tp / (k + 1);
                double r = (double) tp / Math.max(1, positives);
                double f1 = p + r == 0 ? 0 : 2 * p * r / (p + r);
                if (f1 > best && k + 1 < n) {
                    best = f1;
                    bestThreshold = (logits[order[k]] + logits[order[k + 1]]) / 2;
                }
            }
            log("validation: best token F1 %.3f", best);
            return bestThreshold;
        }
    }
}

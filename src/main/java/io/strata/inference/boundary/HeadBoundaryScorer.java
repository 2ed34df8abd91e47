package io.strata.inference.boundary;

import io.strata.model.TokenEncoder;
import io.strata.chunking.BoundaryScorer;

/**
 * BertChunker's model: a frozen {@link TokenEncoder} and a {@link BoundaryHead} over its per-token states. The window is
 * the encoder's {@code maxTokens} less the two special tokens ([CLS], [SEP]) of a BERT-style encoder.
 */
public final class HeadBoundaryScorer implements BoundaryScorer {
    private final TokenEncoder encoder;
    private final BoundaryHead head;

    public HeadBoundaryScorer(TokenEncoder encoder, BoundaryHead head) {
        if (encoder.dimension() != head.dimension()) {
            throw new IllegalArgumentException("boundary model [" + head.name() + "] has " + head.dimension()
                + "-dimensional weights but encoder [" + encoder.name() + "] gives " + encoder.dimension());
        }
        this.encoder = encoder;
        this.head = head;
    }

    @Override
    public String name() {
        return head.name();
    }

    @Override
    public int windowTokens() {
        return encoder.maxTokens() - 2;
    }

    @Override
    public Scores score(String text) {
        TokenEncoder.Tokens tokens = encoder.encode(text);
        float[][] features = BoundaryHead.features(tokens.hidden(), head.contextTokens());
        double[] p = new double[tokens.size()];
        for (int i = 0; i < p.length; i++) {
            p[i] = BoundaryHead.sigmoid(head.logit(features[i]));
        }
        return new Scores(tokens.starts(), tokens.ends(), p);
    }
}

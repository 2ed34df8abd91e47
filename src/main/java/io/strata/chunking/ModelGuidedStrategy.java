package io.strata.chunking;

import java.util.List;

/**
 * A strategy whose boundaries come from a model: it computes them with their evidence ({@link #segment}), runs on
 * inference threads ({@link #usesModels()}), and keeps parents within θ = {@code max_words} with the recursive splitter.
 */
abstract class ModelGuidedStrategy extends BoundedStrategy {
    ModelGuidedStrategy(int maxWords) {
        super(maxWords);
    }

    @Override
    public abstract Segmentation segment(TextIndex text);

    @Override
    public final List<Span> split(TextIndex text) {
        return segment(text).parents();
    }

    @Override
    public final boolean usesModels() {
        return true;
    }
}

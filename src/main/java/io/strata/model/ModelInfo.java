package io.strata.model;

/** What an index mapping needs to know about a model: its reference, name and vector dimension. */
public record ModelInfo(ModelRef ref, String name, int dimension) {}

package io.strata.context;

import java.util.List;

/** An assembled context: its passages in prompt order, their joined {@code text} and its exact token count (≤ budget). */
public record PackedContext(int tokens, int budget, List<Passage> passages, String text) {}

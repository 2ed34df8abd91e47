package io.strata.chunking;

/** An LLM that completes a prompt (e.g. PIC's summary of a document). Blocking and thread-safe. */
public interface TextGenerator {
    String name();

    /** The model's completion of {@code prompt}, at most {@code maxTokens} tokens. */
    String generate(String prompt, int maxTokens);
}

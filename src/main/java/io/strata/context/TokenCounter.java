package io.strata.context;

/** Counts a text's tokens with one tokenizer, special tokens left out: what the text costs in a prompt. */
@FunctionalInterface
public interface TokenCounter {
    int count(String text);
}

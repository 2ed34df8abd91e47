package io.strata.chunking;

/**
 * A tokenizer for tests whose counts are easy to check by eye: every non-whitespace character is one token, and a passage
 * is embedded with {@code overhead} more (a prefix and special tokens).
 */
final class CharTokens implements ModelTokens {
    private final int limit;
    private final int overhead;

    CharTokens(int limit, int overhead) {
        this.limit = limit;
        this.overhead = overhead;
    }

    @Override
    public String model() {
        return "chars";
    }

    @Override
    public int limit() {
        return limit;
    }

    @Override
    public int embedded(String text) {
        return overhead + starts(text).length;
    }

    @Override
    public int[] starts(String text) {
        return text.chars().filter(c -> !Character.isWhitespace(c)).count() == 0 ? new int[0]
            : java.util.stream.IntStream.range(0, text.length()).filter(i -> !Character.isWhitespace(text.charAt(i))).toArray();
    }
}

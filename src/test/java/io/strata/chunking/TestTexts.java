package io.strata.chunking;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/** Real text for tests: the first three chapters of Jane Austen's Emma (public domain). */
public final class TestTexts {
    private TestTexts() {}

    public static String emma() {
        try (InputStream in = TestTexts.class.getResourceAsStream("/data/emma-chapters-1-3.txt")) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

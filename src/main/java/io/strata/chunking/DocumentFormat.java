package io.strata.chunking;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * How a source text is read before chunking ({@code format}): as flat text, or as Markdown or HTML whose headings, code
 * blocks, tables and lists the chunking respects (see {@code io.strata.chunking.structure}).
 */
public enum DocumentFormat {
    TEXT,
    MARKDOWN,
    HTML;

    /** The value as written in configuration. */
    public String value() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Every value as written in configuration, the default first. */
    public static List<String> names() {
        return Arrays.stream(values()).map(DocumentFormat::value).toList();
    }
}

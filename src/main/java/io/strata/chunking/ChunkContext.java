package io.strata.chunking;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * Contextual chunk headers (issue 22): the processor's {@code context}, parsed and validated here only. Every chunk is
 * embedded as its header line, a blank line, then its text — {@code "Emma › Chapter I\n\nEmma Woodhouse, …"} — where the
 * header is the document's values of {@code fields} (in order) followed by the chunk's section path ({@code section},
 * structured formats only), joined by {@value #SEPARATOR}. The chunk's stored {@code text} and offsets never change; with
 * {@code lexical} the header is also indexed for BM25, from a field of its own.
 *
 * <pre>{"fields": ["title", "meta.author"], "section": true, "lexical": false}</pre>
 *
 * @param fields  source fields (paths, as {@code copy_fields}) whose values open every header
 * @param section whether the chunk's section path follows them ({@code format: markdown | html})
 * @param lexical whether BM25 indexes the header too
 */
public record ChunkContext(List<String> fields, boolean section, boolean lexical) {
    public static final String FIELD = "context";
    /** Between the parts of a header: a character tokenizers drop, so it adds no term of its own. */
    public static final String SEPARATOR = " › ";
    /** Between the header and the chunk's text. */
    public static final String BREAK = "\n\n";
    /** Between the elements of an array value. */
    static final String ELEMENT_SEPARATOR = ", ";
    /** Longer headers are cut (at a space, with "…"): a header takes tokens from the chunk within the model's context. */
    public static final int MAX_HEADER_CHARS = 256;
    static final int MAX_FIELDS = 8;

    public ChunkContext {
        fields = List.copyOf(fields);
    }

    /** Parses {@code context} (null: no headers) for a processor reading documents of {@code format}. */
    public static ChunkContext parse(Object value, DocumentFormat format, boolean embed) {
        if (value == null) {
            return null;
        }
        if (!(value instanceof Map<?, ?> raw)) {
            String reason = String.format(Locale.ROOT,
                "must be an object like {\"fields\": [\"title\"], \"section\": true, \"lexical\": false}, got [%s]", value);
            throw new ConfigException(FIELD, "[" + FIELD + "] " + reason, reason);
        }
        Map<String, Object> map = new LinkedHashMap<>();
        raw.forEach((k, v) -> map.put(String.valueOf(k), v));
        ConfigMap c = new ConfigMap(null, FIELD, map);
        List<String> fields = c.stringList("fields", false, true, "a list of source field names, e.g. [\"title\"]");
        fields = fields == null ? List.of() : fields;
        if (fields.size() > MAX_FIELDS) {
            throw c.error("fields", String.format(Locale.ROOT, "allows at most %d fields, got %d", MAX_FIELDS, fields.size()));
        }
        boolean structured = format != DocumentFormat.TEXT;
        boolean section = c.booleanValue("section", structured);
        if (section && !structured) {
            throw c.error("section", String.format(Locale.ROOT, "needs [format] %s: format [%s] has no sections",
                List.of(DocumentFormat.MARKDOWN.value(), DocumentFormat.HTML.value()), format.value()));
        }
        boolean lexical = c.booleanValue("lexical", false);
        String unknown = c.firstUnknown();
        if (unknown != null) {
            throw c.error(unknown, String.format(Locale.ROOT, "is not an option of [%s]; supported: %s", FIELD, c.known()));
        }
        if (fields.isEmpty() && !section) {
            String reason = "gives no header: name [context.fields], or use [context.section] with [format] markdown or html";
            throw new ConfigException(FIELD, "[" + FIELD + "] " + reason, reason);
        }
        if (!embed && !lexical) {
            String reason = "has no effect: [embed] is false and [context.lexical] is false";
            throw new ConfigException(FIELD, "[" + FIELD + "] " + reason, reason);
        }
        return new ChunkContext(fields, section, lexical);
    }

    /**
     * The headers of one document's chunks, its field values read through {@code valueOf} (a path → its value, null when
     * missing). Missing, null and blank values are skipped; strings, numbers and booleans are taken as written, arrays of
     * them joined by {@value #ELEMENT_SEPARATOR}; an object is refused, naming the field.
     */
    public Headers headers(Function<String, Object> valueOf) {
        List<String> values = new ArrayList<>(fields.size());
        for (String field : fields) {
            String v = text(field, valueOf.apply(field));
            if (!v.isEmpty()) {
                values.add(v);
            }
        }
        return new Headers(values, section);
    }

    private static String text(String field, Object value) {
        if (value instanceof List<?> list) {
            List<String> parts = new ArrayList<>(list.size());
            for (Object element : list) {
                if (element instanceof List<?>) {
                    throw notText(field, element);
                }
                String v = text(field, element);
                if (!v.isEmpty()) {
                    parts.add(v);
                }
            }
            return String.join(ELEMENT_SEPARATOR, parts);
        }
        if (value == null) {
            return "";
        }
        if (value instanceof String || value instanceof Number || value instanceof Boolean) {
            return oneLine(value.toString());
        }
        throw notText(field, value);
    }

    private static IllegalArgumentException notText(String field, Object value) {
        return new IllegalArgumentException(String.format(Locale.ROOT,
            "[context.fields] field [%s] must be a string, a number, a boolean or an array of them, got [%s]", field,
            value instanceof Map ? "object" : value instanceof List ? "nested array" : value.getClass().getSimpleName()));
    }

    /** A header is one line: runs of whitespace (line breaks included) become one space. */
    private static String oneLine(String s) {
        return s.strip().replaceAll("\\s+", " ");
    }

    /** The text a chunk is embedded as: its header, a blank line, its text; the text alone without a header. */
    public static String embedded(String header, String text) {
        return header.isEmpty() ? text : header + BREAK + text;
    }

    /**
     * One document's headers.
     *
     * @param document the document's field values, in the order of {@code fields}
     * @param section  whether each chunk's section path follows them
     */
    public record Headers(List<String> document, boolean section) {
        /** No context: every header is empty, every chunk is embedded as its text. */
        public static final Headers NONE = new Headers(List.of(), false);

        public Headers {
            document = List.copyOf(document);
        }

        /** The header of {@code chunk} (empty when it has none): a part equal to the one before it is left out. */
        public String of(Chunk chunk) {
            List<String> parts = new ArrayList<>(document);
            if (section && chunk.section() != null) {
                for (String title : chunk.section().path()) {
                    String t = oneLine(title);
                    if (!t.isEmpty()) {
                        parts.add(t);
                    }
                }
            }
            StringBuilder b = new StringBuilder();
            String previous = null;
            for (String part : parts) {
                if (part.equals(previous)) {
                    continue; // a title repeated as the first heading says nothing twice
                }
                if (b.length() > 0) {
                    b.append(SEPARATOR);
                }
                b.append(part);
                previous = part;
            }
            return cut(b.toString());
        }

        /** The text {@code chunk} is embedded as. */
        public String embedded(Chunk chunk) {
            return ChunkContext.embedded(of(chunk), chunk.text());
        }

        /**
         * Late chunking's input for {@code parent}: the text its parent is embedded as, with its children's spans in that
         * text ({@link ChunkedParent#children()} order), moved past the parent's header, which belongs to no child.
         */
        public Embedder.SpannedText spanned(ChunkedParent parent) {
            String text = embedded(parent.parent());
            int base = parent.parent().start() - (text.length() - parent.parent().text().length());
            List<Span> spans = new ArrayList<>(parent.children().size());
            for (Chunk c : parent.children()) {
                spans.add(new Span(c.start() - base, c.end() - base));
            }
            return new Embedder.SpannedText(text, spans);
        }
    }

    /** At most {@value #MAX_HEADER_CHARS} characters: cut at the last space before the limit, marked with "…". */
    static String cut(String header) {
        if (header.length() <= MAX_HEADER_CHARS) {
            return header;
        }
        int end = header.lastIndexOf(' ', MAX_HEADER_CHARS - 1);
        end = end <= 0 ? MAX_HEADER_CHARS - 1 : end;
        return header.substring(0, end).stripTrailing() + "…";
    }
}

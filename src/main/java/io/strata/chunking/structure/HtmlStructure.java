package io.strata.chunking.structure;

import org.jsoup.Jsoup;
import org.jsoup.nodes.Document;
import org.jsoup.nodes.Element;

/**
 * Reads HTML (jsoup's HTML5 parser, which repairs broken markup as browsers do) for chunking. The stored text is the
 * text extracted from the {@code <body>} ({@link HtmlText} says how), and every offset indexes that text: chunk
 * documents store it, not the markup. {@code _chunk} with {@code format: html} answers with the whole extracted text
 * ({@code document_text}), against which the offsets of a chunk read.
 *
 * <p>Headings are {@code <h1>}–{@code <h6>} anywhere in the body; blocks are {@code <pre>} (code, cut between lines),
 * {@code <table>} (cut between rows; the first row is the header when it sits in {@code <thead>} or holds only
 * {@code <th>} cells) and {@code <ul>}/{@code <ol>} (cut between items).
 *
 * <p>Lists, tables and {@code <pre>} blocks nest at most {@link NestingLimit#maxDepth()} deep; a deeper document is refused.
 *
 * <p>Thread-safe: every call parses on its own.
 */
public final class HtmlStructure {
    private final NestingLimit limit;

    public HtmlStructure() {
        this(NestingLimit.DEFAULTS);
    }

    public HtmlStructure(NestingLimit limit) {
        this.limit = limit;
    }

    public StructuredText parse(String html) {
        Document document = Jsoup.parse(html);
        Element body = document.body(); // looked up once: it walks the document's children
        return new HtmlText(limit).extract(body != null ? body : document);
    }
}

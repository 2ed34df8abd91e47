package io.strata.query;

import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.uhighlight.Passage;
import org.apache.lucene.search.uhighlight.PassageFormatter;
import org.apache.lucene.search.uhighlight.UnifiedHighlighter;

import java.io.IOException;
import java.text.BreakIterator;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The sentences of a parent that best match the query's words, by offsets: Lucene's unified highlighter (sentence
 * passages from the JDK's sentence {@link BreakIterator}, scored by its BM25 passage scorer over the parent's own text)
 * with a formatter that keeps the passages' offsets and scores instead of marking up text. The query is the field's
 * search analysis of the text, as terms (any of them); a parent none of whose sentences holds one has no sentences.
 */
final class EvidenceSentences {
    private final Analyzer indexAnalyzer;
    private final String field;
    private final Query query;

    private EvidenceSentences(Analyzer indexAnalyzer, String field, Query query) {
        this.indexAnalyzer = indexAnalyzer;
        this.field = field;
        this.query = query;
    }

    /** For {@code text} analysed by {@code searchAnalyzer}; null when it has no terms (nothing can match). */
    static EvidenceSentences of(Analyzer indexAnalyzer, Analyzer searchAnalyzer, String field, String text) throws IOException {
        Set<String> terms = new LinkedHashSet<>();
        try (TokenStream ts = searchAnalyzer.tokenStream(field, text)) {
            CharTermAttribute term = ts.addAttribute(CharTermAttribute.class);
            ts.reset();
            while (ts.incrementToken()) {
                terms.add(term.toString());
            }
            ts.end();
        }
        if (terms.isEmpty()) {
            return null;
        }
        BooleanQuery.Builder any = new BooleanQuery.Builder();
        for (String t : terms) {
            any.add(new TermQuery(new Term(field, t)), BooleanClause.Occur.SHOULD);
        }
        return new EvidenceSentences(indexAnalyzer, field, any.build());
    }

    /**
     * The best {@code n} sentences of {@code content} (which starts at {@code offset} in its source document), best first:
     * {@code start}, {@code end} (source offsets, surrounding whitespace excluded), {@code text} and {@code score}.
     */
    @SuppressWarnings("unchecked")
    List<Map<String, Object>> best(String content, int offset, int n) throws IOException {
        if (n <= 0 || content.isEmpty()) {
            return List.of();
        }
        UnifiedHighlighter highlighter = UnifiedHighlighter.builderWithoutSearcher(indexAnalyzer)
            .withBreakIterator(() -> BreakIterator.getSentenceInstance(Locale.ROOT))
            .withMaxLength(content.length() + 1)
            .withMaxNoHighlightPassages(0) // no match, no sentence (the default would return the first ones)
            .withPassageSortComparator(Comparator.comparingDouble((Passage p) -> -p.getScore()).thenComparingInt(Passage::getStartOffset))
            .withFormatter(new OffsetsFormatter(offset))
            .build();
        Object out = highlighter.highlightWithoutSearcher(field, query, content, n);
        return out == null ? List.of() : (List<Map<String, Object>>) out;
    }

    /** Keeps each passage's offsets and score. */
    private static final class OffsetsFormatter extends PassageFormatter {
        private final int offset;

        OffsetsFormatter(int offset) {
            this.offset = offset;
        }

        @Override
        public Object format(Passage[] passages, String content) {
            List<Map<String, Object>> out = new ArrayList<>(passages.length);
            for (Passage p : passages) {
                int start = p.getStartOffset();
                int end = p.getEndOffset();
                while (start < end && Character.isWhitespace(content.charAt(start))) {
                    start++;
                }
                while (end > start && Character.isWhitespace(content.charAt(end - 1))) {
                    end--;
                }
                if (start == end) {
                    continue;
                }
                Map<String, Object> s = new LinkedHashMap<>();
                s.put("start", offset + start);
                s.put("end", offset + end);
                s.put("text", content.substring(start, end));
                s.put("score", p.getScore());
                out.add(s);
            }
            return out;
        }
    }
}

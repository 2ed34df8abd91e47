package io.strata.chunking.structure;

import io.strata.chunking.Chunk;
import io.strata.chunking.ChunkedParent;
import io.strata.chunking.ChunkingStrategy;
import io.strata.chunking.DocumentFormat;
import io.strata.chunking.DocumentLayout;
import io.strata.chunking.MultiGranularChunker;
import io.strata.chunking.RecursiveSplitter;
import io.strata.chunking.RecursiveStrategy;
import io.strata.chunking.Segmentation;
import io.strata.chunking.SentenceSegmenter;
import io.strata.chunking.Span;
import io.strata.chunking.TextIndex;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * The {@link DocumentLayout} of a format: reads the document with its parser ({@link MarkdownStructure},
 * {@link HtmlStructure}) and places parents and children along the structure with {@link StructureLayout}.
 */
public final class StructuredLayout implements DocumentLayout {
    private final DocumentFormat format;
    private final Function<String, StructuredText> reader;

    private StructuredLayout(DocumentFormat format, Function<String, StructuredText> reader) {
        this.format = format;
        this.reader = reader;
    }

    /** The layout of {@code format} with the default nesting limit; null for {@link DocumentFormat#TEXT}. */
    public static DocumentLayout of(DocumentFormat format) {
        return of(format, NestingLimit.DEFAULTS);
    }

    /**
     * The layout of {@code format}; null for {@link DocumentFormat#TEXT}, which has no structure to follow. Its reader
     * refuses a document nested deeper than {@code limit} ({@link io.strata.chunking.InputLimitException}).
     */
    public static DocumentLayout of(DocumentFormat format, NestingLimit limit) {
        return switch (format) {
            case TEXT -> null;
            case MARKDOWN -> new StructuredLayout(format, new MarkdownStructure(limit)::parse);
            case HTML -> new StructuredLayout(format, new HtmlStructure(limit)::parse);
        };
    }

    @Override
    public DocumentFormat format() {
        return format;
    }

    @Override
    public MultiGranularChunker.Result chunk(String source, ChunkingStrategy strategy, List<RecursiveSplitter> childSplitters,
                                             SentenceSegmenter segmenter) {
        StructuredText document = reader.apply(source);
        String text = document.text();
        TextIndex index = document.words() == null ? new TextIndex(text, segmenter) : new TextIndex(text, segmenter, document.words());
        StructureLayout layout = new StructureLayout(index, Outline.of(document.headings(), text.length()), document.blocks());
        List<Segmentation.Evidence> evidence = new ArrayList<>();
        List<Piece> parents = layout.layout(new Span(0, text.length()), strategy.maxWords(), strategyProse(strategy, segmenter, index, evidence));
        List<ChunkedParent> out = new ArrayList<>(parents.size());
        for (int p = 0; p < parents.size(); p++) {
            Piece parent = parents.get(p);
            List<Chunk> children = new ArrayList<>();
            for (int level = 1; level <= childSplitters.size(); level++) {
                RecursiveSplitter splitter = childSplitters.get(level - 1);
                List<Piece> pieces = layout.layout(parent.span(), splitter.maxWords(), span -> splitter.split(index, span));
                for (int c = 0; c < pieces.size(); c++) {
                    children.add(chunk(text, pieces.get(c), level, c));
                }
            }
            out.add(new ChunkedParent(chunk(text, parent, 0, p), children));
        }
        return new MultiGranularChunker.Result(out, evidence, index);
    }

    /**
     * The strategy on one stretch of prose: recursive splitting reads the document's index directly; other strategies get
     * the stretch as a text of its own (their evidence shifted back to document offsets).
     */
    private static ProseSplitter strategyProse(ChunkingStrategy strategy, SentenceSegmenter segmenter, TextIndex index,
                                               List<Segmentation.Evidence> evidence) {
        if (strategy instanceof RecursiveStrategy) {
            RecursiveSplitter splitter = new RecursiveSplitter(strategy.maxWords());
            return span -> splitter.split(index, span);
        }
        return span -> {
            Segmentation segmentation = strategy.segment(new TextIndex(span.of(index.text()), segmenter));
            List<Span> out = new ArrayList<>(segmentation.parents().size());
            for (Span s : segmentation.parents()) {
                out.add(new Span(s.start() + span.start(), s.end() + span.start()));
            }
            for (Segmentation.Evidence e : segmentation.evidence()) {
                int[] positions = e.positions().clone();
                for (int i = 0; i < positions.length; i++) {
                    positions[i] += span.start();
                }
                evidence.add(new Segmentation.Evidence(e.signal(), positions, e.values(), e.threshold()));
            }
            return out;
        };
    }

    /** A chunk of a piece: its text leads with the table header the piece repeats, if any (see {@link Chunk}). */
    private static Chunk chunk(String text, Piece piece, int level, int ordinal) {
        Span header = piece.header();
        String chunkText = header == null ? piece.span().of(text) : header.of(text) + "\n" + piece.span().of(text);
        return new Chunk(chunkText, piece.span(), level, ordinal, piece.section(), header);
    }
}

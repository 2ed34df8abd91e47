package io.strata.chunking;

import io.strata.chunking.structure.HtmlStructure;
import io.strata.chunking.structure.MarkdownStructure;
import io.strata.chunking.structure.Outline;
import io.strata.chunking.structure.Piece;
import io.strata.chunking.structure.ProseSplitter;
import io.strata.chunking.structure.StructureLayout;
import io.strata.chunking.structure.StructuredText;

import java.util.ArrayList;
import java.util.List;

/**
 * The Multi-Granular Chunker of the LGMGC paper (§3.2): parents come from a {@link ChunkingStrategy} with
 * size θ; each parent is re-split by recursive chunking into children of θ·g words for every granularity g
 * (default θ/2 and θ/4), which never divides a sentence unless the sentence alone exceeds θ·g. The parent
 * itself is the level-0 child. LGMGC (§3.3) is this class with the logits-guided strategy.
 *
 * <p>With {@link DocumentFormat#MARKDOWN} or {@link DocumentFormat#HTML} the document is read for its structure first, and
 * parents and children are laid out along it ({@link StructureLayout}): the strategy cuts the prose of each section,
 * chunks stay inside sections (small sibling sections merged), code blocks, tables and lists stay whole when they fit.
 *
 * <p>Immutable and thread-safe.
 */
public final class MultiGranularChunker {
    /** The paper's granularities: θ/2 and θ/4. */
    public static final List<Double> DEFAULT_GRANULARITIES = List.of(0.5, 0.25);

    private final ChunkingStrategy strategy;
    private final SentenceSegmenter segmenter;
    private final List<Double> granularities;
    private final List<RecursiveSplitter> childSplitters;
    private final DocumentFormat format;
    private final MarkdownStructure markdown = new MarkdownStructure();
    private final HtmlStructure html = new HtmlStructure();

    public MultiGranularChunker(ChunkingStrategy strategy, List<Double> granularities, SentenceSegmenter segmenter) {
        this(strategy, granularities, segmenter, DocumentFormat.TEXT);
    }

    public MultiGranularChunker(ChunkingStrategy strategy, List<Double> granularities, SentenceSegmenter segmenter,
                                DocumentFormat format) {
        this.strategy = strategy;
        this.segmenter = segmenter;
        this.granularities = List.copyOf(granularities);
        this.format = format;
        this.childSplitters = new ArrayList<>();
        for (double g : granularities) {
            childSplitters.add(new RecursiveSplitter(childWords(strategy.maxWords(), g)));
        }
    }

    /** θ·g rounded, the child size of granularity g. */
    public static int childWords(int theta, double granularity) {
        return (int) Math.round(theta * granularity);
    }

    public ChunkingStrategy strategy() {
        return strategy;
    }

    public List<Double> granularities() {
        return granularities;
    }

    public DocumentFormat format() {
        return format;
    }

    public List<ChunkedParent> chunk(String text) {
        return chunkWithEvidence(text).parents();
    }

    /**
     * Parents, children and the evidence that placed the parent boundaries (for previews), with the index of the text the
     * chunks were cut from (the source itself, except for HTML: its extracted text) so callers count words the way θ does.
     */
    public record Result(List<ChunkedParent> parents, List<Segmentation.Evidence> evidence, TextIndex index) {}

    public Result chunkWithEvidence(String text) {
        if (format != DocumentFormat.TEXT) {
            return structured(format == DocumentFormat.MARKDOWN ? markdown.parse(text) : html.parse(text));
        }
        TextIndex index = new TextIndex(text, segmenter);
        Segmentation segmentation = strategy.segment(index);
        return new Result(withChildren(index, segmentation.parents()), segmentation.evidence(), index);
    }

    private List<ChunkedParent> withChildren(TextIndex index, List<Span> parents) {
        String text = index.text();
        List<ChunkedParent> out = new ArrayList<>(parents.size());
        for (int p = 0; p < parents.size(); p++) {
            Span parentSpan = parents.get(p);
            Chunk parent = new Chunk(parentSpan.of(text), parentSpan, 0, p);
            List<Chunk> children = new ArrayList<>();
            for (int level = 1; level <= childSplitters.size(); level++) {
                List<Span> spans = childSplitters.get(level - 1).split(index, parentSpan);
                for (int c = 0; c < spans.size(); c++) {
                    children.add(new Chunk(spans.get(c).of(text), spans.get(c), level, c));
                }
            }
            out.add(new ChunkedParent(parent, children));
        }
        return out;
    }

    private Result structured(StructuredText document) {
        String text = document.text();
        TextIndex index = new TextIndex(text, segmenter);
        StructureLayout layout = new StructureLayout(index, Outline.of(document.headings(), text.length()), document.blocks());
        List<Segmentation.Evidence> evidence = new ArrayList<>();
        List<Piece> parents = layout.layout(new Span(0, text.length()), strategy.maxWords(), strategyProse(index, evidence));
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
        return new Result(out, evidence, index);
    }

    /**
     * The strategy on one stretch of prose: recursive splitting reads the document's index directly; other strategies get
     * the stretch as a text of its own (their evidence shifted back to document offsets).
     */
    private ProseSplitter strategyProse(TextIndex index, List<Segmentation.Evidence> evidence) {
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

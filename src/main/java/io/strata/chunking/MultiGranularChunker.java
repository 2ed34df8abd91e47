package io.strata.chunking;


import java.util.ArrayList;
import java.util.List;

/**
 * The Multi-Granular Chunker of the LGMGC paper (§3.2): parents come from a {@link ChunkingStrategy} with
 * size θ; each parent is re-split by recursive chunking into children of θ·g words for every granularity g
 * (default θ/2 and θ/4), which never divides a sentence unless the sentence alone exceeds θ·g. The parent
 * itself is the level-0 child. LGMGC (§3.3) is this class with the logits-guided strategy.
 *
 * <p>With a {@link DocumentLayout} (Markdown or HTML, from {@code io.strata.chunking.structure}) the document is read for
 * its structure first, and the layout places parents and children along it: the strategy cuts the prose of each section,
 * chunks stay inside sections (small sibling sections merged), code blocks, tables and lists stay whole when they fit.
 * The layout is passed in, so this core class does not depend on the parsers.
 *
 * <p>With the embedding model's tokenizer ({@link #withTokens}) no embedded chunk exceeds the model's limit whatever the
 * strategy, a parent above it is kept whole without a vector of its own up to {@link ParentSize} ({@link TokenLimit}),
 * and a strategy's θ may count the model's tokens ({@code max_tokens}) instead of words: the text is then indexed with its tokens, and the strategy, the child splitters (θ·g tokens) and the merges all count tokens.
 *
 * <p>Children that add nothing are not written ({@link ChildPolicy}): a child below a quarter of its level's size joins
 * a neighbour, and a child whose span repeats its parent's or a coarser child's is dropped.
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
    private final ChildPolicy childPolicy;
    /** Whether every child the splitters cut is kept ({@code children.keep_redundant}: for comparison only). */
    private final boolean keepRedundant;
    /** Null for flat text. */
    private final DocumentLayout layout;
    /** The embedding model's tokenizer, or null when it is not known here (an ml-commons model): no limit is enforced. */
    private final ModelTokens tokens;
    /** Whether θ counts {@link #tokens} ({@code max_tokens}) rather than words. */
    private final boolean thetaInTokens;
    /** How large a parent above the model's window may be kept whole ({@code parents.max_tokens}). */
    private final ParentSize parentSize;

    public MultiGranularChunker(ChunkingStrategy strategy, List<Double> granularities, SentenceSegmenter segmenter) {
        this(strategy, granularities, segmenter, null);
    }

    /** @param layout how structured documents are laid out (Markdown, HTML); null reads the text as flat text */
    public MultiGranularChunker(ChunkingStrategy strategy, List<Double> granularities, SentenceSegmenter segmenter,
                                DocumentLayout layout) {
        this(strategy, granularities, segmenter, layout, null, false, ParentSize.DEFAULT, false);
    }

    private MultiGranularChunker(ChunkingStrategy strategy, List<Double> granularities, SentenceSegmenter segmenter,
                                 DocumentLayout layout, ModelTokens tokens, boolean thetaInTokens, ParentSize parentSize,
                                 boolean keepRedundant) {
        if (thetaInTokens && tokens == null) {
            throw new IllegalArgumentException("θ in tokens needs the model's tokens");
        }
        if (thetaInTokens && layout != null) {
            throw new IllegalArgumentException("θ in tokens is for flat text");
        }
        this.tokens = tokens;
        this.thetaInTokens = thetaInTokens;
        this.parentSize = parentSize;
        this.strategy = strategy;
        this.segmenter = segmenter;
        this.granularities = List.copyOf(granularities);
        this.layout = layout;
        this.childSplitters = new ArrayList<>();
        int[] levelSizes = new int[granularities.size()];
        for (double g : granularities) {
            levelSizes[childSplitters.size()] = childWords(strategy.maxWords(), g);
            childSplitters.add(new RecursiveSplitter(levelSizes[childSplitters.size()]));
        }
        this.childPolicy = new ChildPolicy(levelSizes);
        this.keepRedundant = keepRedundant;
    }

    /**
     * This chunker with the embedding model's tokenizer: every chunk is then kept within the model's limit; with
     * {@code thetaInTokens} θ (and θ·g) counts its tokens.
     */
    public MultiGranularChunker withTokens(ModelTokens tokens, boolean thetaInTokens) {
        return new MultiGranularChunker(strategy, granularities, segmenter, layout, tokens, thetaInTokens, parentSize, keepRedundant);
    }

    /** This chunker keeping parents above the model's window whole up to {@code parentSize} (see {@link TokenLimit}). */
    public MultiGranularChunker withParentSize(ParentSize parentSize) {
        return new MultiGranularChunker(strategy, granularities, segmenter, layout, tokens, thetaInTokens, parentSize, keepRedundant);
    }

    public ParentSize parentSize() {
        return parentSize;
    }

    /** This chunker writing every child the splitters cut, also those {@link ChildPolicy} leaves out: for comparison only. */
    public MultiGranularChunker keepingRedundantChildren() {
        return new MultiGranularChunker(strategy, granularities, segmenter, layout, tokens, thetaInTokens, parentSize, true);
    }

    /** Whether children that add nothing are written too ({@link #keepingRedundantChildren}). */
    public boolean keepsRedundantChildren() {
        return keepRedundant;
    }

    /** The embedding model's tokenizer the limit is checked with, or null. */
    public ModelTokens tokens() {
        return tokens;
    }

    /** Whether θ counts the model's tokens ({@code max_tokens}) rather than words. */
    public boolean thetaInTokens() {
        return thetaInTokens;
    }

    /** Whether cutting runs models (the strategy's, or the tokenizer of the limit, which may load its model). */
    public boolean usesModels() {
        return strategy.usesModels() || tokens != null;
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
        return layout == null ? DocumentFormat.TEXT : layout.format();
    }

    public List<ChunkedParent> chunk(String text) {
        return chunkWithEvidence(text).parents();
    }

    /**
     * Parents, children and the evidence that placed the parent boundaries (for previews), with the index of the text the
     * chunks were cut from (the source itself, except for HTML: its extracted text) so callers count words the way θ does,
     * and how many cuts the model's token limit took ({@link TokenLimit}).
     */
    public record Result(List<ChunkedParent> parents, List<Segmentation.Evidence> evidence, TextIndex index, int limitSplits) {
        public Result(List<ChunkedParent> parents, List<Segmentation.Evidence> evidence, TextIndex index) {
            this(parents, evidence, index, 0);
        }
    }

    public Result chunkWithEvidence(String text) {
        Result result;
        if (layout != null) {
            result = layout.chunk(text, strategy, childSplitters, segmenter);
        } else {
            TextIndex index = new TextIndex(text, segmenter, thetaInTokens ? tokens : null);
            Segmentation segmentation = strategy.segment(index);
            result = new Result(withChildren(index, segmentation.parents()), segmentation.evidence(), index);
        }
        if (keepRedundant) {
            return tokens == null ? result : new TokenLimit(tokens, parentSize).apply(result);
        }
        result = childPolicy.mergeTiny(result); // before the limit, which cuts a merged child that no longer fits
        return ChildPolicy.dropRepeats(tokens == null ? result : new TokenLimit(tokens, parentSize).apply(result));
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
}

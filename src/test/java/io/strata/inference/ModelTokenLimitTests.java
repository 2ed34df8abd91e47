package io.strata.inference;

import ai.djl.Device;
import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import io.strata.chunking.Chunk;
import io.strata.chunking.ChunkedParent;
import io.strata.chunking.ModelTokens;
import io.strata.chunking.MultiGranularChunker;
import io.strata.chunking.RecursiveStrategy;
import io.strata.chunking.SemanticStrategy;
import io.strata.chunking.SentenceSegmenter;
import io.strata.chunking.Embedder;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

/**
 * The token limit and θ in tokens with the bundled e5-small-v2 (512 tokens, a "passage: " prefix), checked against the
 * model's own tokenizer.json read independently (the oracle): what the model is fed is the prefix, the text and the
 * special tokens.
 */
public class ModelTokenLimitTests {
    private static final SentenceSegmenter SEGMENTER = SentenceSegmenter.english();
    private static DjlEmbedder e5;
    private static ModelTokens tokens;
    private static HuggingFaceTokenizer oracle;
    private static String prefix;

    @BeforeClass
    public static void load() throws Exception {
        ModelDescriptor d = ModelDescriptor.read("e5-small-v2-q", DjlEmbedderTests.MODELS.resolve("e5-small-v2-q"));
        e5 = DjlEmbedder.load(d, Device.cpu(), 1, 1, 1);
        tokens = new EmbeddedTokens(d.name(), d.maxTokens(), () -> e5);
        // the tokenizer.json read on its own, without truncation (the file asks for 512): it must see what would be cut
        oracle = HuggingFaceTokenizer.builder()
            .optTokenizerPath(DjlEmbedderTests.MODELS.resolve("e5-small-v2-q").resolve("e5-small-v2-q-tokenizer.json"))
            .optTruncation(false)
            .optPadding(false)
            .build();
        prefix = d.passagePrefix();
    }

    @AfterClass
    public static void close() {
        e5.close();
        oracle.close();
    }

    /** Tokens the model is fed for a passage, by the oracle. */
    private static int fed(String text) {
        return oracle.encode(prefix + text).getIds().length;
    }

    /** Tokens of the text alone, by the oracle. */
    private static int alone(String text) {
        return oracle.encode(text, false, false).getIds().length;
    }

    /** Few words, many tokens: long numbers, URLs, identifiers, CJK (one token per character) and emoji. */
    static String tokenDense(int paragraphs) {
        StringBuilder sb = new StringBuilder();
        for (int p = 0; p < paragraphs; p++) {
            sb.append(String.format(Locale.ROOT, "Record %d lists https://example.org/archive/%d/items?id=%d&page=%d&sort=desc#section-%d "
                + "with checksum %d%d%d and the identifier ", p, p * 7919, p * 104729, p, p, 31415926535L + p, 27182818284L * p, 1618033988L));
            sb.append("x7Fq9Zr2Lm8Kt4Wv6Yb1Nc3Pd5Hs0Jg".repeat(3)).append(". ");
            sb.append("東京都の図書館は二〇二六年に新しい目録を公開しました").append("。");
            sb.append("Status 😀✅ 12.5% ≈ 0.125; ratio=3.14159265358979323846264338327950288419716939937510.\n\n");
        }
        return sb.toString();
    }

    /** Every chunk that gets a vector. */
    private static List<Chunk> embedded(List<ChunkedParent> parents) {
        List<Chunk> out = new ArrayList<>();
        parents.forEach(p -> out.addAll(p.embedded()));
        return out;
    }

    private static List<Chunk> all(List<ChunkedParent> parents) {
        List<Chunk> out = new ArrayList<>();
        parents.forEach(p -> out.addAll(p.all()));
        return out;
    }

    /** Every non-blank character of each parent without a vector lies in one of its children, by the text itself. */
    private static void assertChildrenCoverParentsWithoutVectors(String text, List<ChunkedParent> parents) {
        for (ChunkedParent p : parents) {
            if (p.parentEmbedded()) {
                continue;
            }
            assertTrue(p.parent().span() + ": " + fed(p.parent().text()) + " tokens", fed(p.parent().text()) > 512);
            for (int i = p.parent().start(); i < p.parent().end(); i++) {
                int at = i;
                assertTrue("character " + i + " is in no child", Character.isWhitespace(text.charAt(i))
                    || p.children().stream().anyMatch(c -> c.start() <= at && at < c.end()));
            }
        }
    }

    @Test
    public void testLimit_atThetaOf500Words_parentsAboveTheWindowStayWhole_andEveryEmbeddedChunkFits() {
        String text = io.strata.chunking.TestTexts.emma();
        var plain = new MultiGranularChunker(new RecursiveStrategy(500), MultiGranularChunker.DEFAULT_GRANULARITIES, SEGMENTER);
        List<ChunkedParent> uncut = plain.chunk(text);
        MultiGranularChunker.Result r = plain.withTokens(tokens, false).chunkWithEvidence(text);
        assertEquals(uncut.stream().map(ChunkedParent::parent).toList(), r.parents().stream().map(ChunkedParent::parent).toList());
        long whole = r.parents().stream().filter(p -> !p.parentEmbedded()).count();
        assertTrue("parents above the window: " + whole, whole > 0);
        for (ChunkedParent p : r.parents()) {
            assertEquals(p.parent().span().toString(), fed(p.parent().text()) <= 512, p.parentEmbedded());
        }
        for (Chunk c : embedded(r.parents())) {
            assertTrue(c.level() + " " + c.span() + ": " + fed(c.text()) + " tokens", fed(c.text()) <= 512);
        }
        assertChildrenCoverParentsWithoutVectors(text, r.parents());
        // with parents.max_tokens at the window, the old cut: every parent fits, and there are more of them
        MultiGranularChunker.Result cut = plain.withTokens(tokens, false).withParentSize(new io.strata.chunking.ParentSize(512))
            .chunkWithEvidence(text);
        assertTrue(cut.parents().size() > r.parents().size());
        for (Chunk c : all(cut.parents())) {
            assertTrue(fed(c.text()) <= 512);
        }
    }

    @Test
    public void testLimit_whenDefaultParentsAreTokenDense_noChunkExceedsTheModelsLimit() {
        String text = tokenDense(40);
        var plain = new MultiGranularChunker(new RecursiveStrategy(300), MultiGranularChunker.DEFAULT_GRANULARITIES, SEGMENTER);
        // without the limit (the chunker before issue 21), θ = 300 words gives parents the model truncates
        int worst = all(plain.chunk(text)).stream().mapToInt(c -> fed(c.text())).max().orElseThrow();
        assertTrue("a parent of " + worst + " tokens", worst > 512);

        MultiGranularChunker.Result r = plain.withTokens(tokens, false).chunkWithEvidence(text);
        assertTrue(r.limitSplits() > 0);
        assertChildrenCoverParentsWithoutVectors(text, r.parents());
        for (Chunk c : embedded(r.parents())) {
            assertEquals(text.substring(c.start(), c.end()), c.text());
            assertTrue(c.level() + " " + c.span() + ": " + fed(c.text()) + " tokens", fed(c.text()) <= 512);
            assertEquals(fed(c.text()), tokens.embedded(c.text()));
        }
        // the parents still cover the text in order
        int end = 0;
        for (ChunkedParent p : r.parents()) {
            assertTrue(p.parent().start() >= end);
            assertTrue(text.substring(end, p.parent().start()).isBlank());
            end = p.parent().end();
        }
        assertTrue(text.substring(end).isBlank());
    }

    @Test
    public void testMaxTokens_whenTextHasLongWords_noChunkExceedsTheLimit() {
        String text = tokenDense(12);
        var chunker = new MultiGranularChunker(new RecursiveStrategy(128), MultiGranularChunker.DEFAULT_GRANULARITIES, SEGMENTER)
            .withTokens(tokens, true);
        MultiGranularChunker.Result r = chunker.chunkWithEvidence(text);
        assertEquals(0, r.limitSplits());
        int largest = 0;
        for (ChunkedParent p : r.parents()) {
            assertEquals(text.substring(p.parent().start(), p.parent().end()), p.parent().text());
            assertTrue(p.parent().span() + ": " + alone(p.parent().text()), alone(p.parent().text()) <= 128);
            largest = Math.max(largest, alone(p.parent().text()));
            for (Chunk c : p.children()) {
                // a tiny child joined to a neighbour may take it past its level's size by less than a quarter (ChildPolicy)
                assertTrue(c.level() + " " + c.span() + ": " + alone(c.text()), alone(c.text()) < (c.level() == 1 ? 64 : 32) * 1.25);
            }
        }
        // a sentence above θ is cut into windows of whole words (here: before the 79-token identifier), not into words
        assertTrue("largest parent: " + largest, largest > 64);
    }

    @Test
    public void testLimit_whenSemanticParentsAreAboveParentsMaxTokens_theyAreCutToFit() {
        // a semantic strategy that finds no breakpoint (every sentence embeds the same) and θ of 8192 words: one parent
        Embedder same = new Embedder() {
            public String name() {
                return "same";
            }

            public int dimension() {
                return 2;
            }

            public int maxTokens() {
                return 512;
            }

            public List<float[]> embed(List<String> texts, Purpose purpose) {
                return texts.stream().map(t -> new float[] { 1, 0 }).toList();
            }

            public int[] tokenCounts(List<String> texts, Purpose purpose) {
                throw new UnsupportedOperationException();
            }
        };
        String text = tokenDense(20);
        var chunker = new MultiGranularChunker(new SemanticStrategy(same, 1, SemanticStrategy.ThresholdType.PERCENTILE, 95, 8192),
            List.of(0.5), SEGMENTER).withTokens(tokens, false).withParentSize(new io.strata.chunking.ParentSize(1024));
        MultiGranularChunker.Result r = chunker.chunkWithEvidence(text);
        assertTrue(r.parents().size() > 1);
        for (ChunkedParent p : r.parents()) {
            assertTrue(fed(p.parent().text()) <= 1024);
        }
        for (Chunk c : embedded(r.parents())) {
            assertTrue(fed(c.text()) <= 512);
        }
        assertChildrenCoverParentsWithoutVectors(text, r.parents());
    }

    @Test
    public void testOverhead_isThePassagePrefixAndTheSpecialTokens() {
        // [CLS] passage : [SEP]
        assertEquals(4, tokens.overhead());
        assertEquals(508, tokens.textLimit());
        String text = "Emma Woodhouse, handsome, clever, and rich.";
        assertEquals(fed(text), tokens.embedded(text));
        assertEquals(alone(text) + 4, tokens.embedded(text));
    }

    @Test
    public void testTokenStarts_areUtf16OffsetsOfTheTokens_evenAfterSupplementaryCharacters() {
        String text = "a😀b 東京 https://x.org/1234567";
        int[] starts = e5.tokenStarts(text);
        assertEquals(alone(text), starts.length);
        for (int s : starts) {
            assertTrue(s >= 0 && s < text.length() && !Character.isWhitespace(text.charAt(s)));
        }
        // "a😀b" is one unknown word ([UNK]); the emoji takes two UTF-16 units, so 東 starts at 5 (code point 4)
        assertArrayEquals(new int[] { 0, 5, 6, 8 }, java.util.Arrays.copyOf(starts, 4));
        assertEquals(text.indexOf("https"), starts[3]);
    }
}

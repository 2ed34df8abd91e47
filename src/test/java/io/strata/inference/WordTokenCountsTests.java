package io.strata.inference;

import ai.djl.Device;
import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import io.strata.context.TokenCounter;
import org.junit.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

/**
 * The bundled embedding models' word-by-word token counts ({@link DjlEmbedder#wordCounter}) against each model's
 * tokenizer.json read on its own (the oracle) on real text: the SQuAD sample's articles and Emma, with spans cut at
 * whitespace as strata_context cuts them; and which tokenizer files may be counted word by word.
 */
public class WordTokenCountsTests {
    private static final Path SQUAD = Path.of("src/test/resources/eval/datasets/squad2-dev-sample/docs");
    private static final Path EMMA = Path.of("src/test/resources/eval/datasets/gutenqa-emma/book.txt");

    private static List<String> paragraphs() throws Exception {
        List<String> out = new ArrayList<>();
        try (Stream<Path> files = Files.list(SQUAD)) {
            for (Path f : files.sorted().toList()) {
                out.addAll(List.of(Files.readString(f, StandardCharsets.UTF_8).split("\n\n")));
            }
        }
        String[] emma = Files.readString(EMMA, StandardCharsets.UTF_8).split("\n\n");
        out.addAll(List.of(emma).subList(0, Math.min(emma.length, 600)));
        return out;
    }

    @Test
    public void everyBundledEmbeddingModelCountsWordByWord_exactlyAsItsTokenizerCountsTheText() throws Exception {
        List<String> paragraphs = paragraphs();
        for (String model : List.of("e5-small-v2-q", "bge-small-en-v15-q")) {
            ModelDescriptor d = ModelDescriptor.read(model, DjlEmbedderTests.MODELS.resolve(model));
            try (DjlEmbedder embedder = DjlEmbedder.load(d, Device.cpu(), 1, 1, 1);
                 HuggingFaceTokenizer oracle = HuggingFaceTokenizer.builder().optTokenizerPath(d.dir().resolve(d.tokenizerFile()))
                     .optAddSpecialTokens(false).optTruncation(false).optPadding(false).build()) {
                TokenCounter words = embedder.wordCounter();
                assertNotNull(model + " splits at whitespace first", words);
                Random random = new Random(5);
                int spans = 0;
                for (String p : paragraphs) {
                    assertEquals(model + ": " + p, oracle.encode(p).getIds().length, words.count(p));
                    int[] starts = words.starts(p);
                    // a span between two word boundaries, as the packer cuts them
                    List<Integer> cuts = new ArrayList<>();
                    for (int i = 0; i <= p.length(); i++) {
                        boolean wordStart = i < p.length() && !Character.isWhitespace(p.charAt(i))
                            && (i == 0 || Character.isWhitespace(p.charAt(i - 1)));
                        boolean wordEnd = i > 0 && !Character.isWhitespace(p.charAt(i - 1))
                            && (i == p.length() || Character.isWhitespace(p.charAt(i)));
                        if (wordStart || wordEnd) {
                            cuts.add(i);
                        }
                    }
                    if (cuts.size() < 2) {
                        continue;
                    }
                    int a = cuts.get(random.nextInt(cuts.size()));
                    int b = cuts.get(random.nextInt(cuts.size()));
                    int from = Math.min(a, b);
                    int to = Math.max(a, b);
                    int inSpan = 0;
                    for (int s : starts) {
                        inSpan += s >= from && s < to ? 1 : 0;
                    }
                    assertEquals(model + ": [" + p.substring(from, to) + "]", oracle.encode(p.substring(from, to)).getIds().length,
                        inSpan);
                    spans++;
                }
                assertTrue(spans > 500);
            }
        }
    }

    @Test
    public void onlyATokenizerThatSplitsAtWhitespaceFirst_withAPerCharacterNormalizer_countsWordByWord() throws Exception {
        String bert = "{\"added_tokens\": [{\"id\": 0, \"content\": \"[PAD]\"}], \"normalizer\": {\"type\": \"BertNormalizer\"},"
            + " \"pre_tokenizer\": {\"type\": \"BertPreTokenizer\"}, \"model\": {\"type\": \"WordPiece\", \"vocab\": {\"a\": 0}}}";
        assertTrue(splits(bert));
        assertTrue(splits(bert.replace("{\"type\": \"BertPreTokenizer\"}", "{\"type\": \"Sequence\", \"pretokenizers\": "
            + "[{\"type\": \"WhitespaceSplit\"}, {\"type\": \"Punctuation\"}]}")));
        assertTrue(splits(bert.replace("{\"type\": \"BertNormalizer\"}", "null")));
        assertTrue(splits(bert.replace("{\"type\": \"BertNormalizer\"}", "{\"type\": \"Sequence\", \"normalizers\": "
            + "[{\"type\": \"NFD\"}, {\"type\": \"Lowercase\"}]}")));
        // byte-level BPE and SentencePiece fold the space into the next word's first token; a Replace may span words
        assertFalse(splits(bert.replace("BertPreTokenizer", "ByteLevel")));
        assertFalse(splits(bert.replace("BertPreTokenizer", "Metaspace")));
        assertFalse(splits(bert.replace("{\"type\": \"BertPreTokenizer\"}", "{\"type\": \"Sequence\", \"pretokenizers\": "
            + "[{\"type\": \"Punctuation\"}, {\"type\": \"WhitespaceSplit\"}]}")));
        assertFalse(splits(bert.replace("{\"type\": \"BertPreTokenizer\"}", "null")));
        assertFalse(splits(bert.replace("{\"type\": \"BertNormalizer\"}", "{\"type\": \"Replace\"}")));
        assertFalse(splits(bert.replace("[PAD]", "new york")));
        assertFalse(splits("{\"pre_tokenizer\": "));
        assertFalse(splits("[]"));
    }

    private static boolean splits(String json) throws Exception {
        Path file = Files.createTempFile("tokenizer", ".json");
        try {
            Files.writeString(file, json);
            return DjlModels.splitsWordByWord(file);
        } finally {
            Files.delete(file);
        }
    }
}

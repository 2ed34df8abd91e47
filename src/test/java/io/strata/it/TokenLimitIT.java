package io.strata.it;

import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import io.strata.chunking.TestTexts;
import org.opensearch.client.ResponseException;

import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The embedding model's token limit and θ in tokens ({@code max_tokens}) on a real node, checked with the model's own
 * tokenizer.json read in the test (the oracle): what e5-small-v2 is fed for a chunk is "passage: ", the text and its
 * two special tokens, and it takes 512.
 */
@SuppressWarnings("unchecked")
public class TokenLimitIT extends StrataRestTestCase {
    private static final String MODEL = "e5-small-v2-q";
    private static HuggingFaceTokenizer tokenizer;

    private static synchronized HuggingFaceTokenizer tokenizer() throws Exception {
        if (tokenizer == null) {
            tokenizer = modelTokenizer(MODEL);
        }
        return tokenizer;
    }

    /** Tokens e5 is fed for a chunk (no truncation: the oracle sees what would be cut). */
    private static int fed(String text) throws Exception {
        return tokenizer().encode("passage: " + text).getIds().length;
    }

    private static int alone(String text) throws Exception {
        return tokenizer().encode(text, false, false).getIds().length;
    }

    /** Few words, many tokens: long numbers, URLs, identifiers, CJK and emoji. */
    private static String tokenDense(int paragraphs) {
        StringBuilder sb = new StringBuilder();
        for (int p = 0; p < paragraphs; p++) {
            sb.append(String.format(Locale.ROOT, "Record %d lists https://example.org/archive/%d/items?id=%d&page=%d#section-%d "
                + "with checksum %d%d and the identifier %s. ", p, p * 7919, p * 104729, p, p, 31415926535L + p, 27182818284L * p,
                "x7Fq9Zr2Lm8Kt4Wv6Yb1Nc3Pd5Hs0Jg".repeat(3)));
            sb.append("東京都の図書館は二〇二六年に新しい目録を公開しました。");
            sb.append("Status 😀✅ ratio=3.14159265358979323846264338327950288419716939937510.\n\n");
        }
        return sb.toString();
    }

    private static long truncated(Map<String, Long> stats) {
        return stats.getOrDefault("inference.models." + MODEL + ".truncated", 0L);
    }

    /**
     * Every stored chunk (parents and their children) of {@code id}: text at its offsets, and what each embedded one is
     * fed; a parent above it has no vector of its own (issue 46).
     */
    private static void assertStoredChunks(String chunkIndex, String id, String body, int maxFed) throws Exception {
        List<Map<String, Object>> chunks = chunksOf(chunkIndex, id);
        assertFalse(chunks.isEmpty());
        for (Map<String, Object> chunk : chunks) {
            String text = (String) chunk.get("text");
            assertEquals(body.substring((Integer) chunk.get("start"), (Integer) chunk.get("end")), text);
            assertEquals("parent of " + fed(text) + " tokens", fed(text) <= maxFed, chunk.get("embedding") != null);
            for (Map<String, Object> child : (List<Map<String, Object>>) chunk.get("children")) {
                if (child.get("text") == null) {
                    continue; // the parent as its own level-0 child: a vector only
                }
                String childText = (String) child.get("text");
                assertEquals(body.substring((Integer) child.get("start"), (Integer) child.get("end")), childText);
                assertTrue("child of " + fed(childText) + " tokens", fed(childText) <= maxFed);
            }
        }
    }

    public void testDefaultPipeline_whenTextIsTokenDense_noStoredChunkExceedsTheLimit_andNothingIsTruncated() throws Exception {
        putPipeline("tok-default", "{\"field\": \"body\", \"target_index\": \"tok-default-chunks\"}");
        String body = tokenDense(12);
        Map<String, Long> before = ClusterStats.summed();
        assertEquals(false, bulk("tok-default", "tok-default", Map.of("d1", Map.of("body", body))).get("errors"));
        Map<String, Long> after = ClusterStats.summed();
        // before issue 21 the default θ of 300 words put ~1,900 tokens in one parent: e5 cut it to 512
        assertEquals(0, truncated(after) - truncated(before));
        assertStoredChunks("tok-default-chunks", "d1", body, 512);
        assertTrue(ClusterStats.delta(before, after, "ingest.limit_splits") > 0);
    }

    public void testMaxTokens_pipeline_cutsParentsAndChildrenInTheModelsTokens() throws Exception {
        putPipeline("tok-128", "{\"field\": \"body\", \"target_index\": \"tok-128-chunks\", "
            + "\"strategy\": {\"type\": \"recursive\", \"max_tokens\": 128}}");
        String body = tokenDense(6) + TestTexts.emma().substring(0, 4000);
        Map<String, Long> before = ClusterStats.summed();
        assertEquals(false, bulk("tok-128", "tok-128", Map.of("d1", Map.of("body", body))).get("errors"));
        assertEquals(0, truncated(ClusterStats.summed()) - truncated(before));
        List<Map<String, Object>> chunks = chunksOf("tok-128-chunks", "d1");
        int largest = 0;
        for (Map<String, Object> chunk : chunks) {
            String text = (String) chunk.get("text");
            assertEquals(body.substring((Integer) chunk.get("start"), (Integer) chunk.get("end")), text);
            assertTrue(alone(text) + " tokens: " + text, alone(text) <= 128);
            largest = Math.max(largest, alone(text));
            for (Map<String, Object> child : (List<Map<String, Object>>) chunk.get("children")) {
                if (child.get("text") != null) {
                    int level = (Integer) child.get("level");
                    // a child below a quarter of its level joins a neighbour: at most that quarter more
                    assertTrue(alone((String) child.get("text")) < (level == 1 ? 64 : 32) * 1.25);
                }
            }
        }
        assertTrue("parents are θ-sized: " + largest, largest > 100);
    }

    public void testChunkPreview_reportsTokensPerChunkAndTheLimitsCuts() throws Exception {
        String body = tokenDense(8);
        Map<String, Object> r = call("POST", "/_plugins/_strata/_chunk", json(Map.of("text", body)));
        Map<String, Object> tokens = (Map<String, Object>) r.get("tokens");
        assertEquals(MODEL, tokens.get("model"));
        assertEquals(512, tokens.get("limit"));
        assertEquals(0, tokens.get("truncated"));
        assertTrue((Integer) tokens.get("limit_splits") > 0);
        assertEquals(300, r.get("max_words"));
        for (Map<String, Object> parent : (List<Map<String, Object>>) r.get("parents")) {
            assertEquals(fed((String) parent.get("text")), parent.get("tokens"));
            assertNull(parent.get("truncated"));
            for (Map<String, Object> child : (List<Map<String, Object>>) parent.get("children")) {
                assertEquals(fed((String) child.get("text")), child.get("tokens"));
            }
        }
        r = call("POST", "/_plugins/_strata/_chunk", json(Map.of("text", body, "strategy", Map.of("type", "sentence", "max_tokens", 64))));
        assertEquals(64, r.get("max_tokens"));
        assertNull(r.get("max_words"));
        for (Map<String, Object> parent : (List<Map<String, Object>>) r.get("parents")) {
            assertTrue(alone((String) parent.get("text")) <= 64);
        }
    }

    public void testMaxTokens_badConfig_is400NamingTheField() throws Exception {
        ResponseException both = callFailing("PUT", "/_ingest/pipeline/tok-bad", """
            {"processors": [{"multi_granular_chunking": {"field": "body", "target_index": "tok-bad-chunks",
              "strategy": {"type": "semantic", "max_words": 200, "max_tokens": 200}}}]}""");
        assertEquals(400, both.getResponse().getStatusLine().getStatusCode());
        assertTrue(both.getMessage(), both.getMessage().contains("[strategy.max_words] and [strategy.max_tokens] cannot be combined"));
        ResponseException tooMany = callFailing("POST", "/_plugins/_strata/_chunk", """
            {"text": "a b c", "strategy": {"type": "recursive", "max_tokens": 100000}}""");
        assertEquals(400, tooMany.getResponse().getStatusLine().getStatusCode());
        assertTrue(tooMany.getMessage(), tooMany.getMessage().contains("[strategy.max_tokens] must be an integer in [1, 32768], got [100000]"));
        // an ml-commons embedding model's tokenizer is not reachable from Strata: no θ in its tokens
        ResponseException remote = callFailing("PUT", "/_ingest/pipeline/tok-bad", """
            {"processors": [{"multi_granular_chunking": {"field": "body", "target_index": "tok-bad-chunks", "model_id": "standin-embed",
              "strategy": {"type": "recursive", "max_tokens": 200}}}]}""");
        assertEquals(400, remote.getResponse().getStatusLine().getStatusCode());
        assertTrue(remote.getMessage(), remote.getMessage().contains("the tokenizer of ml-commons model [standin-embed] is not reachable"));
        ResponseException markdown = callFailing("POST", "/_plugins/_strata/_chunk", """
            {"text": "# A\\n\\nb c", "format": "markdown", "strategy": {"type": "recursive", "max_tokens": 100}}""");
        assertEquals(400, markdown.getResponse().getStatusLine().getStatusCode());
        assertTrue(markdown.getMessage(), markdown.getMessage().contains("[strategy.max_tokens] is supported with [format] text only"));
    }
}

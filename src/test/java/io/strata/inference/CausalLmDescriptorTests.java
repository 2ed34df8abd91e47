package io.strata.inference;

import io.strata.model.ModelRef;
import io.strata.stats.StrataStats;
import org.junit.Test;
import org.opensearch.common.settings.Settings;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/** {@code "task": "causal_lm"} in model.json, and how the inference service tells causal LMs from embedders. */
public class CausalLmDescriptorTests {

    private static Path modelDir(String name, String json) throws IOException {
        Path dir = Files.createTempDirectory("strata-models").resolve(name);
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("model.json"), json);
        Files.writeString(dir.resolve("m.onnx"), "");
        Files.writeString(dir.resolve("t.json"), "{}");
        return dir;
    }

    private static String error(String name, String json) throws IOException {
        Path dir = modelDir(name, json);
        return assertThrows(IllegalArgumentException.class, () -> ModelDescriptor.read(name, dir)).getMessage();
    }

    @Test
    public void testRead_causalLmFixture_hasContextAndSpecialTokens() throws Exception {
        ModelDescriptor d = ModelDescriptor.read("strata-tiny-gpt", DjlCausalLmTests.FIXTURE);
        assertTrue(d.isCausalLm());
        assertEquals(ModelDescriptor.Engine.ONNX, d.engine());
        assertEquals(128, d.maxTokens());
        assertEquals("<|endoftext|>", d.eosToken());
        assertEquals("<|endoftext|>", d.bosToken());
    }

    @Test
    public void testRead_chatTemplate_wrapsInstructions_andNeedsOnePromptSlot() throws Exception {
        String base = "{\"task\": \"causal_lm\", \"engine\": \"onnx\", \"model_file\": \"m.onnx\", \"tokenizer_file\": \"t.json\","
            + " \"max_tokens\": 64, \"eos_token\": \"</s>\", \"chat_template\": ";
        ModelDescriptor d = ModelDescriptor.read("lm", modelDir("lm", base + "\"<|im_start|>user\\n{prompt}<|im_end|>\\n<|im_start|>assistant\\n\"}"));
        assertEquals("<|im_start|>user\nSplit?<|im_end|>\n<|im_start|>assistant\n", d.asChat("Split?"));
        assertEquals("Split?", ModelDescriptor.read("strata-tiny-gpt", DjlCausalLmTests.FIXTURE).asChat("Split?"));
        for (String bad : new String[] {"\"no slot\"", "\"{prompt} twice {prompt}\"", "3"}) {
            String e = error("lm", base + bad + "}");
            assertTrue(e, e.startsWith("model [lm] model.json [chat_template] must be a string with [{prompt}] exactly once"));
        }
        String e = error("emb", "{\"engine\": \"onnx\", \"model_file\": \"m.onnx\", \"tokenizer_file\": \"t.json\", \"dimension\": 4,"
            + " \"chat_template\": \"{prompt}\"}");
        assertTrue(e, e.contains("[chat_template] does not apply to a model with [task] [embedding]"));
    }

    @Test
    public void testRead_withoutTask_isAnEmbeddingModel() throws Exception {
        Path dir = modelDir("emb", "{\"engine\": \"onnx\", \"model_file\": \"m.onnx\", \"tokenizer_file\": \"t.json\", \"dimension\": 4}");
        ModelDescriptor d = ModelDescriptor.read("emb", dir);
        assertEquals(ModelDescriptor.Task.EMBEDDING, d.task());
        assertNull(d.eosToken());
    }

    @Test
    public void testRead_causalLmWithoutEosToken_namesModelAndKey() throws Exception {
        String e = error("lm", "{\"task\": \"causal_lm\", \"engine\": \"onnx\", \"model_file\": \"m.onnx\", \"tokenizer_file\": \"t.json\","
            + " \"max_tokens\": 64}");
        assertTrue(e, e.startsWith("model [lm] model.json needs [eos_token]"));
    }

    @Test
    public void testRead_causalLmWithoutMaxTokens_namesModelAndKey() throws Exception {
        String e = error("lm", "{\"task\": \"causal_lm\", \"engine\": \"onnx\", \"model_file\": \"m.onnx\", \"tokenizer_file\": \"t.json\","
            + " \"eos_token\": \"</s>\"}");
        assertTrue(e, e.startsWith("model [lm] model.json [max_tokens] must be a positive integer"));
    }

    @Test
    public void testRead_causalLmWithEmbeddingKeys_isRejected() throws Exception {
        String e = error("lm", "{\"task\": \"causal_lm\", \"engine\": \"onnx\", \"model_file\": \"m.onnx\", \"tokenizer_file\": \"t.json\","
            + " \"max_tokens\": 64, \"eos_token\": \"</s>\", \"dimension\": 384}");
        assertTrue(e, e.contains("model [lm] model.json [dimension] does not apply to a model with [task] [causal_lm]"));
    }

    @Test
    public void testRead_embeddingWithEosToken_isRejected() throws Exception {
        String e = error("emb", "{\"engine\": \"onnx\", \"model_file\": \"m.onnx\", \"tokenizer_file\": \"t.json\", \"dimension\": 4,"
            + " \"eos_token\": \"</s>\"}");
        assertTrue(e, e.contains("model [emb] model.json [eos_token] does not apply to a model with [task] [embedding]"));
    }

    @Test
    public void testRead_unknownTask_listsTheTasks() throws Exception {
        String e = error("x", "{\"task\": \"seq2seq\", \"engine\": \"onnx\", \"model_file\": \"m.onnx\", \"tokenizer_file\": \"t.json\"}");
        assertTrue(e, e.contains("model [x] model.json [task] must be one of [embedding, causal_lm], got [seq2seq]"));
    }

    private static InferenceService serviceWithFixtureAndAnEmbedder() throws IOException {
        Path emb = modelDir("some-embedder", "{\"engine\": \"onnx\", \"model_file\": \"m.onnx\", \"tokenizer_file\": \"t.json\", \"dimension\": 4}");
        Path models = emb.getParent();
        Path lm = Files.createDirectories(models.resolve("strata-tiny-gpt"));
        try (var files = Files.list(DjlCausalLmTests.FIXTURE)) {
            for (Path f : files.toList()) {
                Files.copy(f, lm.resolve(f.getFileName().toString()));
            }
        }
        return new InferenceService(Settings.EMPTY, models, () -> null, null, null, new StrataStats());
    }

    @Test
    public void testValidateCausalLm_embeddingModelAsLlm_namesTheField() throws Exception {
        InferenceService service = serviceWithFixtureAndAnEmbedder();
        String e = assertThrows(IllegalArgumentException.class, () -> service.registry().validateCausalLm("chunking.llm", "some-embedder")).getMessage();
        assertTrue(e, e.startsWith("[chunking.llm] model [some-embedder] is an embedding model, not a causal language model"));
        assertTrue(e, e.endsWith("causal language models: [strata-tiny-gpt]"));
        String unknown = assertThrows(IllegalArgumentException.class, () -> service.registry().validateCausalLm("chunking.llm", "gpt-9")).getMessage();
        assertTrue(unknown, unknown.startsWith("[chunking.llm] [model] unknown model [gpt-9]"));
        service.registry().validateCausalLm("chunking.llm", "strata-tiny-gpt");
    }

    @Test
    public void testValidate_causalLmAsEmbeddingModel_isRejected() throws Exception {
        InferenceService service = serviceWithFixtureAndAnEmbedder();
        String e = assertThrows(IllegalArgumentException.class,
            () -> service.validate("[strata]", ModelRef.embedded("strata-tiny-gpt"))).getMessage();
        assertTrue(e, e.contains("[model] [strata-tiny-gpt] is a causal language model, not an embedding model; available: [some-embedder]"));
    }

    @Test
    public void testLazyCausalLm_loadsOnFirstCallAndCaches() throws Exception {
        InferenceService service = serviceWithFixtureAndAnEmbedder();
        try {
            var lm = service.lazyCausalLm("llm", "strata-tiny-gpt");
            double[] lp = lm.continuationLogProbs("Answer 1 or 2: ", java.util.List.of("1", "2"));
            assertEquals(2, lp.length);
            assertTrue(lp[0] < 0 && lp[1] < 0);
            assertTrue(service.embedded().causalLm("strata-tiny-gpt") == service.embedded().causalLm("strata-tiny-gpt"));
        } finally {
            service.close();
        }
    }
}

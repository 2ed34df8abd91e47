package io.strata.inference;

import ai.djl.Device;
import ai.djl.engine.Engine;
import org.junit.Assume;
import org.junit.Test;
import org.opensearch.common.xcontent.XContentHelper;
import org.opensearch.common.xcontent.json.JsonXContent;

import java.io.InputStream;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

/**
 * The fixture's TorchScript export (model.pt) through DJL's PyTorch engine gives PyTorch's numbers. Runs only with the
 * engine on the classpath, which only the {@code torchscript} profile adds:
 * {@code mvn -Ptorchscript test -Dtest=TorchScriptCausalLmTests} (PyTorch on the classpath would change which engine DJL
 * falls back to in the ONNX tests, so it stays out of the normal test run).
 */
public class TorchScriptCausalLmTests {

    @Test
    @SuppressWarnings("unchecked")
    public void testLogProbs_ofTheTorchScriptExport_matchPyTorch() throws Exception {
        if (Boolean.getBoolean("strata.torchscript")) { // bin/strata-test runs it with the engine: missing it is a failure there
            assertTrue("PyTorch engine not on the classpath", Engine.hasEngine("PyTorch"));
        }
        Assume.assumeTrue("PyTorch engine not on the classpath (mvn -Ptorchscript)", Engine.hasEngine("PyTorch"));
        ModelDescriptor onnx = ModelDescriptor.read("strata-tiny-gpt", DjlCausalLmTests.FIXTURE);
        ModelDescriptor d = new ModelDescriptor(onnx.name(), onnx.dir(), ModelDescriptor.Engine.PYTORCH, "model.pt", onnx.tokenizerFile(),
            0, onnx.maxTokens(), ModelDescriptor.Pooling.NONE, false, "", "", ModelDescriptor.Task.CAUSAL_LM, onnx.eosToken(),
            onnx.bosToken(), null);
        Map<String, Object> reference;
        try (InputStream in = Files.newInputStream(DjlCausalLmTests.FIXTURE.resolve("reference.json"))) {
            reference = XContentHelper.convertToMap(JsonXContent.jsonXContent, in, false);
        }
        try (DjlCausalLm lm = DjlCausalLm.load(d, Device.cpu(), 1, 1)) {
            for (Map<String, Object> c : (List<Map<String, Object>>) reference.get("log_probs")) {
                List<Number> expected = (List<Number>) c.get("log_probs");
                double[] actual = lm.logProbs((String) c.get("text")).logProbs();
                assertEquals(expected.size(), actual.length);
                for (int i = 0; i < actual.length; i++) {
                    assertEquals(expected.get(i).doubleValue(), actual[i], 1e-4);
                }
            }
        }
    }
}

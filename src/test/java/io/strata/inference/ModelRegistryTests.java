package io.strata.inference;

import io.strata.model.ModelRef;
import org.junit.Test;
import org.opensearch.common.settings.Settings;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;

/** What {@link ModelRegistry}'s errors tell a caller about the node's model folders. */
public class ModelRegistryTests {

    @Test
    public void testValidate_unknownModel_namesTheFolderRelativeToTheNodeNeverItsAbsolutePath() throws Exception {
        Path models = Files.createTempDirectory("strata-config").resolve("strata").resolve("models");
        Files.createDirectories(models.resolve("real-model"));
        Files.writeString(models.resolve("real-model").resolve("model.json"), "{}");
        ModelRegistry registry = new ModelRegistry(Settings.EMPTY, models);

        String unknown = assertThrows(IllegalArgumentException.class, () -> registry.validate("[p]", ModelRef.embedded("x"))).getMessage();
        assertEquals("[model] unknown model [x]: no folder [config/strata/models/x]; available: [real-model]", unknown);

        Files.createDirectories(models.resolve("empty"));
        String noDescriptor = assertThrows(IllegalArgumentException.class, () -> registry.descriptor("empty")).getMessage();
        assertEquals("model [empty] has no model.json in [config/strata/models/empty]", noDescriptor);

        String absolute = models.toAbsolutePath().toString();
        assertFalse(unknown, unknown.contains(absolute));
        assertFalse(noDescriptor, noDescriptor.contains(absolute));
    }
}

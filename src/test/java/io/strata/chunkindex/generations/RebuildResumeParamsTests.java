package io.strata.chunkindex.generations;

import org.opensearch.cluster.metadata.Metadata;
import org.opensearch.common.io.stream.BytesStreamOutput;
import org.opensearch.common.xcontent.json.JsonXContent;
import org.opensearch.core.ParseField;
import org.opensearch.core.common.io.stream.NamedWriteableAwareStreamInput;
import org.opensearch.core.common.io.stream.NamedWriteableRegistry;
import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.xcontent.DeprecationHandler;
import org.opensearch.core.xcontent.NamedXContentRegistry;
import org.opensearch.core.xcontent.ToXContent;
import org.opensearch.core.xcontent.XContentBuilder;
import org.opensearch.core.xcontent.XContentParser;
import org.opensearch.persistent.PersistentTaskParams;
import org.opensearch.persistent.PersistentTasksCustomMetadata;
import org.junit.Test;

import java.io.IOException;
import java.util.List;
import java.util.Map;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

/**
 * The params of a rebuild's persistent task survive the two ways the cluster state carries them: the wire between nodes
 * and the cluster state on disk (the gateway context, parsed back when a node restarts), through the persistent tasks
 * metadata as the node reads it; the API context ({@code GET _cluster/state}) does not show the caller's name and roles.
 */
public class RebuildResumeParamsTests {
    private static final RebuildResumeParams SECURED = new RebuildResumeParams("books", "uuid-1", "books-chunks-g2", "books-chunking",
        "c0ffee", 25f, "node-a", "ann|e", List.of("rebuilder", "readers"), true);
    private static final RebuildResumeParams PLAIN = new RebuildResumeParams("books", "uuid-1", "books-chunks-g2", "books-chunking",
        null, Float.POSITIVE_INFINITY, "node-a", null, List.of(), false);

    private static PersistentTasksCustomMetadata tasks(RebuildResumeParams params) {
        return PersistentTasksCustomMetadata.builder().addTask(RebuildResumeParams.taskId(params.sourceUuid()), RebuildResumeParams.NAME,
            params, new PersistentTasksCustomMetadata.Assignment("node-a", "the node of the live build")).build();
    }

    private static RebuildResumeParams paramsOf(PersistentTasksCustomMetadata tasks, String sourceUuid) {
        return (RebuildResumeParams) tasks.getTask(RebuildResumeParams.taskId(sourceUuid)).getParams();
    }

    @Test
    public void testWire_roundTripsThroughThePersistentTasksMetadata() throws IOException {
        NamedWriteableRegistry registry = new NamedWriteableRegistry(List.of(
            new NamedWriteableRegistry.Entry(PersistentTaskParams.class, RebuildResumeParams.NAME, RebuildResumeParams::new)));
        for (RebuildResumeParams params : List.of(SECURED, PLAIN)) {
            BytesStreamOutput out = new BytesStreamOutput();
            tasks(params).writeTo(out);
            StreamInput in = new NamedWriteableAwareStreamInput(out.bytes().streamInput(), registry);
            assertEquals(params, paramsOf(new PersistentTasksCustomMetadata(in), params.sourceUuid()));
        }
    }

    private static String json(RebuildResumeParams params, String context) throws IOException {
        XContentBuilder builder = JsonXContent.contentBuilder();
        builder.startObject();
        tasks(params).toXContent(builder, new ToXContent.MapParams(Map.of(Metadata.CONTEXT_MODE_PARAM, context)));
        builder.endObject();
        return builder.toString();
    }

    @Test
    public void testGatewayXContent_roundTripsThroughThePersistentTasksMetadata() throws IOException {
        NamedXContentRegistry registry = new NamedXContentRegistry(List.of(new NamedXContentRegistry.Entry(PersistentTaskParams.class,
            new ParseField(RebuildResumeParams.NAME), RebuildResumeParams::fromXContent)));
        for (RebuildResumeParams params : List.of(SECURED, PLAIN)) {
            String json = json(params, Metadata.CONTEXT_MODE_GATEWAY);
            try (XContentParser parser = JsonXContent.jsonXContent.createParser(registry, DeprecationHandler.THROW_UNSUPPORTED_OPERATION, json)) {
                assertEquals(json, params, paramsOf(PersistentTasksCustomMetadata.fromXContent(parser), params.sourceUuid()));
            }
        }
    }

    @Test
    public void testApiXContent_showsThatACallerIsStored_notItsNameOrRoles() throws IOException {
        String json = json(SECURED, Metadata.CONTEXT_MODE_API);
        assertTrue(json, json.contains("\"caller\":\"stored\"") && json.contains("\"generation_index\":\"books-chunks-g2\""));
        assertFalse(json, json.contains("ann") || json.contains("rebuilder"));
    }
}

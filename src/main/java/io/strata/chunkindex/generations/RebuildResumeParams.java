package io.strata.chunkindex.generations;

import org.opensearch.Version;
import org.opensearch.cluster.metadata.Metadata;
import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.common.io.stream.StreamOutput;
import org.opensearch.core.xcontent.XContentBuilder;
import org.opensearch.core.xcontent.XContentParser;
import org.opensearch.persistent.PersistentTaskParams;

import java.io.IOException;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What the persistent task of a running {@code _rebuild} keeps in cluster state (which no user writes), so that another node
 * can resume the build if its node leaves: the source index (name and UUID), the generation it builds, the pipeline and
 * config identity, the throttle ({@code requests_per_second}, -1 for none), the node that runs the live build, and the
 * caller as the security plugin named them when the build started ({@link CallerIdentity}). Written in full to the
 * cluster state on disk; {@code GET _cluster/state} (the API context) shows the caller's name and roles only as
 * {@code "caller": "stored"}.
 */
public record RebuildResumeParams(String sourceIndex, String sourceUuid, String generationIndex, String pipeline, String config,
                                  float requestsPerSecond, String node, String user, List<String> roles, boolean secured)
    implements PersistentTaskParams {
    public static final String NAME = "strata_rebuild_resume";

    public RebuildResumeParams {
        roles = List.copyOf(roles);
    }

    public RebuildResumeParams(StreamInput in) throws IOException {
        this(in.readString(), in.readString(), in.readString(), in.readString(), in.readOptionalString(), in.readFloat(),
            in.readString(), in.readOptionalString(), in.readStringList(), in.readBoolean());
    }

    /** The id of the persistent task of a rebuild of source index {@code sourceUuid}: at most one per source. */
    public static String taskId(String sourceUuid) {
        return "strata-rebuild-" + sourceUuid;
    }

    CallerIdentity caller() {
        return new CallerIdentity(user, roles, secured);
    }

    @Override
    public void writeTo(StreamOutput out) throws IOException {
        out.writeString(sourceIndex);
        out.writeString(sourceUuid);
        out.writeString(generationIndex);
        out.writeString(pipeline);
        out.writeOptionalString(config);
        out.writeFloat(requestsPerSecond);
        out.writeString(node);
        out.writeOptionalString(user);
        out.writeStringCollection(roles);
        out.writeBoolean(secured);
    }

    @Override
    public String getWriteableName() {
        return NAME;
    }

    @Override
    public Version getMinimalSupportedVersion() {
        return Version.V_3_0_0;
    }

    @Override
    public XContentBuilder toXContent(XContentBuilder builder, Params params) throws IOException {
        builder.startObject();
        builder.field("source_index", sourceIndex);
        builder.field("source_index_uuid", sourceUuid);
        builder.field("generation_index", generationIndex);
        builder.field("pipeline", pipeline);
        if (config != null) {
            builder.field("config", config);
        }
        builder.field("requests_per_second", Float.isFinite(requestsPerSecond) ? requestsPerSecond : -1f);
        builder.field("node", node);
        builder.field("secured", secured);
        if (Metadata.CONTEXT_MODE_API.equals(params.param(Metadata.CONTEXT_MODE_PARAM, Metadata.CONTEXT_MODE_API))) {
            if (user != null) {
                builder.field("caller", "stored"); // who and with which roles is the cluster's to know, not every state reader's
            }
        } else {
            if (user != null) {
                builder.field("user", user);
            }
            builder.field("roles", roles);
        }
        return builder.endObject();
    }

    /** As {@link #toXContent} wrote it in the gateway context (the cluster state on disk). */
    public static RebuildResumeParams fromXContent(XContentParser parser) throws IOException {
        Map<String, Object> m = parser.map();
        float rps = m.get("requests_per_second") instanceof Number n ? n.floatValue() : -1f;
        List<String> roles = m.get("roles") instanceof List<?> l ? l.stream().map(String::valueOf).toList() : List.of();
        return new RebuildResumeParams(string(m, "source_index"), string(m, "source_index_uuid"), string(m, "generation_index"),
            string(m, "pipeline"), (String) m.get("config"), rps > 0 ? rps : Float.POSITIVE_INFINITY, string(m, "node"),
            (String) m.get("user"), roles, Boolean.TRUE.equals(m.get("secured")));
    }

    private static String string(Map<String, Object> m, String key) {
        if (!(m.get(key) instanceof String s)) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "[%s] needs [%s]", NAME, key));
        }
        return s;
    }
}

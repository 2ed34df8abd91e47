package io.strata.transport;

import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.common.io.stream.StreamOutput;
import org.opensearch.core.xcontent.XContentBuilder;
import org.opensearch.tasks.Task;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The status of a {@link ProgressTask}: the work's counters as it reported them (strings and numbers), shown as they are by
 * {@code GET _tasks}. Named, so a node that did not run the task can read it off the wire (registered by the plugin).
 */
public final class ProgressStatus implements Task.Status {
    public static final String NAME = "strata_progress";

    private final Map<String, Object> values;

    public ProgressStatus(Map<String, Object> values) {
        this.values = new LinkedHashMap<>(values);
    }

    public ProgressStatus(StreamInput in) throws IOException {
        this.values = in.readMap();
    }

    @Override
    public void writeTo(StreamOutput out) throws IOException {
        out.writeMap(values);
    }

    @Override
    public String getWriteableName() {
        return NAME;
    }

    public Map<String, Object> values() {
        return values;
    }

    @Override
    public XContentBuilder toXContent(XContentBuilder builder, Params params) throws IOException {
        return builder.map(values);
    }
}

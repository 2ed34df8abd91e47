package io.strata.transport;

import org.opensearch.action.ActionRequest;
import org.opensearch.action.ActionRequestValidationException;
import org.opensearch.action.IndicesRequest;
import org.opensearch.action.support.IndicesOptions;
import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.common.io.stream.StreamOutput;

import java.io.IOException;
import java.util.Arrays;

/**
 * A request on one source index ({@code _reconcile}, {@code _rebuild}, {@code generations}): the index is what a role's
 * index permission is checked against, resolved by the security plugin to exactly one concrete index.
 */
public abstract class SourceIndexRequest extends ActionRequest implements IndicesRequest.Replaceable {
    private final String action;
    private String index;

    /** @param action the REST action's name in messages, e.g. {@code _reconcile} */
    protected SourceIndexRequest(String action, String index) {
        this.action = action;
        this.index = index;
    }

    protected SourceIndexRequest(String action, StreamInput in) throws IOException {
        super(in);
        this.action = action;
        this.index = in.readString();
    }

    @Override
    public void writeTo(StreamOutput out) throws IOException {
        super.writeTo(out);
        out.writeString(index);
    }

    public String index() {
        return index;
    }

    @Override
    public String[] indices() {
        return new String[] { index };
    }

    /**
     * Replaceable so that the security plugin resolves the one index this request names (a plain {@link IndicesRequest}
     * of a plugin is evaluated against every index). Only one concrete name can come back.
     */
    @Override
    public SourceIndexRequest indices(String... indices) {
        if (indices == null || indices.length != 1) {
            throw new IllegalArgumentException("[" + action + "] takes exactly one source index, got " + Arrays.toString(indices));
        }
        this.index = indices[0];
        return this;
    }

    @Override
    public IndicesOptions indicesOptions() {
        // one concrete name, no wildcards or aliases (the handlers refuse them with a clear message); the source may be
        // gone with its chunk indices left over, which _reconcile handles itself
        return IndicesOptions.strictSingleIndexNoExpandForbidClosed();
    }

    /** The validation error of a missing index: what the index is for ({@code whose chunks to check}) and an example call. */
    protected ActionRequestValidationException validateIndex(String what, String example) {
        if (index == null || index.isBlank()) {
            ActionRequestValidationException e = new ActionRequestValidationException();
            e.addValidationError("[" + action + "] needs [index]: the source index " + what + ", e.g. " + example);
            return e;
        }
        return null;
    }
}

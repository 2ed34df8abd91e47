package io.strata.chunkindex.reconcile;

import io.strata.transport.SourceIndexTaskRequest;
import org.opensearch.action.ActionRequestValidationException;
import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.common.io.stream.StreamOutput;

import java.io.IOException;

/** Reconcile one source index (existing, or deleted with its chunk indices left); {@code dryRun} only reports. */
public final class ReconcileRequest extends SourceIndexTaskRequest {
    private final boolean dryRun;

    public ReconcileRequest(String index, boolean dryRun) {
        super("_reconcile", index);
        this.dryRun = dryRun;
    }

    public ReconcileRequest(StreamInput in) throws IOException {
        super("_reconcile", in);
        this.dryRun = in.readBoolean();
    }

    @Override
    public void writeTo(StreamOutput out) throws IOException {
        super.writeTo(out);
        out.writeBoolean(dryRun);
    }

    public boolean dryRun() {
        return dryRun;
    }

    @Override
    public String getDescription() {
        return "reconcile [" + index() + "]" + (dryRun ? " dry_run" : "");
    }

    @Override
    public ActionRequestValidationException validate() {
        return validateIndex("whose chunks to check", "POST _plugins/_strata/_reconcile?index=books");
    }
}

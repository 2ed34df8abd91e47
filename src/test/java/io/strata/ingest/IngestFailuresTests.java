package io.strata.ingest;

import io.strata.chunkindex.ChunkWriteException;
import io.strata.stats.StrataStats.Failure;
import org.junit.Test;
import org.opensearch.OpenSearchStatusException;
import org.opensearch.core.concurrency.OpenSearchRejectedExecutionException;
import org.opensearch.core.rest.RestStatus;
import org.opensearch.index.engine.VersionConflictEngineException;
import org.opensearch.core.index.shard.ShardId;
import org.opensearch.transport.RemoteTransportException;

import static org.junit.Assert.assertEquals;

/** Failures of the processor, by reason, as the stats count them. */
public class IngestFailuresTests {

    @Test
    public void testOf_classifiesByStatusAndType() {
        assertEquals(Failure.BAD_INPUT, IngestFailures.of(new IllegalArgumentException("[multi_granular_chunking] field [body] is empty")));
        assertEquals(Failure.BAD_INPUT, IngestFailures.of(new RemoteTransportException("node-1", new IllegalArgumentException("x"))));
        assertEquals(Failure.REJECTED, IngestFailures.of(new OpenSearchRejectedExecutionException("queue full")));
        ShardId shard = new ShardId("c", "_na_", 0);
        assertEquals(Failure.WRITE, IngestFailures.of(new ChunkWriteException("writing chunks to [c] failed",
            new VersionConflictEngineException(shard, "c:0", "conflict"))));
        assertEquals("a rejected chunk write is back-pressure", Failure.REJECTED, IngestFailures.of(new ChunkWriteException(
            "writing chunks to [c] failed", new OpenSearchRejectedExecutionException("write queue full"))));
        assertEquals(Failure.OTHER, IngestFailures.of(new IllegalStateException("boom")));
        assertEquals(Failure.OTHER, IngestFailures.of(new OpenSearchStatusException("unavailable", RestStatus.SERVICE_UNAVAILABLE)));
    }

    @Test
    public void testOfModel_isModelUnlessTheInferenceQueueIsFull() {
        assertEquals(Failure.MODEL, IngestFailures.ofModel(new OpenSearchStatusException("[model_id] [x] unknown model", RestStatus.NOT_FOUND)));
        assertEquals(Failure.MODEL, IngestFailures.ofModel(new IllegalStateException("model [bge] inference failed")));
        assertEquals(Failure.REJECTED, IngestFailures.ofModel(new OpenSearchRejectedExecutionException("strata_inference queue full")));
    }
}

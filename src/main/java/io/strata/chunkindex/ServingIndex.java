package io.strata.chunkindex;

import org.opensearch.cluster.metadata.IndexAbstraction;
import org.opensearch.cluster.metadata.IndexMetadata;
import org.opensearch.cluster.metadata.Metadata;

/**
 * The one place a chunk index name becomes the concrete index that holds its chunks now. A pipeline's {@code target_index}
 * is a name: a concrete index, or, once a generation was swapped in ({@code _swap}), an alias whose write index is the
 * serving generation {@code <name>-g<k>}. Writes, deletes, re-chunking and {@code _reconcile} act on that index, and the
 * registry registers concrete indices, so every comparison of a pipeline's target with a registered or stored chunk index
 * goes through here. Summaries keep the name: a later swap moves every document with it.
 */
public final class ServingIndex {
    private ServingIndex() {}

    /** The write index of alias {@code name}; {@code name} itself when it is a concrete index, absent, or has no write index. */
    public static String of(Metadata metadata, String name) {
        if (name == null) {
            return null;
        }
        IndexAbstraction found = metadata.getIndicesLookup().get(name);
        if (found == null || found.getType() != IndexAbstraction.Type.ALIAS) {
            return name;
        }
        IndexMetadata write = found.getWriteIndex();
        return write == null ? name : write.getIndex().getName();
    }

    /** Whether chunk index names {@code a} and {@code b} hold their chunks in the same concrete index now. */
    public static boolean same(Metadata metadata, String a, String b) {
        return a != null && b != null && (a.equals(b) || of(metadata, a).equals(of(metadata, b)));
    }
}

package io.strata.chunkindex.lifecycle;

import io.strata.chunkindex.setup.ChunkIndexSetup;
import io.strata.chunkindex.store.ChunkCommit;
import io.strata.chunkindex.store.ChunkStore;

/** The node components the bulk filter writes chunks with (created after the node's action filters). */
public record LifecycleComponents(ChunkIndexSetup setup, ChunkCommit commit, Rechunker rechunker, ChunkStore store) {}

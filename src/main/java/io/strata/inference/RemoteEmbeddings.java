package io.strata.inference;

import io.strata.model.ModelInfo;
import io.strata.chunking.Embedder;
import org.opensearch.core.action.ActionListener;

import java.util.List;

/** Embeddings computed elsewhere in the cluster (ml-commons models addressed by {@code model_id}). */
public interface RemoteEmbeddings {
    void embed(String modelId, List<String> texts, Embedder.Purpose purpose, ActionListener<List<float[]>> listener);

    /** The model's name and dimension (may run one probe inference). */
    void describe(String modelId, ActionListener<ModelInfo> listener);
}

package io.strata.inference;

import io.strata.chunking.CausalLm;
import io.strata.chunking.TextGenerator;

/** LLMs served elsewhere in the cluster (ml-commons remote models addressed by {@code model_id}). */
public interface RemoteLlms {
    /** Both roles of one remote model. Blocking: call on inference threads only. */
    interface Llm extends CausalLm, TextGenerator {}

    /** The model {@code modelId}; does not contact it (an unknown id fails on first use, naming it). */
    Llm llm(String modelId);
}

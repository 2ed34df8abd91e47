package io.strata.standin;

import org.opensearch.ml.common.transport.prediction.MLPredictionTaskAction;
import org.opensearch.plugins.ActionPlugin;
import org.opensearch.plugins.Plugin;

import java.util.List;

/**
 * Test stand-in for the ml-commons plugin: registers ml-commons' predict action ({@code cluster:admin/opensearch/ml/predict})
 * and answers it for the model ids of {@link StandinPredictAction}. Like ml-commons, it has its own copy of
 * opensearch-ml-common, so Strata's requests and these responses cross class loaders.
 */
public class MlStandinPlugin extends Plugin implements ActionPlugin {
    @Override
    public List<ActionHandler<?, ?>> getActions() {
        return List.of(new ActionHandler<>(MLPredictionTaskAction.INSTANCE, StandinPredictAction.class));
    }
}

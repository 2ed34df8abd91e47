package io.strata.standin;

import org.opensearch.common.settings.Setting;
import org.opensearch.ml.common.transport.prediction.MLPredictionTaskAction;
import org.opensearch.plugins.ActionPlugin;
import org.opensearch.plugins.Plugin;

import java.util.List;
import java.util.function.Function;

/**
 * Test stand-in for the ml-commons plugin: registers ml-commons' predict action ({@code cluster:admin/opensearch/ml/predict})
 * and answers it for the model ids of {@link StandinPredictAction}. Like ml-commons, it has its own copy of
 * opensearch-ml-common, so Strata's requests and these responses cross class loaders.
 */
public class MlStandinPlugin extends Plugin implements ActionPlugin {
    /**
     * TEST ONLY: model ids that are "down" (an outage switch for ITs). A dynamic cluster setting so that every node's
     * predict action sees the same switch at once: {@code PUT _cluster/settings {"transient": {"standin.down_models":
     * ["standin-embed"]}}} takes the model down, {@code null} brings it back.
     */
    public static final Setting<List<String>> DOWN_MODELS = Setting.listSetting("standin.down_models", List.of(), Function.identity(),
        Setting.Property.Dynamic, Setting.Property.NodeScope);

    /**
     * TEST ONLY: model ids whose predict calls hang (a stuck connector): they are never answered while the id is listed;
     * once it is removed, the held calls fail ("hang released"), so nothing leaks. Dynamic, like {@link #DOWN_MODELS}.
     */
    public static final Setting<List<String>> HANG_MODELS = Setting.listSetting("standin.hang_models", List.of(), Function.identity(),
        Setting.Property.Dynamic, Setting.Property.NodeScope);

    @Override
    public List<Setting<?>> getSettings() {
        return List.of(DOWN_MODELS, HANG_MODELS);
    }

    @Override
    public List<ActionHandler<?, ?>> getActions() {
        return List.of(new ActionHandler<>(MLPredictionTaskAction.INSTANCE, StandinPredictAction.class));
    }
}

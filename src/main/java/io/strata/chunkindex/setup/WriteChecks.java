package io.strata.chunkindex.setup;

import org.opensearch.core.action.ActionListener;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The checks, for one request (a bulk, a {@code _reconcile} run), that its caller may write each chunk index it chunks into
 * ({@link ChunkIndexSetup#checkWritable}): one check per chunk index, whose answer every document of the request shares.
 */
public final class WriteChecks {
    private final ChunkIndexSetup setup;
    /** Per chunk index, once its check answered: a one-element array holding the refusal, or null for success. */
    private final Map<String, Exception[]> outcomes = new HashMap<>();
    private final Map<String, List<ActionListener<Void>>> waiting = new HashMap<>();

    public WriteChecks(ChunkIndexSetup setup) {
        this.setup = setup;
    }

    /** Answers whether the caller may write {@code target}; the first call per chunk index checks, the others wait for it. */
    public void check(String target, ActionListener<Void> listener) {
        Exception[] known;
        synchronized (this) {
            known = outcomes.get(target);
            if (known == null) {
                List<ActionListener<Void>> queue = waiting.get(target);
                if (queue != null) {
                    queue.add(listener);
                    return;
                }
                waiting.put(target, new ArrayList<>(List.of(listener)));
            }
        }
        if (known != null) {
            answer(listener, known[0]);
            return;
        }
        setup.checkWritable(target, ActionListener.wrap(v -> done(target, null), e -> done(target, e)));
    }

    private void done(String target, Exception outcome) {
        List<ActionListener<Void>> queue;
        synchronized (this) {
            outcomes.put(target, new Exception[] { outcome });
            queue = waiting.remove(target);
        }
        for (ActionListener<Void> l : queue) {
            answer(l, outcome);
        }
    }

    private static void answer(ActionListener<Void> listener, Exception outcome) {
        if (outcome == null) {
            listener.onResponse(null);
        } else {
            listener.onFailure(outcome);
        }
    }
}

package io.strata.inference;

import org.opensearch.secure_sm.AccessController;

/**
 * Runs engine code (DJL, ONNX Runtime, PyTorch) with the plugin's own permissions and class loader: the
 * node's security agent checks every frame on the stack, and DJL finds its engines and native libraries
 * through the thread context class loader.
 */
final class Privileged {
    private Privileged() {}

    interface Call<T> {
        T call() throws Exception;
    }

    static <T> T run(Call<T> call) throws Exception {
        return AccessController.doPrivilegedChecked(() -> {
            Thread thread = Thread.currentThread();
            ClassLoader previous = thread.getContextClassLoader();
            thread.setContextClassLoader(Privileged.class.getClassLoader());
            try {
                return call.call();
            } finally {
                thread.setContextClassLoader(previous);
            }
        });
    }
}

package io.strata.inference.transport;

import org.opensearch.common.io.stream.BytesStreamOutput;
import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.common.io.stream.Writeable;

import java.io.IOException;

/**
 * Reads a message written by another plugin's copy of the same wire format (another class loader): written out
 * and read back, as ml-commons does for its requests and responses.
 */
final class CrossLoader {
    private CrossLoader() {}

    static <T> T reread(Writeable message, Writeable.Reader<T> reader, String what) {
        try (BytesStreamOutput out = new BytesStreamOutput()) {
            message.writeTo(out);
            try (StreamInput in = out.bytes().streamInput()) {
                return reader.read(in);
            }
        } catch (IOException | RuntimeException e) {
            throw new IllegalArgumentException("[" + EmbedAction.NAME + "] cannot read a " + what + " of class ["
                + message.getClass().getName() + "]: " + e.getMessage(), e);
        }
    }
}

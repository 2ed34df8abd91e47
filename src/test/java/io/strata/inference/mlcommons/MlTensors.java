package io.strata.inference.mlcommons;

import org.opensearch.common.io.stream.BytesStreamOutput;
import org.opensearch.core.action.ActionResponse;
import org.opensearch.core.common.io.stream.StreamOutput;
import org.opensearch.ml.common.output.model.MLResultDataType;
import org.opensearch.ml.common.output.model.ModelTensor;
import org.opensearch.ml.common.output.model.ModelTensorOutput;
import org.opensearch.ml.common.output.model.ModelTensors;
import org.opensearch.ml.common.transport.MLTaskResponse;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

/** Builds predict responses the way ml-commons does. */
final class MlTensors {
    private MlTensors() {}

    static ModelTensor tensor(String name, float... values) {
        Number[] data = new Number[values.length];
        for (int i = 0; i < values.length; i++) {
            data[i] = values[i];
        }
        return ModelTensor.builder().name(name).data(data).shape(new long[] {values.length}).dataType(MLResultDataType.FLOAT32).build();
    }

    /** A local TEXT_EMBEDDING model's answer: one {@link ModelTensors} per text. */
    static MLTaskResponse local(float[]... vectors) {
        List<ModelTensors> outputs = new ArrayList<>();
        for (float[] v : vectors) {
            outputs.add(new ModelTensors(List.of(tensor(PredictResponses.SENTENCE_EMBEDDING, v))));
        }
        return new MLTaskResponse(new ModelTensorOutput(outputs));
    }

    /** A remote model's answer after its connector's post-processing: one {@link ModelTensors} holding all texts. */
    static MLTaskResponse remote(float[]... vectors) {
        List<ModelTensor> tensors = new ArrayList<>();
        for (float[] v : vectors) {
            tensors.add(tensor(PredictResponses.SENTENCE_EMBEDDING, v));
        }
        return new MLTaskResponse(new ModelTensorOutput(List.of(new ModelTensors(tensors))));
    }

    /**
     * {@code response} as another class loader's object would arrive: a different class with the same wire format
     * (what ml-commons' own {@code MLTaskResponse} is to Strata's copy).
     */
    static ActionResponse foreign(MLTaskResponse response) {
        try (BytesStreamOutput out = new BytesStreamOutput()) {
            response.writeTo(out);
            byte[] bytes = out.bytes().toBytesRef().bytes.clone();
            int length = out.bytes().length();
            return new ActionResponse() {
                @Override
                public void writeTo(StreamOutput o) throws IOException {
                    o.writeBytes(bytes, 0, length);
                }
            };
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

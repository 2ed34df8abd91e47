package io.strata.chunkindex.store;

import org.opensearch.common.settings.Setting;
import org.opensearch.common.settings.Setting.Property;
import org.opensearch.common.settings.Settings;
import org.opensearch.core.common.unit.ByteSizeUnit;
import org.opensearch.core.common.unit.ByteSizeValue;

import java.util.List;

/**
 * How one document's chunks are embedded and written: in slices, one after another, so that a very large document (a
 * 5 MB book: ~4,000 parents, ~32,000 texts) never holds an inference thread for minutes nor builds one bulk request of
 * 100+ MB. Between two embedding slices other documents' inference tasks run (the pool's queue is FIFO).
 *
 * @param embedTexts texts per inference task (a parent and its children always go in one task)
 * @param bulkDocs   chunk documents per bulk request
 * @param bulkBytes  bytes per bulk request (the serialised chunk documents; a single larger document goes alone)
 */
public record Slicing(int embedTexts, int bulkDocs, long bulkBytes) {
    public static final Setting<Integer> EMBED_SLICE_TEXTS = Setting.intSetting("plugins.strata.ingest.embed_slice_texts", 128, 1,
        100_000, Property.NodeScope);
    public static final Setting<Integer> BULK_SLICE_DOCS = Setting.intSetting("plugins.strata.ingest.bulk_slice_docs", 500, 1,
        100_000, Property.NodeScope);
    public static final Setting<ByteSizeValue> BULK_SLICE_BYTES = Setting.byteSizeSetting("plugins.strata.ingest.bulk_slice_bytes",
        new ByteSizeValue(4, ByteSizeUnit.MB), new ByteSizeValue(64, ByteSizeUnit.KB), new ByteSizeValue(100, ByteSizeUnit.MB),
        Property.NodeScope);

    public static final Slicing DEFAULTS = of(Settings.EMPTY);

    public Slicing {
        if (embedTexts < 1 || bulkDocs < 1 || bulkBytes < 1) {
            throw new IllegalArgumentException("slice sizes must be positive, got " + embedTexts + ", " + bulkDocs + ", " + bulkBytes);
        }
    }

    public static Slicing of(Settings settings) {
        return new Slicing(EMBED_SLICE_TEXTS.get(settings), BULK_SLICE_DOCS.get(settings), BULK_SLICE_BYTES.get(settings).getBytes());
    }

    public static List<Setting<?>> settings() {
        return List.of(EMBED_SLICE_TEXTS, BULK_SLICE_DOCS, BULK_SLICE_BYTES);
    }

    /** Whether a bulk slice of {@code docs} documents and {@code bytes} bytes is complete (send it, start the next). */
    public boolean bulkFull(int docs, long bytes) {
        return docs >= bulkDocs || bytes >= bulkBytes;
    }
}

package io.strata.chunkindex;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;

/**
 * The chunking summary a source document carries under {@value #FIELD}: which chunk index holds its chunks, how many,
 * cut by which strategy from which field, the hash of the text they were cut from and of the config they were made
 * under. The other half of the chunk-index contract ({@link ChunkDocuments}): the bulk filter, re-chunking,
 * {@code _reconcile} and generations read it; the chunk writer writes it.
 */
public final class SourceSummary {
    private SourceSummary() {}

    /** The field of a source document that holds its chunking summary. */
    public static final String FIELD = "strata";
    /** The summary's key of the hash of the cutting and embedding config its chunks were made under. */
    public static final String CONFIG = "config";
    /** The key of a summary whose chunking failed after the text was accepted: the reason. */
    public static final String FAILURE = "failure";
    /** The longest reason a failed summary keeps: enough to tell the cause, not a stack of nested messages. */
    public static final int FAILURE_CHARS = 1000;

    /**
     * Whether {@code value} (of {@link #FIELD}) is a summary this plugin wrote (an update brings the stored one back through
     * the pipeline) rather than the document's own data, which chunking would overwrite.
     */
    public static boolean isSummary(Object value) {
        return value instanceof Map<?, ?> m && m.containsKey("target_index") && m.containsKey("parents");
    }

    /** Whether {@code summary} records a chunking that failed ({@link #FAILURE}): no chunks until they are cut again. */
    public static boolean isFailed(Map<?, ?> summary) {
        return summary != null && summary.get(FAILURE) != null;
    }

    /**
     * What reconciling compares: a hash of the source text the chunks were cut from, kept in the summary and in every
     * chunk document. One pass of SHA-256 over the text tells whether the chunks still match it, exactly (up to a
     * collision) and without re-chunking or embedding.
     */
    public static String sourceHash(String text) {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            return HexFormat.of().formatHex(digest.digest(text.getBytes(StandardCharsets.UTF_8)), 0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}

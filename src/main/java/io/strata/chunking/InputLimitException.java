package io.strata.chunking;

/**
 * A document past one of the documented limits on the work of one text (nesting depth of its structure, …): a 400 for the
 * request, and for a pipeline a failure of the input itself, which cutting again would repeat. The message names the limit
 * and its setting.
 */
public final class InputLimitException extends IllegalArgumentException {
    public InputLimitException(String message) {
        super(message);
    }
}

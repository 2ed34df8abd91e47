package io.strata.chunking;

/** Invalid chunking configuration; {@link #field()} names the offending setting (dotted path). */
public final class ConfigException extends IllegalArgumentException {
    private final String field;

    public ConfigException(String field, String message) {
        super(message);
        this.field = field;
    }

    public String field() {
        return field;
    }
}

package io.strata.chunking;

/** Invalid chunking configuration; {@link #field()} names the offending setting (dotted path). */
public final class ConfigException extends IllegalArgumentException {
    private final String field;
    private final String reason;

    /** A message that starts with the field's label ({@code "[field] …"}) gives the rest as its {@link #reason()}. */
    public ConfigException(String field, String message) {
        this(field, message, message.startsWith("[" + field + "] ") ? message.substring(field.length() + 3) : message);
    }

    /** @param reason the message without the field's label, for adapters that name the field themselves */
    public ConfigException(String field, String message, String reason) {
        super(message);
        this.field = field;
        this.reason = reason;
    }

    /** What is wrong, without the field's label when the thrower gave one apart. */
    public String reason() {
        return reason;
    }

    public String field() {
        return field;
    }
}

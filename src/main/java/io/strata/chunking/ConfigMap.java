package io.strata.chunking;

import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * One configuration object (a processor's config, a REST request body, a strategy object) read key by key: each typed read
 * consumes its key, checks type and range, and fails with a {@link ConfigException} naming the key and what is allowed;
 * {@link #rejectUnknown} then reports whatever is left. The one way Strata parses maps: the processor factory,
 * {@code _chunk}, {@code _embed} and every strategy use it, and each adapter translates {@link ConfigException} once into
 * its own error (a pipeline configuration error, a 400).
 *
 * <p>Messages read {@code [owner] [key] must be …} for a request ({@code owner} e.g. {@code _embed}) and
 * {@code [prefix.key] must be …} for a nested object ({@code prefix} e.g. {@code strategy}).
 */
public class ConfigMap {
    private final String owner;
    private final String prefix;
    private final Map<String, Object> remaining;
    private final Set<String> known = new TreeSet<>();

    /**
     * @param owner     names the request in messages ({@code _embed}), or null
     * @param prefix    dotted path of this object inside its configuration ({@code strategy}), or empty at the top
     * @param remaining the map, consumed as it is read (pass a mutable copy)
     */
    public ConfigMap(String owner, String prefix, Map<String, Object> remaining) {
        this.owner = owner;
        this.prefix = prefix;
        this.remaining = remaining;
    }

    /** Declares keys read elsewhere (e.g. by a nested parser), so unknown-key messages list them as supported. */
    public ConfigMap expect(Collection<String> keys) {
        known.addAll(keys);
        return this;
    }

    /** The dotted path of {@code key}: what {@link ConfigException#field()} names. */
    public String path(String key) {
        return prefix.isEmpty() ? key : prefix + "." + key;
    }

    /** How messages name {@code key}. */
    public String label(String key) {
        return (owner == null ? "" : "[" + owner + "] ") + "[" + path(key) + "]";
    }

    /** A failure of {@code key}: {@code reason} follows its label. */
    public ConfigException error(String key, String reason) {
        return new ConfigException(path(key), label(key) + " " + reason, reason);
    }

    /** The raw value of {@code key} (null when absent), consumed. */
    public Object remove(String key) {
        known.add(key);
        return remaining.remove(key);
    }

    public boolean has(String key) {
        return remaining.containsKey(key);
    }

    public int intValue(String key, int defaultValue, int min, int max) {
        Object v = remove(key);
        if (v == null) {
            return defaultValue;
        }
        if (!(v instanceof Number n) || n.doubleValue() != Math.rint(n.doubleValue()) || n.doubleValue() < min || n.doubleValue() > max) {
            throw error(key, String.format(Locale.ROOT, "must be an integer in [%d, %d], got [%s]", min, max, v));
        }
        return n.intValue();
    }

    public double doubleValue(String key, double defaultValue, double min, double max) {
        Object v = remove(key);
        if (v == null) {
            return defaultValue;
        }
        if (!(v instanceof Number n) || Double.isNaN(n.doubleValue()) || n.doubleValue() < min || n.doubleValue() > max) {
            throw error(key, String.format(Locale.ROOT, "must be a number in [%s, %s], got [%s]", min, max, v));
        }
        return n.doubleValue();
    }

    public boolean booleanValue(String key, boolean defaultValue) {
        Object v = remove(key);
        if (v == null) {
            return defaultValue;
        }
        if (!(v instanceof Boolean b)) {
            throw error(key, "must be true or false, got [" + v + "]");
        }
        return b;
    }

    /** A non-blank string, or {@code defaultValue} when absent. */
    public String stringValue(String key, String defaultValue) {
        Object v = remove(key);
        if (v == null) {
            return defaultValue;
        }
        if (!(v instanceof String s) || s.isBlank()) {
            throw error(key, "must be a non-empty string, got [" + v + "]");
        }
        return s;
    }

    /** A non-blank string that must be present; {@code what} says what it names (in the message for a blank one). */
    public String requiredString(String key, String what) {
        Object v = remaining.get(key);
        if (v == null) { // absent, or an explicit null: neither names anything
            remove(key);
            throw error(key, "required property is missing");
        }
        if (v instanceof String s && s.isBlank()) {
            remove(key);
            throw error(key, "must name " + what + ", got an empty string");
        }
        return stringValue(key, null);
    }

    /** One of {@code allowed}; the first is the default. */
    public String enumValue(String key, List<String> allowed) {
        return enumValue(key, allowed, allowed.get(0));
    }

    /** One of {@code allowed}, or {@code defaultValue} when absent. */
    public String enumValue(String key, List<String> allowed, String defaultValue) {
        Object v = remove(key);
        if (v == null) {
            return defaultValue;
        }
        if (!(v instanceof String s) || !allowed.contains(s)) {
            throw error(key, String.format(Locale.ROOT, "must be one of %s, got [%s]", allowed, v));
        }
        return s;
    }

    /**
     * A list of strings, or {@code null} when absent; {@code what} describes it in messages (e.g. {@code "a non-empty list
     * of strings"}), and with {@code nonBlank} every element must be non-blank.
     */
    public List<String> stringList(String key, boolean nonEmpty, boolean nonBlank, String what) {
        Object v = remove(key);
        if (v == null) {
            return null;
        }
        if (!(v instanceof List<?> list) || (nonEmpty && list.isEmpty())) {
            throw error(key, "must be " + what + ", got [" + v + "]");
        }
        for (Object e : list) {
            if (!(e instanceof String s) || (nonBlank && s.isBlank())) {
                throw error(key, "must contain " + (nonBlank ? "non-empty " : "") + "strings only, got [" + e + "]");
            }
        }
        return list.stream().map(String.class::cast).toList();
    }

    /** The first key nobody read, or null. */
    public String firstUnknown() {
        return remaining.keySet().stream().filter(k -> !known.contains(k)).sorted().findFirst().orElse(null);
    }

    /** The keys read or declared so far. */
    public Set<String> known() {
        return new TreeSet<>(known);
    }

    /** Fails on the first key left unread: {@code [owner] unknown field [key]; supported: [...]}. */
    public void rejectUnknown() {
        String key = firstUnknown();
        if (key != null) {
            throw new ConfigException(path(key), String.format(Locale.ROOT, "%sunknown field [%s]; supported: %s",
                owner == null ? "" : "[" + owner + "] ", key, known));
        }
    }
}

package io.strata.demo;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The {@code key=value} arguments of the programs run by {@code bin/} (chaos, load, big-document runs, the boundary
 * trainer): only the keys a program names are accepted, so a misspelt key is an error instead of a silently used
 * default, and a value that is not a number names its key.
 */
public final class RunArgs {
    private final Map<String, String> values;
    private final List<String> supported;

    private RunArgs(Map<String, String> values, List<String> supported) {
        this.values = values;
        this.supported = supported;
    }

    /** Parses {@code args} as {@code key=value}; a key outside {@code supported} or an argument without '=' throws. */
    public static RunArgs parse(String[] args, String... supported) {
        List<String> keys = List.of(supported);
        Map<String, String> values = new LinkedHashMap<>();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            if (eq < 1) {
                throw new IllegalArgumentException("[" + arg + "] is not key=value; supported: " + String.join(", ", keys));
            }
            String key = arg.substring(0, eq);
            if (!keys.contains(key)) {
                throw new IllegalArgumentException("unknown argument [" + key + "]; supported: " + String.join(", ", keys));
            }
            values.put(key, arg.substring(eq + 1));
        }
        return new RunArgs(values, keys);
    }

    /** Whether the argument was given. */
    public boolean has(String key) {
        return values.containsKey(checked(key));
    }

    /** The argument's text, or {@code fallback} (may be null) when it was not given. */
    public String string(String key, String fallback) {
        return values.getOrDefault(checked(key), fallback);
    }

    public int integer(String key, int fallback) {
        return parsed(key, fallback, Integer::parseInt, "an integer");
    }

    public long longValue(String key, long fallback) {
        return parsed(key, fallback, Long::parseLong, "an integer");
    }

    public double decimal(String key, double fallback) {
        return parsed(key, fallback, Double::parseDouble, "a number");
    }

    /** {@code true} or {@code false}, nothing else (Boolean.parseBoolean would read a typo as false). */
    public boolean bool(String key, boolean fallback) {
        String v = string(key, null);
        if (v == null) {
            return fallback;
        }
        return switch (v.trim()) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new IllegalArgumentException("[" + key + "] must be true or false, got [" + v + "]");
        };
    }

    // a program reading a key it did not declare is a bug in the program, not in its arguments
    private String checked(String key) {
        if (!supported.contains(key)) {
            throw new IllegalStateException("[" + key + "] is read but not declared");
        }
        return key;
    }

    private <T> T parsed(String key, T fallback, Function<String, T> parse, String kind) {
        String v = string(key, null);
        try {
            return v == null ? fallback : parse.apply(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("[" + key + "] must be " + kind + ", got [" + v + "]");
        }
    }
}

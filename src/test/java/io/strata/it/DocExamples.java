package io.strata.it;

import org.opensearch.common.xcontent.json.JsonXContent;
import org.opensearch.core.xcontent.DeprecationHandler;
import org.opensearch.core.xcontent.NamedXContentRegistry;
import org.opensearch.core.xcontent.XContentParser;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The request examples of a Markdown page and what the page says they return, read by the convention of
 * docs/architecture.md ("Examples are tests"): a fenced block whose first line is {@code METHOD path} holds requests
 * (each {@code METHOD path} line starts one; its body follows — NDJSON lines for {@code _bulk}; from a line starting with
 * {@code →} on, a sample answer that is not sent); {@code <!-- doc-test … -->} comments, which Markdown does not render,
 * say what a request must return, bind placeholders, set up data the page assumes, or skip a block with a reason.
 * Shell blocks ({@code bash}, {@code sh}) must be skipped with a reason: nothing runs them.
 */
final class DocExamples {
    static final Pattern REQUEST_LINE = Pattern.compile("^(GET|POST|PUT|DELETE|HEAD) (\\S+)\\s*$");
    private static final Pattern FENCE = Pattern.compile("^```\\s*([A-Za-z]*)\\s*$");
    private static final Pattern DIRECTIVE_START = Pattern.compile("^<!-- doc-test(?::|\\s|$)(.*)$");

    /** One request of a block: where it is, what it sends, what it must return. */
    record Step(String where, String method, String path, String body, List<Expectation> expectations) {}

    /** A binding of a placeholder the page writes (e.g. {@code <task id>}) to a value of the previous step's answer. */
    record Let(String placeholder, String path, Object literal) {}

    /** Something a page does, in order: a request, setup data, or a binding. */
    sealed interface Action permits Run, Emma, Bind {}

    record Run(Step step) implements Action {}

    /** Index the first {@code chapters} bundled chapters of Emma (title, body) into an index through a pipeline, refreshed. */
    record Emma(String where, String index, String pipeline, int chapters) implements Action {}

    record Bind(String where, Let let) implements Action {}

    /**
     * What an answer must hold. {@code status N}; {@code hits N} / {@code hits >= N} (entries of hits.hits);
     * {@code PATH = JSON}, {@code PATH contains "text"}, {@code PATH exists}, {@code PATH absent}, where PATH is dotted keys and list indexes,
     * {@code *} meaning every element of a list or value of an object (at least one).
     */
    record Expectation(String text, Integer request) {}

    /** The page's actions, in order, and its skipped blocks (where and why). */
    record Page(List<Action> actions, List<String> skipped) {}

    private DocExamples() {}

    static Page parse(String name, String markdown) {
        return parse(name, markdown, true);
    }

    /** @param shellMustBeMarked whether a shell block without a skip is an error (pages of requests) or ignored */
    static Page parse(String name, String markdown, boolean shellMustBeMarked) {
        List<Action> actions = new ArrayList<>();
        List<String> skipped = new ArrayList<>();
        String[] lines = markdown.split("\n", -1);
        String skip = null;
        List<Expectation> expectations = new ArrayList<>();
        List<Let> lets = new ArrayList<>();
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i];
            String where = name + ":" + (i + 1);
            Matcher directive = DIRECTIVE_START.matcher(line.strip());
            if (directive.matches()) {
                List<String> body = new ArrayList<>();
                String first = directive.group(1);
                int end = i;
                while (!lines[end].contains("-->")) {
                    end++;
                    if (end == lines.length) {
                        throw new IllegalArgumentException(where + ": a doc-test comment without -->");
                    }
                    body.add(lines[end]);
                }
                if (end == i) {
                    first = first.substring(0, first.indexOf("-->"));
                } else {
                    body.set(body.size() - 1, body.get(body.size() - 1).replace("-->", ""));
                }
                body.add(0, first);
                if (body.stream().anyMatch(l -> l.strip().equals("setup"))) {
                    // hidden requests the page assumes have run (its data); a [let] line binds a value of the answer before it
                    List<String> requests = new ArrayList<>();
                    for (String l : body) {
                        if (l.strip().startsWith("let ")) {
                            requests(where, requests, List.of()).forEach(step -> actions.add(new Run(step)));
                            requests.clear();
                            actions.add(new Bind(where, let(where, l.strip())));
                        } else if (l.strip().equals("setup") == false) {
                            requests.add(l);
                        }
                    }
                    requests(where, requests, List.of()).forEach(step -> actions.add(new Run(step)));
                } else {
                    for (String d : body) {
                        String t = d.strip();
                        if (t.isEmpty()) {
                            continue;
                        }
                        if (t.startsWith("skip")) {
                            skip = t.substring(4).strip();
                            if (skip.isEmpty()) {
                                throw new IllegalArgumentException(where + ": [skip] needs a reason");
                            }
                        } else if (t.startsWith("expect ")) {
                            String e = t.substring(7).strip();
                            Integer request = null;
                            Matcher m = Pattern.compile("^#(\\d+)\\s+(.*)$").matcher(e);
                            if (m.matches()) {
                                request = Integer.parseInt(m.group(1));
                                e = m.group(2);
                            }
                            expectations.add(new Expectation(e, request));
                        } else if (t.startsWith("let ")) {
                            lets.add(let(where, t));
                        } else if (t.startsWith("emma ")) {
                            String[] a = t.split("\\s+");
                            if (a.length != 3 && (a.length != 4 || a[3].matches("[1-3]") == false)) {
                                throw new IllegalArgumentException(where + ": [emma] is [emma <index> <pipeline> [1-3]]: " + t);
                            }
                            actions.add(new Emma(where, a[1], a[2], a.length == 4 ? Integer.parseInt(a[3]) : 3));
                        } else {
                            throw new IllegalArgumentException(where + ": unknown doc-test directive [" + t
                                + "]; known: skip, expect, let, emma, setup");
                        }
                    }
                }
                i = end;
                continue;
            }
            Matcher fence = FENCE.matcher(line);
            if (fence.matches() == false) {
                continue;
            }
            String lang = fence.group(1).toLowerCase(Locale.ROOT);
            List<String> block = new ArrayList<>();
            int end = i + 1;
            while (end < lines.length && lines[end].startsWith("```") == false) {
                block.add(lines[end++]);
            }
            String firstLine = block.stream().filter(l -> l.isBlank() == false).findFirst().orElse("");
            boolean requests = REQUEST_LINE.matcher(firstLine).matches();
            boolean shell = lang.equals("bash") || lang.equals("sh") || lang.equals("shell");
            if (skip != null) {
                skipped.add(where + " (" + skip + ")");
            } else if (shell && shellMustBeMarked) {
                throw new IllegalArgumentException(where + ": a shell block without <!-- doc-test: skip <reason> -->; "
                    + "shell examples do not run in the doc-test");
            } else if (requests) {
                List<Step> steps = requests(where, block, expectations);
                for (Expectation e : expectations) {
                    if (e.request() != null && (e.request() < 1 || e.request() > steps.size())) {
                        throw new IllegalArgumentException(where + ": [expect #" + e.request() + "] but the block has "
                            + steps.size() + " requests");
                    }
                }
                // a literal binds before the block (names it uses), a path after it (values its answer gives)
                lets.stream().filter(l -> l.path() == null).forEach(l -> actions.add(new Bind(where, l)));
                steps.forEach(s -> actions.add(new Run(s)));
                lets.stream().filter(l -> l.path() != null).forEach(l -> actions.add(new Bind(where, l)));
            } else if (expectations.isEmpty() == false || lets.isEmpty() == false) {
                throw new IllegalArgumentException(where + ": [expect]/[let] before a block that holds no request");
            }
            skip = null;
            expectations = new ArrayList<>();
            lets = new ArrayList<>();
            i = end;
        }
        return new Page(actions, skipped);
    }

    private static Let let(String where, String line) {
        Matcher m = Pattern.compile("^let (.+?) = (.+)$").matcher(line);
        if (m.matches() == false) {
            throw new IllegalArgumentException(where + ": [let] is [let <placeholder> = <path or \"text\">]: " + line);
        }
        String value = m.group(2).strip();
        return value.startsWith("\"") ? new Let(m.group(1), null, json(value)) : new Let(m.group(1), value, null);
    }

    /** Splits a block's lines into requests; each gets the expectations addressed to it (unnumbered ones: the last). */
    private static List<Step> requests(String where, List<String> lines, List<Expectation> expectations) {
        List<int[]> starts = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            if (REQUEST_LINE.matcher(lines.get(i)).matches()) {
                starts.add(new int[] { i });
            }
        }
        List<Step> steps = new ArrayList<>();
        for (int s = 0; s < starts.size(); s++) {
            int from = starts.get(s)[0];
            int to = s + 1 < starts.size() ? starts.get(s + 1)[0] : lines.size();
            Matcher m = REQUEST_LINE.matcher(lines.get(from));
            m.matches();
            StringBuilder body = new StringBuilder();
            for (int i = from + 1; i < to; i++) {
                if (lines.get(i).strip().startsWith("→")) {
                    break; // a sample answer
                }
                body.append(lines.get(i)).append('\n');
            }
            int n = s + 1;
            boolean last = n == starts.size();
            List<Expectation> mine = expectations.stream()
                .filter(e -> Objects.equals(e.request(), n) || (e.request() == null && last))
                .toList();
            String path = m.group(2).startsWith("/") ? m.group(2) : "/" + m.group(2);
            steps.add(new Step(where + " #" + n, m.group(1), path, body.toString().isBlank() ? null : body.toString(), mine));
        }
        return steps;
    }

    /** A JSON value (object, array, string, number, boolean, null). */
    static Object json(String value) {
        try (XContentParser p = JsonXContent.jsonXContent.createParser(NamedXContentRegistry.EMPTY,
            DeprecationHandler.THROW_UNSUPPORTED_OPERATION, "{\"v\": " + value + "}")) {
            return p.map().get("v");
        } catch (IOException e) {
            throw new UncheckedIOException("not JSON: " + value, e);
        }
    }

    /** The values at a dotted path; {@code *} fans out over a list or an object's values. A missing key gives no value. */
    static List<Object> values(Object root, String path) {
        List<Object> current = new ArrayList<>();
        current.add(root);
        for (String key : path.split("\\.")) {
            List<Object> next = new ArrayList<>();
            for (Object o : current) {
                if (key.equals("*") && o instanceof List<?> list) {
                    next.addAll(list);
                } else if (key.equals("*") && o instanceof Map<?, ?> map) {
                    next.addAll(map.values()); // e.g. nodes.* over node ids
                } else if (o instanceof Map<?, ?> map && map.containsKey(key)) {
                    next.add(map.get(key));
                } else if (o instanceof List<?> list && key.matches("\\d+") && Integer.parseInt(key) < list.size()) {
                    next.add(list.get(Integer.parseInt(key)));
                }
            }
            current = next;
        }
        return current;
    }

    /**
     * Checks one expectation against an answer (its status and parsed body); returns null when it holds, else what
     * differs.
     */
    static String check(Expectation e, int status, Map<String, Object> body) {
        String t = e.text();
        Matcher m;
        if ((m = Pattern.compile("^status (\\d{3})$").matcher(t)).matches()) {
            return status == Integer.parseInt(m.group(1)) ? null : "status " + status + ", expected " + m.group(1);
        }
        if ((m = Pattern.compile("^hits (>=\\s*)?(\\d+)$").matcher(t)).matches()) {
            int hits = values(body, "hits.hits.*").size();
            int want = Integer.parseInt(m.group(2));
            boolean ok = m.group(1) == null ? hits == want : hits >= want;
            return ok ? null : hits + " hits, expected " + (m.group(1) == null ? "" : ">= ") + want;
        }
        if ((m = Pattern.compile("^(\\S+) absent$").matcher(t)).matches()) {
            return values(body, m.group(1)).isEmpty() ? null : "a value at [" + m.group(1) + "]";
        }
        if ((m = Pattern.compile("^(\\S+) exists$").matcher(t)).matches()) {
            return values(body, m.group(1)).isEmpty() ? "no value at [" + m.group(1) + "]" : null;
        }
        if ((m = Pattern.compile("^(\\S+) contains (\".*\")$").matcher(t)).matches()) {
            List<Object> found = values(body, m.group(1));
            String needle = (String) json(m.group(2));
            boolean ok = found.isEmpty() == false && found.stream().allMatch(v -> String.valueOf(v).contains(needle));
            return ok ? null : "[" + m.group(1) + "] is " + found + ", expected to contain " + m.group(2);
        }
        if ((m = Pattern.compile("^(\\S+) = (.+)$").matcher(t)).matches()) {
            List<Object> found = values(body, m.group(1));
            Object want = json(m.group(2));
            boolean ok = found.isEmpty() == false && found.stream().allMatch(v -> same(want, v));
            return ok ? null : "[" + m.group(1) + "] is " + found + ", expected " + m.group(2);
        }
        throw new IllegalArgumentException("unknown expectation [" + t + "]; known: status N, hits [>=] N, PATH = JSON, "
            + "PATH contains \"text\", PATH exists, PATH absent");
    }

    private static boolean same(Object want, Object actual) {
        if (want instanceof Number w && actual instanceof Number a) {
            return w.doubleValue() == a.doubleValue();
        }
        return Objects.equals(want, actual);
    }
}

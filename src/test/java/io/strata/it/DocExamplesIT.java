package io.strata.it;

import org.opensearch.client.Request;
import org.opensearch.client.Response;
import org.opensearch.client.ResponseException;
import org.opensearch.common.xcontent.XContentHelper;
import org.opensearch.common.xcontent.json.JsonXContent;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Every request example of README.md, docs/*.md and the clients' READMEs, run in page order against the real cluster,
 * with what the page says it returns ({@link DocExamples}; the convention is in docs/architecture.md, "Examples are
 * tests"). A page is one test: the cluster is wiped between pages, so each page sets up what it assumes.
 */
public class DocExamplesIT extends StrataRestTestCase {

    public void testReadme() throws Exception {
        runPage("README.md", true);
    }

    public void testPipelines() throws Exception {
        runPage("docs/pipelines.md", true);
    }

    public void testQuery() throws Exception {
        runPage("docs/query.md", true);
    }

    public void testOperations() throws Exception {
        runPage("docs/operations.md", true);
    }

    public void testArchitecture() throws Exception {
        runPage("docs/architecture.md", true);
    }

    /** The measurements hold benchmark commands (shell), not requests: only request blocks, if any, run. */
    public void testMeasurements() throws Exception {
        runPage("docs/measurements.md", false);
    }

    public void testClientReadmes() throws Exception {
        runPage("clients/langchain4j/README.md", true);
        runPage("clients/langchainjs/README.md", true);
    }

    /** The doc-test itself: an example whose answer differs from what its page says fails, naming the line. */
    public void testDocTest_whenAnExampleDrifts_failsNamingItsLine() throws Exception {
        String page = """
            Intro.

            <!-- doc-test: expect cluster_name = "not-this-cluster" -->
            ```json
            GET _cluster/health
            ```
            """;
        AssertionError e = expectThrows(AssertionError.class, () -> run(DocExamples.parse("drift.md", page)));
        assertTrue(e.getMessage(), e.getMessage().startsWith("drift.md:4 #1 GET /_cluster/health: [cluster_name] is ["));
        IllegalArgumentException shell = expectThrows(IllegalArgumentException.class,
            () -> DocExamples.parse("shell.md", "```bash\nrm -rf /\n```\n"));
        assertTrue(shell.getMessage(), shell.getMessage().startsWith("shell.md:1: a shell block without"));
        AssertionError failed = expectThrows(AssertionError.class,
            () -> run(DocExamples.parse("bad.md", "```json\nGET no-such-index/_search\n```\n")));
        assertTrue(failed.getMessage(), failed.getMessage().startsWith("bad.md:1 #1 GET /no-such-index/_search: status 404"));
    }

    private void runPage(String file, boolean shellMustBeMarked) throws IOException {
        String markdown = Files.readString(Path.of(file), StandardCharsets.UTF_8);
        DocExamples.Page page = DocExamples.parse(file, markdown, shellMustBeMarked);
        logger.info("{}: {} actions; skipped blocks: {}", file, page.actions().size(), page.skipped());
        run(page);
    }

    private void run(DocExamples.Page page) throws IOException {
        Map<String, String> bindings = new LinkedHashMap<>();
        Map<String, Object> last = Map.of();
        for (DocExamples.Action action : page.actions()) {
            switch (action) {
                case DocExamples.Run r -> last = run(r.step(), bindings);
                case DocExamples.Emma e -> indexEmma(e);
                case DocExamples.Bind b -> {
                    Object value = b.let().literal();
                    if (b.let().path() != null) {
                        List<Object> values = DocExamples.values(last, b.let().path());
                        assertEquals(b.where() + ": [let " + b.let().placeholder() + "] needs one value at [" + b.let().path()
                            + "], the previous answer has " + values, 1, values.size());
                        value = values.get(0);
                    }
                    bindings.put(b.let().placeholder(), String.valueOf(value));
                }
            }
        }
    }

    private static String bind(String s, Map<String, String> bindings) {
        if (s == null) {
            return null;
        }
        for (var b : bindings.entrySet()) {
            s = s.replace(b.getKey(), b.getValue());
        }
        return s;
    }

    private Map<String, Object> run(DocExamples.Step step, Map<String, String> bindings) throws IOException {
        String path = bind(step.path(), bindings);
        Request request = new Request(step.method(), path);
        String body = bind(step.body(), bindings);
        if (body != null) {
            if (path.contains("_bulk")) {
                request.setEntity(new org.apache.hc.core5.http.io.entity.StringEntity(body,
                    org.apache.hc.core5.http.ContentType.create("application/x-ndjson", StandardCharsets.UTF_8)));
            } else {
                request.setJsonEntity(body);
            }
        }
        Response response;
        try {
            response = client().performRequest(request);
        } catch (ResponseException e) {
            response = e.getResponse();
        }
        int status = response.getStatusLine().getStatusCode();
        Map<String, Object> answer = parse(response);
        String what = step.where() + " " + step.method() + " " + path + ": ";
        boolean statusExpected = step.expectations().stream().anyMatch(x -> x.text().startsWith("status "));
        if (statusExpected == false && (status < 200 || status > 299)) {
            fail(what + "status " + status + "; " + shorten(answer));
        }
        if (path.contains("_bulk") && statusExpected == false && Boolean.TRUE.equals(answer.get("errors"))) {
            fail(what + "the bulk has errors; " + shorten(answer));
        }
        for (DocExamples.Expectation x : step.expectations()) {
            String differs = DocExamples.check(x, status, answer);
            if (differs != null) {
                fail(what + differs + "; " + shorten(answer));
            }
        }
        return answer;
    }

    private static Map<String, Object> parse(Response response) throws IOException {
        if (response.getEntity() == null) {
            return Map.of();
        }
        byte[] bytes = response.getEntity().getContent().readAllBytes();
        if (bytes.length == 0 || bytes[0] != '{') {
            return new HashMap<>(Map.of("body", new String(bytes, StandardCharsets.UTF_8)));
        }
        return XContentHelper.convertToMap(JsonXContent.jsonXContent, new java.io.ByteArrayInputStream(bytes), false);
    }

    private static String shorten(Map<String, Object> answer) {
        String s = json(answer);
        return s.length() > 1500 ? s.substring(0, 1500) + "…" : s;
    }

    /** Emma's first chapters (title, body), one bulk per chapter, through the pipeline; then the index refreshed. */
    private static void indexEmma(DocExamples.Emma e) throws IOException {
        int n = 0;
        for (var chapter : emmaChapters().entrySet().stream().limit(e.chapters()).toList()) {
            Map<String, Object> r = bulk(e.index(), e.pipeline(),
                Map.of("chapter-" + ++n, Map.of("title", chapter.getKey(), "body", chapter.getValue())));
            assertEquals(e.where() + ": emma into [" + e.index() + "]: " + r, false, r.get("errors"));
        }
        refresh(e.index());
    }
}

package io.strata.it;

import com.carrotsearch.randomizedtesting.annotations.ThreadLeakScope;
import org.apache.hc.core5.http.HttpHost;
import org.junit.AfterClass;
import org.opensearch.client.Request;
import org.opensearch.client.Response;
import org.opensearch.client.ResponseException;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Strata Studio driven as a person would, in real headless Chromium (Debian's chromium + chromedriver, which
 * bin/strata-test installs) against the real test cluster: every assertion compares the page's DOM with what the REST
 * API answers for the same input. Screenshots of each view go to target/studio-screenshots/ on every run (the README's
 * images in docs/studio/ are copies of them).
 */
// Selenium's HTTP client keeps idle threads after the driver quits; they are not ours to leak-check
@ThreadLeakScope(ThreadLeakScope.Scope.NONE)
@SuppressWarnings("unchecked")
public class StudioIT extends StrataRestTestCase {
    private static WebDriver driver;

    private static WebDriver driver() {
        if (driver == null) {
            ChromeOptions options = new ChromeOptions();
            options.setBinary(System.getProperty("strata.chromium", "/usr/bin/chromium"));
            options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,1000");
            ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(new File(System.getProperty("strata.chromedriver", "/usr/bin/chromedriver"))).build();
            driver = new ChromeDriver(service, options);
        }
        return driver;
    }

    @AfterClass
    public static void quit() {
        if (driver != null) {
            driver.quit();
            driver = null;
        }
    }

    private String base() {
        HttpHost host = getClusterHosts().get(0);
        return "http://" + host.getHostName() + ":" + host.getPort() + "/_plugins/_strata/studio";
    }

    private void open(String view) {
        driver().get("about:blank"); // a fresh page: only the hash would change otherwise, and the page would not reload
        driver().get(base() + "#" + view);
        wait(30).until(d -> "true".equals(((JavascriptExecutor) d).executeScript("return document.body.dataset.ready")));
    }

    private static WebDriverWait wait(int seconds) {
        return new WebDriverWait(driver(), Duration.ofSeconds(seconds));
    }

    private static WebElement byId(String id) {
        return driver().findElement(By.id(id));
    }

    /** Sets an input's value the way typing would end (long texts typed key by key would take minutes). */
    private static void setValue(WebElement input, String value) {
        ((JavascriptExecutor) driver()).executeScript("arguments[0].value = arguments[1]", input, value);
    }

    private static void setConfig(String configId, String strategy, int theta) {
        WebElement config = byId(configId);
        new org.openqa.selenium.support.ui.Select(config.findElement(By.className("f-strategy"))).selectByVisibleText(strategy);
        setValue(config.findElement(By.className("f-theta")), Integer.toString(theta));
    }

    private static void awaitStatus(String id) {
        wait(120).until(d -> {
            String s = d.findElement(By.id(id)).getText();
            return s.equals("done") || s.startsWith("error") || s.contains(" parents in ");
        });
    }

    private static void screenshot(String name) throws IOException {
        File shot = ((org.openqa.selenium.TakesScreenshot) driver()).getScreenshotAs(OutputType.FILE);
        Path dir = Path.of("target", "studio-screenshots");
        Files.createDirectories(dir);
        Files.copy(shot.toPath(), dir.resolve(name + ".png"), StandardCopyOption.REPLACE_EXISTING);
    }

    private static String chapter() {
        return emmaChapters().values().iterator().next();
    }

    public void testPage_isServedWithAStrictContentSecurityPolicy_andOnlyItsOwnFiles() throws Exception {
        Response page = client().performRequest(new Request("GET", "/_plugins/_strata/studio"));
        assertEquals(200, page.getStatusLine().getStatusCode());
        assertTrue(page.getHeader("Content-Type").startsWith("text/html"));
        String csp = page.getHeader("Content-Security-Policy");
        assertTrue(csp, csp.contains("default-src 'none'") && csp.contains("script-src 'self'") && !csp.contains("unsafe"));
        assertEquals("nosniff", page.getHeader("X-Content-Type-Options"));
        Response js = client().performRequest(new Request("GET", "/_plugins/_strata/studio/studio.js"));
        assertTrue(js.getHeader("Content-Type").startsWith("text/javascript"));
        ResponseException e = expectThrows(ResponseException.class,
            () -> client().performRequest(new Request("GET", "/_plugins/_strata/studio/..%2F..%2Fplugin-security.policy")));
        assertEquals(404, e.getResponse().getStatusLine().getStatusCode());
    }

    /** A browser completes the address with a slash: the page must load its script and style the same. */
    public void testPage_withAndWithoutTheTrailingSlash_loadsItsScriptAndStyle() throws Exception {
        for (String url : List.of(base(), base() + "/")) {
            driver().get("about:blank");
            driver().get(url + "#search");
            wait(30).until(d -> "true".equals(((JavascriptExecutor) d).executeScript("return document.body.dataset.ready")));
            Object styled = ((JavascriptExecutor) driver()).executeScript(
                "return Array.from(document.styleSheets).some((s) => s.cssRules.length > 0)");
            assertEquals(url + ": its style sheet applied", true, styled);
            assertTrue(url, byId("view-search").isDisplayed());
        }
    }

    /**
     * Pointed at a chunk index ({@code ?index=}), the page takes its defaults from it: the Search view searches it, and
     * the Chunk view's source index, document and field are one of its source documents and the field its pipeline
     * chunks (the source document's summary, {@code strata.field}): loading it shows that field's text.
     */
    public void testPage_pointedAtAChunkIndex_takesTheFieldItsPipelineChunks() throws Exception {
        putPipeline("studio-body", "{\"field\": \"body\", \"target_index\": \"studio-body-chunks\", \"strategy\": {\"type\": \"recursive\","
            + " \"max_words\": 150}, \"copy_fields\": [\"title\"]}");
        String text = chapter();
        bulk("studio-body-src", "studio-body", Map.of("chapter-1", Map.of("title", "VOLUME I. CHAPTER I", "body", text)));
        refresh("studio-body-chunks");
        Map<String, Object> summary = (Map<String, Object>) ((Map<String, Object>) call("GET", "/studio-body-src/_doc/chapter-1")
            .get("_source")).get("strata");
        assertEquals("body", summary.get("field")); // the oracle: what the pipeline recorded it chunked
        driver().get("about:blank");
        driver().get(base() + "/?index=studio-body-chunks#chunk");
        wait(30).until(d -> "true".equals(((JavascriptExecutor) d).executeScript("return document.body.dataset.ready")));
        wait(30).until(d -> "body".equals(byId("doc-field").getAttribute("value")));
        assertEquals("studio-body-src", byId("doc-index").getAttribute("value"));
        assertEquals("chapter-1", byId("doc-id").getAttribute("value"));
        assertEquals("studio-body-chunks", byId("search-index").getAttribute("value"));
        byId("doc-load").click();
        wait(30).until(d -> text.equals(byId("chunk-text").getAttribute("value")));
        assertEquals("", byId("doc-error").getText());
    }

    public void testChunkView_showsExactlyTheParentsOfTheChunkApi_withChildBoundaries() throws Exception {
        String text = chapter();
        Map<String, Object> rest = call("POST", "/_plugins/_strata/_chunk", json(Map.of("text", text,
            "strategy", Map.of("type", "recursive", "max_words", 120), "granularities", List.of(0.5, 0.25))));
        List<Map<String, Object>> parents = (List<Map<String, Object>>) rest.get("parents");
        open("chunk");
        setValue(byId("chunk-text"), text);
        setConfig("cfg-a", "recursive", 120);
        byId("chunk-run").click();
        awaitStatus("chunk-status");
        assertEquals("done", byId("chunk-status").getText());
        assertEquals(Integer.toString(parents.size()), byId("parent-count").getText());
        List<WebElement> bands = driver().findElements(By.cssSelector("#chunk-view .parent"));
        assertEquals(parents.size(), bands.size());
        int cuts = 0;
        for (int i = 0; i < parents.size(); i++) {
            assertEquals(parents.get(i).get("start").toString(), bands.get(i).getAttribute("data-start"));
            assertEquals(parents.get(i).get("end").toString(), bands.get(i).getAttribute("data-end"));
            assertEquals("the band holds the parent's text", parents.get(i).get("text"), bands.get(i).getAttribute("textContent"));
            java.util.Set<Object> childStarts = new java.util.HashSet<>();
            for (Map<String, Object> c : (List<Map<String, Object>>) parents.get(i).get("children")) {
                if ((Integer) c.get("level") > 0 && !c.get("start").equals(parents.get(i).get("start"))) {
                    childStarts.add(c.get("start"));
                }
            }
            cuts += childStarts.size();
        }
        assertEquals("one mark per distinct child start inside a parent", cuts,
            driver().findElements(By.cssSelector("#chunk-view .cut.l1, #chunk-view .cut.l2")).size());
        assertTrue("the histogram has bars", driver().findElements(By.cssSelector("#chunk-hist rect")).size() > 0);
        // token counts as the model is fed each chunk, against its limit (issue 21)
        Map<String, Object> tokens = (Map<String, Object>) rest.get("tokens");
        int largest = 0;
        for (Map<String, Object> p : parents) {
            largest = Math.max(largest, (Integer) p.get("tokens"));
        }
        assertEquals("e5-small-v2-q: largest chunk " + largest + " of " + tokens.get("limit") + " tokens, 0 cut to fit, 0 truncated",
            byId("token-summary").getText());
        String tooltip = driver().findElements(By.cssSelector("#chunk-view .cut.l0")).get(0).getAttribute("title");
        assertTrue(tooltip, tooltip.contains(parents.get(0).get("tokens") + " tokens"));
        screenshot("chunk");
    }

    public void testChunkView_thetaInModelTokens_isSentAsMaxTokens() throws Exception {
        String text = chapter().substring(0, 4000);
        Map<String, Object> rest = call("POST", "/_plugins/_strata/_chunk", json(Map.of("text", text,
            "strategy", Map.of("type", "recursive", "max_tokens", 100))));
        open("chunk");
        setValue(byId("chunk-text"), text);
        setConfig("cfg-a", "recursive", 100);
        new org.openqa.selenium.support.ui.Select(byId("cfg-a").findElement(By.className("f-unit"))).selectByValue("max_tokens");
        byId("chunk-run").click();
        awaitStatus("chunk-status");
        assertEquals("done", byId("chunk-status").getText());
        assertEquals(Integer.toString(((List<?>) rest.get("parents")).size()), byId("parent-count").getText());
        assertTrue(byId("chunk-stats").getText(), byId("chunk-stats").getText().contains("θ 100 tokens"));
    }

    public void testChunkView_plotsTheEvidence_andAPointScrollsToItsSentence() throws Exception {
        String text = chapter().substring(0, 3000);
        Map<String, Object> rest = call("POST", "/_plugins/_strata/_chunk", json(Map.of("text", text,
            "strategy", Map.of("type", "semantic", "max_words", 120))));
        List<Map<String, Object>> evidence = (List<Map<String, Object>>) rest.get("evidence");
        assertFalse(evidence.isEmpty());
        open("chunk");
        setValue(byId("chunk-text"), text);
        setConfig("cfg-a", "semantic", 120);
        byId("chunk-run").click();
        awaitStatus("chunk-status");
        assertEquals("done", byId("chunk-status").getText());
        List<WebElement> points = driver().findElements(By.cssSelector("#chunk-plot circle.pt"));
        assertEquals(((List<?>) evidence.get(0).get("positions")).size(), points.size());
        assertEquals("the threshold line is drawn", 1, driver().findElements(By.cssSelector("#chunk-plot line.threshold")).size());
        WebElement point = points.get(points.size() / 2);
        int pos = Integer.parseInt(point.getAttribute("data-pos"));
        ((JavascriptExecutor) driver()).executeScript("arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))", point);
        WebElement flashed = driver().findElement(By.cssSelector("#chunk-view .seg.flash"));
        int start = Integer.parseInt(flashed.getAttribute("data-start"));
        int end = Integer.parseInt(flashed.getAttribute("data-end"));
        assertTrue(start + " <= " + pos + " < " + end, start <= pos && pos < end);
        screenshot("chunk-evidence");
    }

    public void testChunkView_aBadThetaShowsTheApisMessageNextToThatField() throws Exception {
        open("chunk");
        setValue(byId("chunk-text"), "Some text. Another sentence.");
        setConfig("cfg-a", "recursive", 0);
        byId("chunk-run").click();
        awaitStatus("chunk-status");
        WebElement theta = byId("cfg-a").findElement(By.className("f-theta"));
        assertTrue(theta.getAttribute("class").contains("invalid"));
        WebElement error = theta.findElement(By.xpath("./ancestor::label")).findElement(By.className("field-error"));
        assertTrue(error.getText(), error.getText().contains("[strategy.max_words] must be an integer in [1, 8192]"));
        assertEquals("only that field is marked", 1, driver().findElements(By.className("field-error")).size());
    }

    public void testChunkView_textIsShownAsText_neverRunAsHtml() throws Exception {
        String evil = "<script>window.__xss = 1</script> Emma <img src=x onerror=\"window.__xss = 2\"> was <b>clever</b>.";
        open("chunk");
        setValue(byId("chunk-text"), evil);
        setConfig("cfg-a", "recursive", 300);
        byId("chunk-run").click();
        awaitStatus("chunk-status");
        assertEquals("done", byId("chunk-status").getText());
        WebElement view = byId("chunk-view");
        assertEquals(evil, view.getAttribute("textContent"));
        assertTrue(view.findElements(By.tagName("img")).isEmpty());
        assertTrue(view.findElements(By.tagName("script")).isEmpty());
        assertTrue(view.findElements(By.tagName("b")).isEmpty());
        assertNull(((JavascriptExecutor) driver()).executeScript("return window.__xss === undefined ? null : window.__xss"));
    }

    public void testCompareView_marksTheBoundariesOnlyOneConfigurationHas() throws Exception {
        String text = chapter();
        Map<String, Object> a = call("POST", "/_plugins/_strata/_chunk", json(Map.of("text", text,
            "strategy", Map.of("type", "recursive", "max_words", 200))));
        Map<String, Object> b = call("POST", "/_plugins/_strata/_chunk", json(Map.of("text", text,
            "strategy", Map.of("type", "sentence", "max_words", 200))));
        java.util.Set<Object> sa = starts(a);
        java.util.Set<Object> sb = starts(b);
        long onlyA = sa.stream().filter(s -> !sb.contains(s)).count();
        long onlyB = sb.stream().filter(s -> !sa.contains(s)).count();
        open("chunk");
        setValue(byId("chunk-text"), text);
        byId("tab-compare").click();
        setConfig("cfg-b", "recursive", 200);
        setConfig("cfg-c", "sentence", 200);
        byId("compare-run").click();
        awaitStatus("compare-status");
        assertEquals("done", byId("compare-status").getText());
        assertEquals(Integer.toString(((List<?>) a.get("parents")).size()), byId("compare-count-a").getText());
        assertEquals(Integer.toString(((List<?>) b.get("parents")).size()), byId("compare-count-b").getText());
        assertEquals(Long.toString(onlyA), byId("compare-only-a").getText());
        assertEquals(Long.toString(onlyB), byId("compare-only-b").getText());
        assertEquals(onlyA, driver().findElements(By.cssSelector("#compare-a .cut.diff")).size());
        assertEquals(onlyB, driver().findElements(By.cssSelector("#compare-b .cut.diff")).size());
        screenshot("compare");
    }

    /**
     * Separate vs late children of the same text: both sides cut the chapter alike, A embeds children separately and B late;
     * with a question every chunk's score under each mode, each parent's best chunk per side and the count of parents whose
     * best chunk differs are those of one {@code _chunk} call with {@code compare_embedding}.
     */
    public void testCompareView_separateVsLateChildren_showsEachChunksScoreUnderBothModes_asTheChunkApi() throws Exception {
        String text = chapter();
        String question = "Who did Miss Taylor marry?";
        Map<String, Object> rest = call("POST", "/_plugins/_strata/_chunk", json(Map.of("text", text,
            "strategy", Map.of("type", "recursive", "max_words", 150), "compare_embedding", true, "query_text", question)));
        List<Map<String, Object>> parents = (List<Map<String, Object>>) rest.get("parents");
        int chunks = 0;
        int differs = 0;
        for (Map<String, Object> p : parents) {
            chunks += 1 + ((List<?>) p.get("children")).size();
            Map<String, Object> best = (Map<String, Object>) p.get("best");
            Map<String, Object> s = (Map<String, Object>) best.get("separate");
            Map<String, Object> l = (Map<String, Object>) best.get("late");
            differs += s.get("level").equals(l.get("level")) && s.get("ordinal").equals(l.get("ordinal")) ? 0 : 1;
        }
        open("chunk");
        setValue(byId("chunk-text"), text);
        byId("tab-compare").click();
        setConfig("cfg-b", "recursive", 150);
        setConfig("cfg-c", "recursive", 150);
        new org.openqa.selenium.support.ui.Select(byId("cfg-c").findElement(By.className("f-children"))).selectByValue("late");
        setValue(byId("compare-question"), question);
        byId("compare-run").click();
        awaitStatus("compare-status");
        assertEquals("done", byId("compare-status").getText());
        assertEquals("no boundary differs", "0", byId("compare-only-a").getText());
        assertEquals(Integer.toString(differs), byId("compare-best-differs").getText());
        List<WebElement> rows = driver().findElements(By.cssSelector("#compare-scores tr.chunk"));
        assertEquals(chunks, rows.size());
        int outlined = 0;
        for (WebElement row : rows) {
            int p = Integer.parseInt(row.getAttribute("data-parent"));
            int k = Integer.parseInt(row.getAttribute("data-chunk"));
            Map<String, Object> parent = parents.get(p);
            Map<String, Object> chunk = k == 0 ? parent : ((List<Map<String, Object>>) parent.get("children")).get(k - 1);
            Map<String, Object> scores = (Map<String, Object>) chunk.get("scores");
            for (String[] side : new String[][] { { "score-a", "separate" }, { "score-b", "late" } }) {
                WebElement cell = row.findElement(By.className(side[0]));
                double expected = ((Number) scores.get(side[1])).doubleValue();
                assertEquals(side[1] + " score of parent " + p + " chunk " + k, expected, Double.parseDouble(cell.getText()), 0.000051);
                Map<String, Object> best = (Map<String, Object>) ((Map<String, Object>) parent.get("best")).get(side[1]);
                boolean isBest = k == 0 ? best.get("level").equals(0)
                    : best.get("level").equals(chunk.get("level")) && best.get("ordinal").equals(chunk.get("ordinal"));
                assertEquals(side[1] + " best of parent " + p + " chunk " + k, isBest, cell.getAttribute("class").contains("best"));
            }
            outlined += row.getAttribute("class").contains("best-differs") && k == 0 ? 1 : 0;
        }
        assertEquals(differs, outlined);
        for (String[] side : new String[][] { { "compare-a", "separate" }, { "compare-b", "late" } }) {
            List<WebElement> bands = driver().findElements(By.cssSelector("#" + side[0] + " .parent"));
            assertEquals(parents.size(), bands.size());
            for (int p = 0; p < parents.size(); p++) {
                Map<String, Object> parent = parents.get(p);
                Map<String, Object> best = (Map<String, Object>) ((Map<String, Object>) parent.get("best")).get(side[1]);
                Object start = parent.get("start");
                for (Map<String, Object> c : (List<Map<String, Object>>) parent.get("children")) {
                    if (c.get("level").equals(best.get("level")) && c.get("ordinal").equals(best.get("ordinal"))) {
                        start = c.get("start");
                    }
                }
                List<WebElement> marked = bands.get(p).findElements(By.cssSelector(".seg.best"));
                assertFalse(side[1] + ": parent " + p + " highlights its best chunk", marked.isEmpty());
                assertEquals(side[1] + ": parent " + p + "'s best chunk", start.toString(), marked.get(0).getAttribute("data-start"));
            }
        }
        screenshot("compare-late");
        ((JavascriptExecutor) driver()).executeScript("arguments[0].scrollIntoView()", byId("compare-scores"));
        screenshot("compare-late-scores");
    }

    /** A Markdown guide: three chapters of Emma as sections with sub-sections, paragraphs as prose. */
    /**
     * The Compare view's questions mode: two chunk indices of the same chapters (θ 200 and θ 60) on three questions pasted as
     * JSONL show exactly what {@code _compare} answers for the same body — both sides' scores, B − A with its interval — and,
     * per question, which side found it; a line that is not JSON is an error naming that line, before any request.
     */
    public void testCompareView_questionsMode_showsWhatCompareAnswers_andWhichSideFoundEachQuestion() throws Exception {
        putPipeline("studio-cq-200", "{\"field\": \"body\", \"target_index\": \"studio-cq-a\", \"strategy\": {\"type\": \"recursive\", "
            + "\"max_words\": 200}}");
        putPipeline("studio-cq-60", "{\"field\": \"body\", \"target_index\": \"studio-cq-b\", \"strategy\": {\"type\": \"recursive\", "
            + "\"max_words\": 60}}");
        Map<String, Map<String, Object>> docs = new java.util.LinkedHashMap<>();
        int n = 0;
        for (String text : emmaChapters().values()) {
            if (n == 3) {
                break;
            }
            docs.put("chapter-" + ++n, Map.of("body", text));
        }
        assertEquals(false, bulk("studio-cq-src-a", "studio-cq-200", docs).get("errors"));
        assertEquals(false, bulk("studio-cq-src-b", "studio-cq-60", docs).get("errors"));
        List<Map<String, Object>> questions = List.of(
            Map.of("question", "Who married Miss Taylor?", "source_id", "chapter-1"),
            Map.of("question", "How did Mr. Woodhouse feel about matrimony?", "source_id", "chapter-1", "span", List.of(0, 2000)),
            Map.of("question", "Who is Harriet Smith?", "source_id", "chapter-3"));
        Map<String, Object> expected = call("POST", "/_plugins/_strata/_compare", json(Map.of("a", "studio-cq-a", "b", "studio-cq-b",
            "questions", questions, "k", 5)));

        open("compare");
        new org.openqa.selenium.support.ui.Select(byId("compare-kind")).selectByValue("questions");
        setValue(byId("cq-a"), "studio-cq-a");
        setValue(byId("cq-b"), "studio-cq-b");
        setValue(byId("cq-k"), "5");
        setValue(byId("cq-jsonl"), json(questions.get(0)) + "\nnot json\n");
        byId("cq-run").click();
        assertTrue(byId("cq-status").getText(), byId("cq-status").getText().startsWith("error: line 2: not JSON"));
        StringBuilder jsonl = new StringBuilder();
        for (Map<String, Object> q : questions) {
            jsonl.append(json(q)).append("\n\n");
        }
        setValue(byId("cq-jsonl"), jsonl.toString());
        byId("cq-run").click();
        awaitStatus("cq-status");
        assertEquals("done", byId("cq-status").getText());
        Map<String, Object> difference = (Map<String, Object>) expected.get("difference");
        for (String metric : List.of("dcg@1", "dcg@k", "recall@k")) {
            List<WebElement> cells = byId("cq-scores").findElement(By.cssSelector("tr[data-metric='" + metric + "']"))
                .findElements(By.tagName("td"));
            assertEquals(metric, String.format(java.util.Locale.ROOT, "%.1f",
                ((Number) ((Map<String, Object>) expected.get("a")).get(metric)).doubleValue()), cells.get(0).getText());
            assertEquals(metric, String.format(java.util.Locale.ROOT, "%.1f",
                ((Number) ((Map<String, Object>) expected.get("b")).get(metric)).doubleValue()), cells.get(1).getText());
            Map<String, Object> d = (Map<String, Object>) difference.get(metric);
            assertEquals(metric, signed(d.get("mean")) + " [" + signed(d.get("low")) + ", " + signed(d.get("high")) + "]",
                cells.get(2).getText());
        }
        List<WebElement> rows = driver().findElements(By.cssSelector("#cq-questions tr.q-row"));
        List<Map<String, Object>> perQuestion = (List<Map<String, Object>>) expected.get("per_question");
        assertEquals(questions.size(), rows.size());
        for (int i = 0; i < rows.size(); i++) {
            int ra = ((Number) ((Map<String, Object>) perQuestion.get(i).get("a")).get("rank")).intValue();
            int rb = ((Number) ((Map<String, Object>) perQuestion.get(i).get("b")).get("rank")).intValue();
            String found = ra > 0 && rb > 0 ? "both" : ra > 0 ? "A" : rb > 0 ? "B" : "neither";
            assertEquals("question " + i, found, rows.get(i).findElement(By.className("found")).getText());
        }
        screenshot("compare-questions");
    }

    /**
     * The questions mode lists the source's generations as {@code GET _plugins/_strata/generations} answers them (each
     * chunk index with its generation, serving or not, config and counts) and a rebuild running meanwhile with its
     * progress. Oracle: the API's answer read right after the click.
     */
    public void testCompareView_listsTheGenerations_andARunningRebuildsProgress() throws Exception {
        String pipeline = "{\"field\": \"body\", \"target_index\": \"studio-gen-chunks\", \"embed\": false, "
            + "\"strategy\": {\"type\": \"recursive\", \"max_words\": %d}}";
        putPipeline("studio-gen", String.format(java.util.Locale.ROOT, pipeline, 40));
        Map<String, Map<String, Object>> docs = new java.util.LinkedHashMap<>();
        for (int i = 0; i < 250; i++) {
            docs.put("d" + i, Map.of("body", "Note " + i + ". Emma walked from Hartfield to Highbury and spoke of the weather. "
                .repeat(4 + i % 5).strip()));
        }
        assertEquals(false, bulk("studio-gen-src", "studio-gen", docs).get("errors"));
        putPipeline("studio-gen", String.format(java.util.Locale.ROOT, pipeline, 20));
        call("POST", "/_plugins/_strata/_rebuild?index=studio-gen-src&pipeline=studio-gen");
        // a second rebuild held back by its rate: running while the page lists
        String task = (String) call("POST", "/_plugins/_strata/_rebuild?index=studio-gen-src&pipeline=studio-gen&requests_per_second=1"
            + "&wait_for_completion=false").get("task");
        try {
            open("compare");
            new org.openqa.selenium.support.ui.Select(byId("compare-kind")).selectByValue("questions");
            setValue(byId("cq-source"), "studio-gen-src");
            byId("cq-list").click();
            wait(120).until(d -> {
                String status = d.findElement(By.id("cq-status")).getText();
                return status.contains(" chunk indices of ") || status.startsWith("error");
            });
            assertEquals("2 chunk indices of studio-gen-src", byId("cq-status").getText());
            Map<String, Object> expected = call("GET", "/_plugins/_strata/generations?index=studio-gen-src");
            List<Map<String, Object>> generations = (List<Map<String, Object>>) expected.get("generations");
            assertEquals(expected.toString(), 2, generations.size());
            List<WebElement> rows = driver().findElements(By.cssSelector("#cq-generations tr.g-row"));
            assertEquals(generations.size(), rows.size());
            for (int i = 0; i < rows.size(); i++) {
                Map<String, Object> g = generations.get(i);
                List<String> cells = rows.get(i).findElements(By.tagName("td")).stream().map(WebElement::getText).toList();
                assertEquals(List.of(g.get("index"), String.valueOf(g.get("generation")), Boolean.TRUE.equals(g.get("serving")) ? "yes" : "no",
                    g.get("state"), g.get("config") == null ? "" : g.get("config"), String.valueOf(g.get("documents")), String.valueOf(g.get("parents"))), cells);
            }
            assertEquals("studio-gen-chunks-g2", rows.get(1).getAttribute("data-index"));
            Map<String, Object> rebuild = (Map<String, Object>) expected.get("rebuild");
            assertNotNull(expected.toString(), rebuild);
            String line = byId("cq-rebuild").getText();
            assertTrue(line, line.startsWith("rebuilding studio-gen-chunks-g3: "));
            assertTrue(line, line.contains(" / 250 documents") && line.endsWith("(task " + task + ")"));
        } finally {
            call("POST", "/_tasks/" + task + "/_cancel");
        }
    }

    private static String signed(Object v) {
        double x = ((Number) v).doubleValue();
        return Math.abs(x) < 0.05 ? "0.0" : (x > 0 ? "+" : "−") + String.format(java.util.Locale.ROOT, "%.1f", Math.abs(x));
    }

    private static String markdownGuide() {
        StringBuilder md = new StringBuilder("# Emma\n\n");
        int n = 0;
        for (String chapter : emmaChapters().values()) {
            if (n++ == 3) {
                break;
            }
            String[] paragraphs = chapter.split("\n\s*\n");
            md.append("## Chapter ").append(n).append("\n\n");
            for (int i = 0; i < Math.min(6, paragraphs.length); i++) {
                if (i % 3 == 0) {
                    md.append("### Part ").append(n).append('.').append(i / 3 + 1).append("\n\n");
                }
                md.append(paragraphs[i].strip()).append("\n\n");
            }
        }
        return md.toString();
    }

    public void testChunkView_markdown_showsTheHeadingTreeBesideTheBands_andAHeadingScrollsToItsParent() throws Exception {
        String md = markdownGuide();
        Map<String, Object> rest = call("POST", "/_plugins/_strata/_chunk", json(Map.of("text", md, "format", "markdown",
            "strategy", Map.of("type", "recursive", "max_words", 120))));
        List<String> expected = new ArrayList<>(); // the section path of each run of parents, as the API says
        String previous = null;
        for (Map<String, Object> p : (List<Map<String, Object>>) rest.get("parents")) {
            List<String> section = (List<String>) p.get("section");
            if (!section.isEmpty() && !section.toString().equals(previous)) {
                expected.add(String.join(" › ", section));
            }
            previous = section.toString();
        }
        assertTrue(expected.toString(), expected.size() >= 6 && expected.contains("Emma › Chapter 2 › Part 2.1"));
        open("chunk");
        setValue(byId("chunk-text"), md);
        setConfig("cfg-a", "recursive", 120);
        new org.openqa.selenium.support.ui.Select(byId("cfg-a").findElement(By.className("f-format"))).selectByVisibleText("markdown");
        byId("chunk-run").click();
        awaitStatus("chunk-status");
        assertEquals("done", byId("chunk-status").getText());
        assertTrue(byId("chunk-outline").isDisplayed());
        List<WebElement> headings = driver().findElements(By.cssSelector("#chunk-outline a.heading:not(.merged)"));
        assertEquals(expected, headings.stream().map(h -> h.getAttribute("title")).toList());
        WebElement heading = headings.get(headings.size() / 2);
        int start = Integer.parseInt(heading.getAttribute("data-start"));
        heading.click();
        WebElement flashed = driver().findElement(By.cssSelector("#chunk-view .seg.flash"));
        assertEquals(start, Integer.parseInt(flashed.getAttribute("data-start")));
        screenshot("chunk-outline");
        // plain text has no heading tree
        new org.openqa.selenium.support.ui.Select(byId("cfg-a").findElement(By.className("f-format"))).selectByVisibleText("text");
        byId("chunk-run").click();
        awaitStatus("chunk-status");
        assertFalse(byId("chunk-outline").isDisplayed());
    }

    /** The Search view's hits for {@code question} over {@code index}, top {@code k}. */
    private List<WebElement> searchView(String index, int k, String question) throws Exception {
        open("search");
        setValue(byId("search-index"), index);
        setValue(byId("search-k"), Integer.toString(k));
        setValue(byId("search-question"), question);
        byId("search-run").click();
        awaitStatus("search-status");
        return driver().findElements(By.cssSelector("#search-results li.hit"));
    }

    public void testSearchView_showsTheSectionPathOfEachHit() throws Exception {
        putPipeline("studio-md", "{\"field\": \"text\", \"target_index\": \"studio-md-chunks\", \"format\": \"markdown\","
            + " \"strategy\": {\"type\": \"recursive\", \"max_words\": 120}}");
        bulk("studio-md-src", "studio-md", Map.of("guide", Map.of("text", markdownGuide())));
        refresh("studio-md-chunks");
        String question = "Who married Miss Taylor?";
        Map<String, Object> rest = call("POST", "/studio-md-chunks/_search", json(Map.of("size", 3, "query",
            Map.of("multi_granular", Map.of("query_text", question, "k", 3, "explain_child", true)))));
        List<Map<String, Object>> hits = (List<Map<String, Object>>) ((Map<String, Object>) rest.get("hits")).get("hits");
        List<WebElement> shown = searchView("studio-md-chunks", 3, question);
        assertEquals(hits.size(), shown.size());
        for (int i = 0; i < hits.size(); i++) {
            Map<String, Object> child = ((List<Map<String, Object>>) ((Map<String, Object>) hits.get(i).get("fields"))
                .get("strata_best_child")).get(0);
            List<String> section = (List<String>) child.get("section");
            assertNotNull("explain_child carries the section: " + child, section);
            assertEquals("section: " + String.join(" › ", section), shown.get(i).findElement(By.className("section")).getText());
        }
        screenshot("search-sections");
    }

    /**
     * A table piece stores its table's header row before its own rows: the matched chunk is still marked at its offsets in
     * the source (oracle: the page's text at the chunk's [start, end)), not shifted by the header.
     */
    @SuppressWarnings("unchecked")
    public void testSearchView_marksTheMatchedChunkOfATablePiece_atItsSourceOffsets() throws Exception {
        String page = orchardTable();
        putPipeline("studio-tbl", "{\"field\": \"text\", \"target_index\": \"studio-tbl-chunks\", \"format\": \"markdown\","
            + " \"embed\": false, \"strategy\": {\"type\": \"recursive\", \"max_words\": 60}}");
        bulk("studio-tbl-src", "studio-tbl", Map.of("orchard", Map.of("text", page)));
        refresh("studio-tbl-chunks");
        String question = "fruit37 valley37";
        Map<String, Object> rest = call("POST", "/studio-tbl-chunks/_search", json(Map.of("size", 3, "query",
            Map.of("multi_granular", Map.of("query_text", question, "k", 3, "explain_child", true)))));
        List<Map<String, Object>> hits = (List<Map<String, Object>>) ((Map<String, Object>) rest.get("hits")).get("hits");
        assertTrue("the best hit is a table piece with its header", ((Map<String, Object>) hits.get(0).get("_source")).containsKey("header_start"));
        List<WebElement> shown = searchView("studio-tbl-chunks", 3, question);
        assertEquals(hits.size(), shown.size());
        for (int i = 0; i < hits.size(); i++) {
            Map<String, Object> child = ((List<Map<String, Object>>) ((Map<String, Object>) hits.get(i).get("fields"))
                .get("strata_best_child")).get(0);
            String expected = page.substring((Integer) child.get("start"), (Integer) child.get("end"));
            assertEquals(hits.get(i).get("_id") + ": " + child, expected,
                shown.get(i).findElement(By.cssSelector("mark.matched")).getAttribute("textContent"));
        }
    }

    private static java.util.Set<Object> starts(Map<String, Object> r) {
        java.util.Set<Object> out = new java.util.HashSet<>();
        for (Map<String, Object> p : (List<Map<String, Object>>) r.get("parents")) {
            if ((Integer) p.get("start") > 0) {
                out.add(p.get("start"));
            }
        }
        return out;
    }

    /** {@code ext.strata_context} of the search the Search view sends, with a budget, with or without the query's evidence. */
    @SuppressWarnings("unchecked")
    private static Map<String, Object> context(String question, int budget, boolean evidence) throws Exception {
        Map<String, Object> mg = new java.util.LinkedHashMap<>(Map.of("query_text", question, "k", 3, "explain_child", true));
        if (evidence) {
            mg.put("evidence", Map.of("chunks", 3, "sentences", 3));
        }
        Map<String, Object> r = call("POST", "/studio-chunks/_search", json(Map.of("size", 3, "query", Map.of("multi_granular", mg),
            "search_pipeline", Map.of("response_processors", List.of(Map.of("strata_context", Map.of("budget", budget)))))));
        return (Map<String, Object>) ((Map<String, Object>) r.get("ext")).get("strata_context");
    }

    public void testSearchView_showsTheParentsOfTheQuery_withTheMatchedChunkHighlighted() throws Exception {
        putPipeline("studio", "{\"field\": \"text\", \"target_index\": \"studio-chunks\", \"strategy\": {\"type\": \"recursive\","
            + " \"max_words\": 150}}");
        int n = 0;
        for (Map.Entry<String, String> c : emmaChapters().entrySet()) {
            if (n++ == 3) {
                break;
            }
            // one bulk per chapter: each well inside the client's time-out on a busy machine
            bulk("studio-src", "studio", Map.of(Integer.toString(n), Map.of("text", c.getValue())));
        }
        refresh("studio-chunks");
        String question = "Who married Miss Taylor?";
        Map<String, Object> rest = call("POST", "/studio-chunks/_search", json(Map.of("size", 3, "query",
            Map.of("multi_granular", Map.of("query_text", question, "k", 3, "explain_child", true)))));
        List<Map<String, Object>> hits = (List<Map<String, Object>>) ((Map<String, Object>) rest.get("hits")).get("hits");
        open("search");
        setValue(byId("search-index"), "studio-chunks");
        setValue(byId("search-k"), "3");
        setValue(byId("search-question"), question);
        byId("search-run").click();
        awaitStatus("search-status");
        List<WebElement> shown = driver().findElements(By.cssSelector("#search-results li.hit"));
        List<String> ids = new ArrayList<>();
        shown.forEach(li -> ids.add(li.getAttribute("data-id")));
        assertEquals(hits.stream().map(h -> h.get("_id")).toList(), ids);
        for (int i = 0; i < hits.size(); i++) {
            Map<String, Object> child = ((List<Map<String, Object>>) ((Map<String, Object>) hits.get(i).get("fields"))
                .get("strata_best_child")).get(0);
            WebElement mark = shown.get(i).findElement(By.cssSelector("mark.matched"));
            assertEquals(child.get("text"), mark.getAttribute("textContent"));
            String meta = shown.get(i).findElement(By.className("meta")).getText();
            assertTrue(meta, meta.contains("(" + child.get("side") + " side)") && meta.contains("dense ") && meta.contains("fused "));
        }
        screenshot("search");
        // a context budget: the assembled context, as the same search through an inline strata_context pipeline returns it
        // with the query's evidence (what the framework retrievers send); at a budget where the evidence changes it
        Map<String, Object> ctx = null;
        int budget = 0;
        String asked = null;
        search:
        for (String q : List.of(question, "How did Mr. Woodhouse feel about the wedding?", "Who is Harriet Smith?")) {
            for (int b = 8; b <= 96; b += 8) {
                Map<String, Object> withEvidence = context(q, b, true);
                if (!withEvidence.get("passages").equals(context(q, b, false).get("passages"))) {
                    ctx = withEvidence;
                    budget = b;
                    asked = q;
                    break search;
                }
            }
        }
        assertNotNull("a question and budget where the query's evidence changes the context", ctx);
        setValue(byId("search-question"), asked);
        setValue(byId("search-budget"), Integer.toString(budget));
        byId("search-run").click();
        awaitStatus("search-status");
        assertTrue(byId("search-context").isDisplayed());
        String contextMeta = byId("search-context-meta").getText();
        assertTrue(contextMeta, contextMeta.startsWith("context: " + ctx.get("tokens") + " of " + budget + " tokens"));
        List<WebElement> passages = driver().findElements(By.cssSelector("#search-context-passages li.passage"));
        List<Map<String, Object>> expected = (List<Map<String, Object>>) ctx.get("passages");
        assertEquals(expected.size(), passages.size());
        for (int i = 0; i < expected.size(); i++) {
            assertEquals(expected.get(i).get("text"), passages.get(i).findElement(By.className("passage-text")).getAttribute("textContent"));
            assertTrue(passages.get(i).findElement(By.className("meta")).getText().contains("[" + expected.get(i).get("start") + ", "
                + expected.get(i).get("end") + ")"));
        }
        screenshot("search-context");
        setValue(byId("search-budget"), "");
        setValue(byId("search-question"), question);
        // the toggle: parents only
        byId("search-parents-only").click();
        byId("search-run").click();
        awaitStatus("search-status");
        for (WebElement li : driver().findElements(By.cssSelector("#search-results li.hit"))) {
            assertTrue(li.findElement(By.className("meta")).getText().contains("matched: level 0"));
        }
        // an unknown mode: the 400's message next to the mode field
        ((JavascriptExecutor) driver()).executeScript(
            "const o = document.createElement('option'); o.value = 'fuzzy'; o.textContent = 'fuzzy'; arguments[0].append(o); arguments[0].value = 'fuzzy'",
            byId("search-mode"));
        byId("search-run").click();
        awaitStatus("search-status");
        WebElement error = byId("search-mode").findElement(By.xpath("./ancestor::label")).findElement(By.className("field-error"));
        assertTrue(error.getText(), error.getText().contains("[mode]"));
    }
}

package io.strata.langchain4j;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import dev.langchain4j.data.document.Metadata;
import dev.langchain4j.rag.content.Content;
import dev.langchain4j.rag.query.Query;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The request the retriever sends and how it reads the answer, against a loopback HTTP server that answers canned JSON. */
class StrataContentRetrieverTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private HttpServer server;
    private final AtomicReference<String> path = new AtomicReference<>();
    private final AtomicReference<String> body = new AtomicReference<>();
    private final AtomicReference<String> auth = new AtomicReference<>();
    private volatile int status = 200;
    private volatile String answer = "{}";

    @BeforeEach
    void start() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", exchange -> {
            path.set(exchange.getRequestMethod() + " " + exchange.getRequestURI());
            body.set(new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
            auth.set(exchange.getRequestHeaders().getFirst("Authorization"));
            byte[] out = answer.getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.sendResponseHeaders(status, out.length);
            exchange.getResponseBody().write(out);
            exchange.close();
        });
        server.start();
    }

    @AfterEach
    void stop() {
        server.stop(0);
    }

    private StrataContentRetriever.Builder retriever() {
        return StrataContentRetriever.builder().url("http://127.0.0.1:" + server.getAddress().getPort()).index("books-chunks");
    }

    @Test
    void retrieve_sendsOneSearch_withTheQueryAndAnInlineContextPipeline() throws Exception {
        answer = "{\"hits\": {\"hits\": []}}";
        retriever().k(7).budget(256).mode("lexical").filter("{\"term\": {\"source_id\": \"ch1\"}}").order("document")
            .neighbours(false).tokenizer("e5-small-v2-q").build().retrieve(Query.from("who kept the light?"));
        assertEquals("POST /books-chunks/_search", path.get());
        assertEquals(JSON.readTree("""
            {"size": 7, "query": {"multi_granular": {"query_text": "who kept the light?", "k": 7, "explain_child": true,
              "evidence": {"chunks": 3, "sentences": 3}, "mode": "lexical", "filter": {"term": {"source_id": "ch1"}}}},
             "search_pipeline": {"response_processors": [{"strata_context":
              {"budget": 256, "tokenizer": "e5-small-v2-q", "order": "document", "neighbours": false}}]}}"""),
            JSON.readTree(body.get()));
    }

    @Test
    void retrieve_withANamedPipeline_sendsTheOptionsInExt() throws Exception {
        retriever().pipeline("rag").build().retrieve(Query.from("q"));
        assertEquals("POST /books-chunks/_search?search_pipeline=rag", path.get());
        JsonNode sent = JSON.readTree(body.get());
        assertEquals(JSON.readTree("{\"budget\": 512}"), sent.path("ext").path("strata_context"));
        assertFalse(sent.has("search_pipeline"));
    }

    @Test
    void retrieve_returnsOneContentPerPassage_inOrder_withTheCitationAsMetadata() {
        answer = """
            {"hits": {"hits": []}, "ext": {"strata_context": {"tokens": 9, "budget": 512, "text": "b\\n\\na", "passages": [
              {"index": "books-chunks", "source_index": "books", "source_id": "ch3", "start": 90, "end": 411, "tokens": 4,
               "hits": ["ch3:0", "ch3:1"], "text": "b"},
              {"index": "books-chunks", "source_index": "books", "source_id": "ch1", "start": 0, "end": 12, "tokens": 5,
               "hits": ["ch1:0"], "text": "a", "truncated": true}]}}}""";
        List<Content> contents = retriever().build().retrieve(Query.from("q"));
        assertEquals(List.of("b", "a"), contents.stream().map(c -> c.textSegment().text()).toList());
        Metadata first = contents.get(0).textSegment().metadata();
        assertEquals("books-chunks", first.getString("index"));
        assertEquals("books", first.getString("source_index"));
        assertEquals("ch3", first.getString("source_id"));
        assertEquals(90, first.getInteger("start"));
        assertEquals(411, first.getInteger("end"));
        assertEquals(4, first.getInteger("tokens"));
        assertEquals("ch3:0,ch3:1", first.getString("hits"));
        assertFalse(first.containsKey("truncated"));
        assertEquals("true", contents.get(1).textSegment().metadata().getString("truncated"));
    }

    @Test
    void retrieve_withBasicAuth_sendsTheCredentials() {
        retriever().basicAuth("admin", "s3cret:x").build().retrieve(Query.from("q"));
        assertEquals("Basic YWRtaW46czNjcmV0Ong=", auth.get());
    }

    @Test
    void retrieve_onAnErrorStatus_throwsWithTheServersReason() {
        status = 400;
        answer = """
            {"error": {"root_cause": [], "type": "illegal_argument_exception",
             "reason": "[ext.strata_context] [budget] must be between 1 and 100000, got [0]"}, "status": 400}""";
        StrataException e = assertThrows(StrataException.class, () -> retriever().budget(0).build().retrieve(Query.from("q")));
        assertEquals(400, e.status());
        assertTrue(e.getMessage().contains("illegal_argument_exception: [ext.strata_context] [budget] must be between"), e.getMessage());
    }

    @Test
    void build_withoutAnIndex_orWithFilterThatIsNotJson_fails() {
        assertThrows(IllegalArgumentException.class, () -> StrataContentRetriever.builder().url("http://x").build());
        assertThrows(IllegalArgumentException.class, () -> retriever().filter("{term"));
    }
}

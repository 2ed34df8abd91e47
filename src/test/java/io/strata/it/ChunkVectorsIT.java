package io.strata.it;

import org.opensearch.client.Request;
import org.opensearch.client.Response;
import org.opensearch.common.xcontent.XContentHelper;
import org.opensearch.core.common.bytes.BytesArray;
import org.opensearch.common.xcontent.XContentType;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * Vectors stay out of search hits of chunk indices unless the search asks for them ({@code ChunkVectorsFilter}), and are
 * stored once: the k-NN plugin's derived source keeps them out of the stored {@code _source} and rebuilds them on read,
 * so a search that asks, a get, and Strata's own reads (vector reuse on re-chunking, EmbeddingIT) still see them. Oracle: the chunk
 * documents as {@code GET _doc} returns them (the whole stored document, vectors included).
 */
@SuppressWarnings("unchecked")
public class ChunkVectorsIT extends StrataRestTestCase {
    private static final String TOUR = "{\"query\": {\"multi_granular\": {\"query_text\": \"Who married Miss Taylor?\", \"k\": 5, "
        + "\"explain_child\": true}}}";

    private static void books(String prefix) throws IOException {
        putPipeline(prefix + "-p", "{\"field\": \"body\", \"target_index\": \"" + prefix + "-chunks\", \"strategy\": {\"type\": "
            + "\"recursive\", \"max_words\": 300}, \"granularities\": [0.5, 0.25], \"copy_fields\": [\"title\"]}");
        Map<String, Map<String, Object>> docs = new java.util.LinkedHashMap<>();
        Iterator<Map.Entry<String, String>> chapters = emmaChapters().entrySet().iterator();
        chapters.next(); // the title page
        for (int i = 0; i < 2; i++) {
            Map.Entry<String, String> c = chapters.next();
            docs.put("ch" + i, Map.of("title", c.getKey(), "body", c.getValue()));
        }
        assertEquals(false, bulk(prefix, prefix + "-p", docs).get("errors"));
    }

    private static String search(String path, String body) throws IOException {
        Request request = new Request("POST", path);
        request.setJsonEntity(body);
        Response response = client().performRequest(request);
        return new String(response.getEntity().getContent().readAllBytes(), StandardCharsets.UTF_8);
    }

    private static List<Map<String, Object>> hits(String json) {
        Map<String, Object> r = XContentHelper.convertToMap(new BytesArray(json), false, XContentType.JSON).v2();
        List<Map<String, Object>> out = new ArrayList<>();
        for (Object h : (List<Object>) ((Map<String, Object>) r.get("hits")).get("hits")) {
            out.add((Map<String, Object>) h);
        }
        return out;
    }

    /** Whether a hit's {@code _source} holds a vector at the top or in any child. */
    private static boolean hasVectors(Map<String, Object> source) {
        if (source.containsKey("embedding")) {
            return true;
        }
        for (Object c : (List<Object>) source.getOrDefault("children", List.of())) {
            if (((Map<String, Object>) c).containsKey("embedding")) {
                return true;
            }
        }
        return false;
    }

    public void testASearchOfAChunkIndex_returnsNoVectorsUnlessItAsksForThem() throws Exception {
        books("vx");
        // stored once: k-NN's derived source keeps them out of the stored _source (EmbeddingIT: reuse still reads them)
        Map<String, Object> settings = (Map<String, Object>) ((Map<String, Object>) ((Map<String, Object>) call("GET",
            "/vx-chunks/_settings").get("vx-chunks")).get("settings")).get("index");
        assertEquals("true", ((Map<String, Object>) settings.get("knn.derived_source")).get("enabled"));
        String plain = search("/vx-chunks/_search", "{\"size\": 100, \"query\": {\"match_all\": {}}}");
        List<Map<String, Object>> hits = hits(plain);
        assertTrue(hits.size() > 3);
        for (Map<String, Object> hit : hits) {
            Map<String, Object> source = (Map<String, Object>) hit.get("_source");
            assertFalse("no vectors in " + hit.get("_id"), hasVectors(source));
            Map<String, Object> stored = (Map<String, Object>) call("GET", "/vx-chunks/_doc/" + hit.get("_id")).get("_source");
            assertTrue("the stored chunk has its vectors", hasVectors(stored));
            // the rest of the document is all there
            stored.remove("embedding");
            for (Object c : (List<Object>) stored.get("children")) {
                ((Map<String, Object>) c).remove("embedding");
            }
            assertEquals(stored, source);
        }
        // the README tour's search: the hits without vectors, and with them when asked
        String lean = search("/vx-chunks/_search", TOUR);
        String full = search("/vx-chunks/_search", "{\"_source\": true, " + TOUR.substring(1));
        assertEquals(5, hits(lean).size());
        for (Map<String, Object> hit : hits(lean)) {
            assertFalse(hasVectors((Map<String, Object>) hit.get("_source")));
        }
        for (Map<String, Object> hit : hits(full)) {
            Map<String, Object> stored = (Map<String, Object>) call("GET", "/vx-chunks/_doc/" + hit.get("_id")).get("_source");
            assertEquals("asked for: the stored vectors", stored, hit.get("_source"));
        }
        logger.info("tour hit payload: {} bytes without vectors, {} with ({}x)", lean.length(), full.length(),
            String.format(java.util.Locale.ROOT, "%.3f", (double) lean.length() / full.length()));
        assertTrue(lean.length() * 5 < full.length());
        // asking for one vector field gets it
        for (Map<String, Object> hit : hits(search("/vx-chunks/_search", "{\"_source\": [\"children.embedding\"], \"size\": 3}"))) {
            List<Object> children = (List<Object>) ((Map<String, Object>) hit.get("_source")).get("children");
            assertEquals(384, ((List<Object>) ((Map<String, Object>) children.get(0)).get("embedding")).size());
        }
        // a scroll reads whole documents (as _reindex does): the vectors stay
        for (Map<String, Object> hit : hits(search("/vx-chunks/_search?scroll=1m", "{\"size\": 3}"))) {
            assertTrue(hasVectors((Map<String, Object>) hit.get("_source")));
        }
        // a search of the source index beside it is left as written
        for (Map<String, Object> hit : hits(search("/vx,vx-chunks/_search", "{\"size\": 100}"))) {
            if (hit.get("_index").equals("vx-chunks")) {
                assertTrue(hasVectors((Map<String, Object>) hit.get("_source")));
            }
        }
    }
}

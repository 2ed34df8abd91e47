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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Vectors and the children's texts stay out of search hits of chunk indices unless the search asks for them
 * ({@code ChunkVectorsFilter}): a hit carries its parent's text and each child's offsets, from which a client slices the
 * child's text by the rule of docs/query.md. Vectors are stored once: the k-NN plugin's derived source keeps them out of the
 * stored {@code _source} and rebuilds them on read, so a search that asks, a get, and Strata's own reads (vector reuse on
 * re-chunking, EmbeddingIT) still see them. Oracle: the chunk documents as {@code GET _doc} returns them (the whole stored
 * document, vectors and child texts included).
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

    /** A stored chunk document as a search that says nothing of {@code _source} should return it: no vectors, no child texts. */
    private static Map<String, Object> lean(Map<String, Object> stored) {
        Map<String, Object> out = new LinkedHashMap<>(stored);
        out.remove("embedding");
        List<Object> children = new ArrayList<>();
        for (Object c : (List<Object>) stored.get("children")) {
            Map<String, Object> child = new LinkedHashMap<>((Map<String, Object>) c);
            child.remove("embedding");
            child.remove("text");
            children.add(child);
        }
        out.put("children", children);
        return out;
    }

    /**
     * The rule docs/query.md gives a client: the parent's {@code text} ends with the source's {@code [start, end)} (a table
     * piece puts its repeated header row and a line break before it), so the source at {@code [a, b)} inside the parent is
     * {@code text[len − (end − a), len − (end − b))}; a child's text is the source at its offsets, after its own repeated
     * header row and a line break when it has one — a row inside the parent's span, or else the parent's own header.
     */
    private static String sliced(Map<String, Object> parent, Map<String, Object> child) {
        String text = (String) parent.get("text");
        int end = (Integer) parent.get("end");
        String own = text.substring(text.length() - (end - (Integer) child.get("start")), text.length() - (end - (Integer) child.get("end")));
        if (!child.containsKey("header_start")) {
            return own;
        }
        int hs = (Integer) child.get("header_start");
        int he = (Integer) child.get("header_end");
        String header = hs >= (Integer) parent.get("start") && he <= end
            ? text.substring(text.length() - (end - hs), text.length() - (end - he))
            : text.substring(0, he - hs); // the parent's own repeated header (a table piece too)
        return header + "\n" + own;
    }

    /** Each chunk of the chunking in a hit (level-0 self entries left out): its text sliced from the parent's by the rule. */
    private static List<String> slicedChildren(Map<String, Object> source) {
        List<String> out = new ArrayList<>();
        for (Object c : (List<Object>) source.get("children")) {
            Map<String, Object> child = (Map<String, Object>) c;
            if ((Integer) child.get("level") > 0) {
                out.add(sliced(source, child));
            }
        }
        return out;
    }

    private static List<String> storedChildren(Map<String, Object> stored) {
        List<String> out = new ArrayList<>();
        for (Object c : (List<Object>) stored.get("children")) {
            Map<String, Object> child = (Map<String, Object>) c;
            if ((Integer) child.get("level") > 0) {
                out.add((String) child.get("text"));
            }
        }
        return out;
    }

    private static Map<String, Object> stored(String index, Object id) throws IOException {
        return (Map<String, Object>) call("GET", "/" + index + "/_doc/" + id).get("_source");
    }

    /** Every child of a lean hit has its level and offsets but no text (and no vector). */
    private static void assertLean(Map<String, Object> hit) {
        Map<String, Object> source = (Map<String, Object>) hit.get("_source");
        assertFalse(hasVectors(source));
        assertTrue(hit.get("_id") + " has its text", source.get("text") instanceof String);
        for (Object c : (List<Object>) source.get("children")) {
            Map<String, Object> child = (Map<String, Object>) c;
            assertFalse(hit.get("_id") + ": a child with its text " + child, child.containsKey("text"));
            assertTrue(child.containsKey("level"));
            if ((Integer) child.get("level") > 0) {
                assertTrue(child.containsKey("start") && child.containsKey("end") && child.containsKey("ordinal"));
            }
        }
    }

    public void testASearchOfAChunkIndex_returnsNoVectorsNorChildTextsUnlessItAsksForThem() throws Exception {
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
            assertLean(hit);
            Map<String, Object> stored = stored("vx-chunks", hit.get("_id"));
            assertTrue("the stored chunk has its vectors", hasVectors(stored));
            // the rest of the document is all there, and each child's text is the parent's text at its offsets
            assertEquals(lean(stored), source);
            assertEquals(storedChildren(stored), slicedChildren(source));
        }
        // the README tour's search: lean hits; everything when asked
        String lean = search("/vx-chunks/_search", TOUR);
        String noVectors = search("/vx-chunks/_search", "{\"_source\": {\"excludes\": [\"embedding\", \"children.embedding\"]}, "
            + TOUR.substring(1));
        String full = search("/vx-chunks/_search", "{\"_source\": true, " + TOUR.substring(1));
        assertEquals(5, hits(lean).size());
        assertEquals(hits(full).stream().map(h -> h.get("_id")).toList(), hits(lean).stream().map(h -> h.get("_id")).toList());
        for (int i = 0; i < 5; i++) {
            Map<String, Object> hit = hits(lean).get(i);
            assertLean(hit);
            Map<String, Object> whole = (Map<String, Object>) hits(full).get(i).get("_source");
            assertEquals("asked for: the stored document", stored("vx-chunks", hit.get("_id")), whole);
            assertEquals(lean(whole), hit.get("_source"));
            assertEquals(storedChildren(whole), slicedChildren((Map<String, Object>) hit.get("_source")));
            // explain_child still quotes the matched chunk: the parent's text at its offsets
            Map<String, Object> best = (Map<String, Object>) ((List<Object>) ((Map<String, Object>) hit.get("fields"))
                .get("strata_best_child")).get(0);
            assertEquals(sliced((Map<String, Object>) hit.get("_source"), best), best.get("text"));
        }
        logger.info("tour hit payload: {} bytes lean (the default), {} without vectors only, {} with _source: true ({}x of it)",
            lean.length(), noVectors.length(), full.length(), String.format(java.util.Locale.ROOT, "%.3f", (double) lean.length() / full.length()));
        assertTrue(lean.length() + " bytes lean against " + full.length() + " whole: not within a tenth", lean.length() * 10 <= full.length());
        // a bool around it, paged: lean hits, the same as the whole ones less vectors and child texts
        String paged = "\"from\": 2, \"size\": 3, \"query\": {\"bool\": {\"must\": [{\"multi_granular\": {\"query_text\": "
            + "\"Who married Miss Taylor?\", \"k\": 8, \"explain_child\": true}}], \"filter\": [{\"exists\": {\"field\": \"title\"}}]}}}";
        List<Map<String, Object>> pagedLean = hits(search("/vx-chunks/_search", "{" + paged));
        List<Map<String, Object>> pagedFull = hits(search("/vx-chunks/_search", "{\"_source\": true, " + paged));
        assertEquals(3, pagedLean.size());
        for (int i = 0; i < pagedLean.size(); i++) {
            assertEquals(pagedFull.get(i).get("_id"), pagedLean.get(i).get("_id"));
            assertLean(pagedLean.get(i));
            Map<String, Object> whole = (Map<String, Object>) pagedFull.get(i).get("_source");
            assertEquals(lean(whole), pagedLean.get(i).get("_source"));
            assertEquals(storedChildren(whole), slicedChildren((Map<String, Object>) pagedLean.get(i).get("_source")));
        }
        // asking for one field gets it
        for (Map<String, Object> hit : hits(search("/vx-chunks/_search", "{\"_source\": [\"children.embedding\"], \"size\": 3}"))) {
            List<Object> children = (List<Object>) ((Map<String, Object>) hit.get("_source")).get("children");
            assertEquals(384, ((List<Object>) ((Map<String, Object>) children.get(0)).get("embedding")).size());
        }
        for (Map<String, Object> hit : hits(search("/vx-chunks/_search", "{\"_source\": [\"children.text\"], \"size\": 100}"))) {
            // the level-0 entry has no text: it is left out, and with it the whole array of a parent without children
            List<Object> texts = ((List<Object>) ((Map<String, Object>) hit.get("_source")).getOrDefault("children", List.of())).stream()
                .map(c -> ((Map<String, Object>) c).get("text")).toList();
            assertEquals(storedChildren(stored("vx-chunks", hit.get("_id"))), texts);
        }
        // a nested query's inner hits are the children as written: their texts stay
        Map<String, Object> nested = hits(search("/vx-chunks/_search", "{\"size\": 1, \"query\": {\"nested\": {\"path\": \"children\", "
            + "\"query\": {\"match\": {\"children.text\": \"Taylor\"}}, \"inner_hits\": {\"size\": 1}}}}")).get(0);
        assertLean(nested);
        Map<String, Object> inner = (Map<String, Object>) ((List<Object>) ((Map<String, Object>) ((Map<String, Object>) ((Map<String, Object>)
            nested.get("inner_hits")).get("children")).get("hits")).get("hits")).get(0);
        Map<String, Object> innerChild = (Map<String, Object>) inner.get("_source");
        assertEquals(sliced((Map<String, Object>) nested.get("_source"), innerChild), innerChild.get("text"));
        assertFalse("an inner hit carries no vector (nor k-NN's stored placeholder): " + innerChild, innerChild.containsKey("embedding"));
        // an inner hit that asks for its _source gets the child's vector (the request is then left as written)
        Map<String, Object> asked = hits(search("/vx-chunks/_search", "{\"size\": 1, \"query\": {\"nested\": {\"path\": \"children\", "
            + "\"query\": {\"match\": {\"children.text\": \"Taylor\"}}, \"inner_hits\": {\"size\": 1, \"_source\": true}}}}")).get(0);
        Map<String, Object> askedChild = (Map<String, Object>) ((Map<String, Object>) ((List<Object>) ((Map<String, Object>) ((Map<String, Object>)
            ((Map<String, Object>) asked.get("inner_hits")).get("children")).get("hits")).get("hits")).get(0)).get("_source");
        assertEquals(askedChild.toString(), 384, ((List<Object>) askedChild.get("embedding")).size());
        // a scroll reads whole documents (as _reindex does): vectors and child texts stay
        for (Map<String, Object> hit : hits(search("/vx-chunks/_search?scroll=1m", "{\"size\": 3}"))) {
            assertEquals(stored("vx-chunks", hit.get("_id")), hit.get("_source"));
        }
        // a search of the source index beside it is left as written
        for (Map<String, Object> hit : hits(search("/vx,vx-chunks/_search", "{\"size\": 100}"))) {
            if (hit.get("_index").equals("vx-chunks")) {
                assertEquals(stored("vx-chunks", hit.get("_id")), hit.get("_source"));
            }
        }
    }

    public void testTablePieces_childTextsSliceFromTheParentWithTheirRepeatedHeader() throws Exception {
        putPipeline("vt-p", "{\"field\": \"body\", \"target_index\": \"vt-chunks\", \"format\": \"markdown\", \"embed\": false, "
            + "\"strategy\": {\"type\": \"recursive\", \"max_words\": 60}}");
        assertEquals(false, bulk("vt", "vt-p", Map.of("orchard", Map.of("body", orchardTable()))).get("errors"));
        refresh("vt-chunks");
        List<Map<String, Object>> hits = hits(search("/vt-chunks/_search", "{\"size\": 100, \"query\": {\"match_all\": {}}}"));
        assertTrue(hits.size() > 3);
        boolean parentHeader = false;
        boolean childHeader = false;
        for (Map<String, Object> hit : hits) {
            assertLean(hit);
            Map<String, Object> source = (Map<String, Object>) hit.get("_source");
            Map<String, Object> stored = stored("vt-chunks", hit.get("_id"));
            assertEquals(lean(stored), source);
            assertEquals(hit.get("_id").toString(), storedChildren(stored), slicedChildren(source));
            parentHeader |= source.containsKey("header_start");
            childHeader |= ((List<Object>) source.get("children")).stream().anyMatch(c -> ((Map<String, Object>) c).containsKey("header_start"));
        }
        assertTrue("a parent repeats the table header", parentHeader);
        assertTrue("a child repeats the table header", childHeader);
    }
}

package io.strata.it;

import org.opensearch.client.ResponseException;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** The {@code multi_granular_chunking} processor on a real cluster: what it writes, replaces and removes. */
@SuppressWarnings("unchecked")
public class MultiGranularChunkingIT extends StrataRestTestCase {
    private static final String PIPELINE = """
        {"field": "body", "target_index": "books-chunks", "strategy": {"type": "recursive", "max_words": 200},
         "copy_fields": ["title"]}""";

    private Map<String, String> ingestEmma() throws Exception {
        putPipeline("emma", PIPELINE);
        Map<String, String> chapters = emmaChapters();
        Map<String, Map<String, Object>> docs = new LinkedHashMap<>();
        int i = 0;
        Map<String, String> bodies = new LinkedHashMap<>();
        for (var chapter : chapters.entrySet()) {
            String id = "emma-" + (++i);
            docs.put(id, Map.of("title", chapter.getKey(), "body", chapter.getValue()));
            bodies.put(id, chapter.getValue());
        }
        Map<String, Object> response = bulk("books", "emma", docs);
        assertEquals("bulk: " + response, false, response.get("errors"));
        return bodies;
    }

    public void testBulkIngestOfBook_writesOneChunkDocPerParentWithChildrenAtEachLevel() throws Exception {
        Map<String, String> bodies = ingestEmma();
        assertEquals(3, bodies.size());
        int totalParents = 0;
        int bothLevels = 0;
        for (var e : bodies.entrySet()) {
            String body = e.getValue();
            Map<String, Object> source = (Map<String, Object>) call("GET", "/books/_doc/" + e.getKey()).get("_source");
            Map<String, Object> summary = (Map<String, Object>) source.get("strata");
            assertEquals(body, source.get("body"));
            int parents = (Integer) summary.get("parents");
            assertEquals("recursive", summary.get("strategy"));
            assertEquals("books-chunks", summary.get("target_index"));
            List<Map<String, Object>> chunks = chunksOf("books-chunks", e.getKey());
            assertEquals(parents, chunks.size());
            int children = 0;
            for (int o = 0; o < chunks.size(); o++) {
                Map<String, Object> chunk = chunks.get(o);
                assertEquals(o, chunk.get("ordinal"));
                assertEquals(e.getKey(), chunk.get("source_id"));
                assertEquals("books", chunk.get("source_index"));
                assertEquals(source.get("title"), chunk.get("title"));
                int start = (Integer) chunk.get("start");
                int end = (Integer) chunk.get("end");
                assertEquals(body.substring(start, end), chunk.get("text"));
                assertTrue(body.substring(start, end).split("\\s+").length <= 200);
                Set<Integer> levels = new HashSet<>();
                int selves = 0;
                for (Map<String, Object> child : (List<Map<String, Object>>) chunk.get("children")) {
                    if ((Integer) child.get("level") == 0) {
                        // the parent as its own level-0 child (format 2): its vector only, equal to the parent's
                        assertEquals(Set.of("level", "embedding"), child.keySet());
                        assertEquals(chunk.get("embedding"), child.get("embedding"));
                        selves++;
                        continue;
                    }
                    int cs = (Integer) child.get("start");
                    int ce = (Integer) child.get("end");
                    int level = (Integer) child.get("level");
                    levels.add(level);
                    assertEquals(body.substring(cs, ce), child.get("text"));
                    assertTrue("child inside its parent", start <= cs && ce <= end);
                    // a child below a quarter of its level's size joins a neighbour: at most that quarter more
                    assertTrue(body.substring(cs, ce).split("\\s+").length < (level == 1 ? 100 : 50) * 1.25);
                    assertFalse("a child repeating its parent is not written", cs == start && ce == end);
                    children++;
                }
                // a level whose children would only repeat the coarser chunks is not written (a parent within θ/2 has no level 1)
                assertTrue(levels.toString(), Set.of(1, 2).containsAll(levels));
                if (levels.size() == 2) {
                    bothLevels++;
                }
                assertEquals("one level-0 entry per embedded parent", 1, selves);
            }
            assertEquals(summary.get("children"), children);
            totalParents += parents;
        }
        assertEquals(totalParents, count("books-chunks"));
        assertTrue("most parents have children at both levels: " + bothLevels + " of " + totalParents, bothLevels * 2 > totalParents);
        // children are searchable per level through the nested mapping
        Map<String, Object> r = call("POST", "/books-chunks/_search", """
            {"query": {"nested": {"path": "children", "query": {"bool": {"filter": [{"term": {"children.level": 2}}],
              "must": [{"match": {"children.text": "Hartfield"}}]}}}}}""");
        assertTrue(((Number) ((Map<String, Object>) ((Map<String, Object>) r.get("hits")).get("total")).get("value")).intValue() > 0);
    }

    public void testReingest_withShorterText_replacesChunksAndLeavesNoStaleParents() throws Exception {
        Map<String, String> bodies = ingestEmma();
        String id = bodies.keySet().iterator().next();
        int before = chunksOf("books-chunks", id).size();
        assertTrue(before > 2);
        String shorter = "Emma Woodhouse, handsome, clever, and rich. She had lived nearly twenty-one years in the world.";
        call("PUT", "/books/_doc/" + id + "?pipeline=emma&refresh=true", json(Map.of("title", "short", "body", shorter)));
        List<Map<String, Object>> after = chunksOf("books-chunks", id);
        assertEquals(1, after.size());
        assertEquals(shorter, after.get(0).get("text"));
        assertEquals("short", after.get(0).get("title"));
        int others = 0;
        for (String other : bodies.keySet()) {
            if (!other.equals(id)) {
                others += chunksOf("books-chunks", other).size();
            }
        }
        assertEquals(others + 1, count("books-chunks"));
    }

    public void testDeleteSource_deletesItsChunks_singleAndBulk() throws Exception {
        Map<String, String> bodies = ingestEmma();
        List<String> ids = new ArrayList<>(bodies.keySet());
        call("DELETE", "/books/_doc/" + ids.get(0) + "?refresh=true");
        assertEquals(0, chunksOf("books-chunks", ids.get(0)).size());
        int remaining = chunksOf("books-chunks", ids.get(1)).size() + chunksOf("books-chunks", ids.get(2)).size();
        assertEquals(remaining, count("books-chunks"));

        StringBuilder bulk = new StringBuilder();
        for (String id : ids.subList(1, 3)) {
            bulk.append("{\"delete\": {\"_index\": \"books\", \"_id\": \"").append(id).append("\"}}\n");
        }
        var request = new org.opensearch.client.Request("POST", "/_bulk?refresh=true");
        request.setJsonEntity(bulk.toString());
        client().performRequest(request);
        assertEquals(0, count("books-chunks"));
    }

    public void testSimulate_showsChunksAndWritesNothing() throws Exception {
        putPipeline("sim", PIPELINE);
        String body = emmaChapters().values().iterator().next();
        Map<String, Object> r = call("POST", "/_ingest/pipeline/sim/_simulate",
            json(Map.of("docs", List.of(Map.of("_index", "books", "_id", "s1", "_source", Map.of("title", "t", "body", body))))));
        Map<String, Object> doc = (Map<String, Object>) ((Map<String, Object>) ((List<Object>) r.get("docs")).get(0)).get("doc");
        Map<String, Object> summary = (Map<String, Object>) ((Map<String, Object>) doc.get("_source")).get("strata");
        List<Map<String, Object>> chunks = (List<Map<String, Object>>) summary.get("chunks");
        assertEquals(summary.get("parents"), chunks.size());
        assertTrue(chunks.size() > 1);
        Map<String, Object> first = chunks.get(0);
        assertEquals(body.substring((Integer) first.get("start"), (Integer) first.get("end")), first.get("text"));
        assertEquals("s1", first.get("source_id"));
        assertFalse("simulate writes no chunk index", indexExists("books-chunks"));
    }

    public void testIndexWithoutId_chunksUseTheGeneratedId() throws Exception {
        putPipeline("auto", PIPELINE);
        Map<String, Object> r = call("POST", "/books/_doc?pipeline=auto&refresh=true",
            json(Map.of("title", "t", "body", "One sentence here. Another one there.")));
        String id = (String) r.get("_id");
        List<Map<String, Object>> chunks = chunksOf("books-chunks", id);
        assertEquals(1, chunks.size());
        assertEquals(id, chunks.get(0).get("source_id"));
        Map<String, Object> chunkDoc = call("GET", "/books-chunks/_doc/" + id + ":0");
        assertEquals(true, chunkDoc.get("found"));
    }

    public void testFailedSourceWrite_leavesNoChunks() throws Exception {
        call("PUT", "/strict-books", """
            {"mappings": {"dynamic": "strict", "properties": {"body": {"type": "text"}, "title": {"type": "keyword"},
              "strata": {"type": "object", "enabled": false}}}}""");
        putPipeline("strict", PIPELINE.replace("books-chunks", "strict-chunks"));
        ResponseException e = callFailing("PUT", "/strict-books/_doc/x?pipeline=strict",
            json(Map.of("title", "t", "body", "A sentence. And another.", "unexpected", 1)));
        assertEquals(400, e.getResponse().getStatusLine().getStatusCode());
        assertTrue(e.getMessage().contains("strict_dynamic_mapping_exception"));
        // the processor had written the chunk before the source write failed; the failure removed it
        assertEquals(0, count("strict-chunks"));
        // a good write of the same document still works
        call("PUT", "/strict-books/_doc/x?pipeline=strict&refresh=true", json(Map.of("title", "t", "body", "A sentence. And another.")));
        assertEquals(1, count("strict-chunks"));
    }

    public void testUserCreatedTwoShardChunkIndex_getsTheChunkMappingAndChunksOnBothShards() throws Exception {
        call("PUT", "/books-chunks", "{\"settings\": {\"number_of_shards\": 2, \"number_of_replicas\": 0, \"index.knn\": true}}");
        Map<String, String> bodies = ingestEmma();
        Map<String, Object> mapping = call("GET", "/books-chunks/_mapping");
        Map<String, Object> props = (Map<String, Object>) ((Map<String, Object>) ((Map<String, Object>) mapping.get("books-chunks"))
            .get("mappings")).get("properties");
        assertEquals("nested", ((Map<String, Object>) props.get("children")).get("type"));
        refresh("books-chunks");
        Map<String, Object> shards = call("GET", "/books-chunks/_stats/docs?level=shards");
        Map<String, Object> perShard = (Map<String, Object>) ((Map<String, Object>) ((Map<String, Object>) shards.get("indices"))
            .get("books-chunks")).get("shards");
        assertEquals(2, perShard.size());
        int total = 0;
        for (Object copies : perShard.values()) {
            Map<String, Object> primary = (Map<String, Object>) ((List<Object>) copies).get(0);
            int docs = ((Number) ((Map<String, Object>) ((Map<String, Object>) primary.get("docs"))).get("count")).intValue();
            assertTrue("every shard holds chunks", docs > 0);
            total += docs;
        }
        int parents = 0;
        for (String id : bodies.keySet()) {
            parents += chunksOf("books-chunks", id).size();
        }
        assertTrue(total >= parents); // nested children are Lucene docs too
        Map<String, Object> nodes = call("GET", "/_nodes");
        int nodeCount = ((Map<String, Object>) nodes.get("nodes")).size();
        assertTrue("this test needs the multi-node cluster bin/strata-test starts", nodeCount >= 2);
    }

    public void testUserCreatedIndexWithoutKnn_isRejectedWithTheSettingToAdd() throws Exception {
        call("PUT", "/books-chunks", "{\"settings\": {\"number_of_shards\": 1}}");
        putPipeline("emma", PIPELINE);
        ResponseException e = callFailing("PUT", "/books/_doc/1?pipeline=emma", json(Map.of("body", "Some text here.")));
        assertEquals(400, e.getResponse().getStatusLine().getStatusCode());
        assertTrue(e.getMessage(), e.getMessage().contains("was created without [index.knn: true]"));
    }

    public void testSecondSourceIndexIntoTheSameTarget_isRejected() throws Exception {
        ingestEmma();
        ResponseException e = callFailing("PUT", "/other-books/_doc/1?pipeline=emma", json(Map.of("body", "Some text here.")));
        assertEquals(400, e.getResponse().getStatusLine().getStatusCode());
        assertTrue(e.getMessage(), e.getMessage().contains("already holds the chunks of index [books]"));
    }
}

package io.strata.it.secured;

import org.opensearch.client.Response;

import java.io.IOException;
import java.util.List;
import java.util.Map;

/**
 * A writer whose role has document- or field-level security on the chunk index gets non-realtime reads from the security
 * plugin: the chunks of a document beyond its new parent count must go all the same when it is rewritten before the chunk
 * index was refreshed (20 parents, then 5). Oracle: {@code _chunk} of the stored text. Written first against the code
 * before the fix, which found the old chunks with a realtime multi-get: "the chunks of the rewritten document
 * expected:<5> but was:<19>" (15 stale parents, less the tombstone at id 5).
 */
public class SecuredChunkRewriteIT extends SecuredRestTestCase {
    private static final List<String> WRITER_CLUSTER = List.of("indices:data/write/bulk");
    private static final List<String> WRITE = List.of("crud", "create_index", "indices:admin/mapping/put");

    /** {@code sentences} sentences of 15 words: with 20-word parents, one parent each. */
    private static String text(String tag, int sentences) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < sentences; i++) {
            b.append("In version ").append(tag).append(" sentence ").append(i)
                .append(" Emma walks slowly from Hartfield to Highbury and back again today. ");
        }
        return b.toString().strip();
    }

    private static int chunksOfDoc(String chunks, String id) throws IOException {
        call("POST", "/" + chunks + "/_refresh");
        return ((Number) call("POST", "/" + chunks + "/_count", "{\"query\": {\"term\": {\"source_id\": \"" + id + "\"}}}")
            .get("count")).intValue();
    }

    private void rewriteUnder(String name, Map<String, Object> restriction) throws Exception {
        String source = name + "-src";
        String chunks = name + "-chunks";
        // never refreshed by a timer: the rewrite comes before the first version's chunks are searchable
        call("PUT", "/_index_template/" + name, "{\"index_patterns\": [\"" + name + "-*\"], \"template\": {\"settings\": "
            + "{\"index.refresh_interval\": \"-1\", \"index.number_of_replicas\": 0}}}");
        putPipeline(name, "{\"field\": \"body\", \"target_index\": \"" + chunks + "\", \"embed\": false, "
            + "\"strategy\": {\"type\": \"recursive\", \"max_words\": 20}}");
        Map<String, Object> chunkPermission = new java.util.HashMap<>(Map.of("index_patterns", List.of(chunks), "allowed_actions", WRITE));
        chunkPermission.putAll(restriction);
        putRole(name, WRITER_CLUSTER, List.of(indexPermission(List.of(source), WRITE), chunkPermission));
        putUser(name, name);

        String first = text("one", 20);
        String second = text("two", 5);
        int before = cutByChunkApi(first, Map.of("type", "recursive", "max_words", 20), null).size();
        int after = cutByChunkApi(second, Map.of("type", "recursive", "max_words", 20), null).size();
        assertEquals(20, before);
        assertEquals(5, after);
        for (String body : List.of(first, second)) {
            Response r = as(name, "PUT", "/" + source + "/_doc/1?pipeline=" + name, json(Map.of("body", body)));
            assertEquals(bodyOf(r), 201 + (body == first ? 0 : -1), status(r));
        }
        assertEquals("the chunks of the rewritten document", after, chunksOfDoc(chunks, "1"));
    }

    public void testARewriteFrom20To5Parents_byAWriterWithDlsOnTheChunkIndex_leavesNoStaleParents() throws Exception {
        rewriteUnder("sec-dlsw", Map.of("dls", "{\"exists\": {\"field\": \"source_id\"}}"));
    }

    public void testARewriteFrom20To5Parents_byAWriterWithFlsOnTheChunkIndex_leavesNoStaleParents() throws Exception {
        rewriteUnder("sec-flsw", Map.of("fls", List.of("~strategy")));
    }
}

// The request the retriever sends and how it reads the answer, with a stand-in fetch.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Document } from "@langchain/core/documents";
import { StrataRetriever, StrataError } from "../src/index.js";

function fakeFetch(status, answer) {
  const calls = [];
  const fetch = async (url, init) => {
    calls.push({ url, init, body: JSON.parse(init.body) });
    return new Response(typeof answer === "string" ? answer : JSON.stringify(answer), { status });
  };
  return { fetch, calls };
}

test("sends one search with the query and an inline strata_context pipeline", async () => {
  const { fetch, calls } = fakeFetch(200, { hits: { hits: [] } });
  const retriever = new StrataRetriever({
    url: "http://127.0.0.1:9200/", index: "books-chunks", k: 7, budget: 256, mode: "lexical",
    filter: { term: { source_id: "ch1" } }, tokenizer: "e5-small-v2-q", order: "document", neighbours: false, fetch,
  });
  assert.deepEqual(await retriever.invoke("who kept the light?"), []);
  assert.equal(calls.length, 1);
  assert.equal(calls[0].url, "http://127.0.0.1:9200/books-chunks/_search");
  assert.equal(calls[0].init.method, "POST");
  assert.deepEqual(calls[0].body, {
    size: 7,
    query: { multi_granular: { query_text: "who kept the light?", k: 7, explain_child: true,
      evidence: { chunks: 3, sentences: 3 }, mode: "lexical",
      filter: { term: { source_id: "ch1" } } } },
    search_pipeline: { response_processors: [{ strata_context:
      { budget: 256, tokenizer: "e5-small-v2-q", order: "document", neighbours: false } }] },
  });
});

test("with a named pipeline sends the options in ext", async () => {
  const { fetch, calls } = fakeFetch(200, {});
  await new StrataRetriever({ url: "http://x:9200", index: "books-chunks", pipeline: "rag", fetch }).invoke("q");
  assert.equal(calls[0].url, "http://x:9200/books-chunks/_search?search_pipeline=rag");
  assert.deepEqual(calls[0].body.ext, { strata_context: { budget: 512 } });
  assert.equal(calls[0].body.search_pipeline, undefined);
});

test("returns one Document per passage, in order, with the citation as metadata", async () => {
  const { fetch } = fakeFetch(200, { ext: { strata_context: { tokens: 9, passages: [
    { index: "books-chunks", source_index: "books", source_id: "ch3", start: 90, end: 411, tokens: 4,
      hits: ["ch3:0", "ch3:1"], text: "b" },
    { index: "books-chunks", source_index: "books", source_id: "ch1", start: 0, end: 12, tokens: 5,
      hits: ["ch1:0"], text: "a", truncated: true },
  ] } } });
  const docs = await new StrataRetriever({ url: "http://x", index: "books-chunks", fetch }).invoke("q");
  assert.ok(docs[0] instanceof Document);
  assert.deepEqual(docs.map((d) => d.pageContent), ["b", "a"]);
  assert.deepEqual(docs[0].metadata, { index: "books-chunks", source_index: "books", source_id: "ch3", start: 90,
    end: 411, tokens: 4, hits: ["ch3:0", "ch3:1"] });
  assert.equal(docs[1].metadata.truncated, true);
});

test("sends basic auth credentials", async () => {
  const { fetch, calls } = fakeFetch(200, {});
  await new StrataRetriever({ url: "http://x", index: "i", username: "admin", password: "s3cret:x", fetch }).invoke("q");
  assert.equal(calls[0].init.headers.Authorization, "Basic YWRtaW46czNjcmV0Ong=");
});

test("on an error status throws a StrataError with the server's reason", async () => {
  const { fetch } = fakeFetch(400, { error: { type: "illegal_argument_exception",
    reason: "[ext.strata_context] [budget] must be between 1 and 100000, got [0]" }, status: 400 });
  await assert.rejects(new StrataRetriever({ url: "http://x", index: "i", budget: 0, fetch }).invoke("q"), (e) => {
    assert.ok(e instanceof StrataError);
    assert.equal(e.status, 400);
    assert.match(e.message, /illegal_argument_exception: \[ext\.strata_context\] \[budget\] must be between/);
    return true;
  });
});

test("without an index refuses to build", () => {
  assert.throws(() => new StrataRetriever({ url: "http://x" }), /\[index\] is required/);
});

// The retriever against a real cluster (started by bin/strata-test; STRATA_URL, and on a secured cluster STRATA_USER,
// STRATA_PASSWORD, STRATA_CA, from `bin/strata-node env`): documents ingested through a multi_granular_chunking
// pipeline; the oracles are the raw REST search with the same body and the source texts.
import { test, before } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { StrataRetriever, StrataError } from "../src/index.js";
import { fetchTrusting } from "../src/https.js";

const { STRATA_URL, STRATA_USER, STRATA_PASSWORD, STRATA_CA } = process.env;
if (!STRATA_URL) throw new Error('STRATA_URL is not set: run `eval "$(bin/strata-node env --name NAME)"` first');
const SOURCE = "lcjs-notes";
const CHUNKS = "lcjs-notes-chunks";
const QUESTION = "How long did the relief boat take to reach the lighthouse keeper after the storm?";
const testdata = new URL("../../testdata/", import.meta.url);
const DOCS = Object.fromEntries(readdirSync(testdata).filter((f) => f.endsWith(".txt")).sort()
  .map((f) => [f.replace(/\.txt$/, ""), readFileSync(new URL(f, testdata), "utf8")]));

const ca = STRATA_CA ? readFileSync(STRATA_CA) : undefined;
const auth = STRATA_USER ? { username: STRATA_USER, password: STRATA_PASSWORD } : {};
const rawFetch = ca ? fetchTrusting(ca) : fetch;

/** Plain REST with the JSON a user writes: the oracle. */
async function call(method, path, body, contentType = "application/json") {
  const headers = { "Content-Type": contentType };
  if (STRATA_USER) headers.Authorization = "Basic " + Buffer.from(`${STRATA_USER}:${STRATA_PASSWORD}`).toString("base64");
  const r = await rawFetch(STRATA_URL + path, { method, headers, body: typeof body === "string" ? body : JSON.stringify(body) });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : null };
}

async function ok(method, path, body, contentType) {
  const r = await call(method, path, body, contentType);
  assert.ok(r.status >= 200 && r.status < 300, `${method} ${path} -> ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body;
}

const retriever = (options) => new StrataRetriever({ url: STRATA_URL, index: CHUNKS, ca, ...auth, ...options });

/** The search a user would send by hand for the same question, k and budget. */
const rawBody = (k, budget, filter) => ({
  size: k,
  query: { multi_granular: { query_text: QUESTION, k, explain_child: true, evidence: { chunks: 3, sentences: 3 },
    ...(filter ? { filter } : {}) } },
  search_pipeline: { response_processors: [{ strata_context: { budget } }] },
});

const squash = (s) => s.trim().replace(/\s+/g, " ");

function assertQuotesTheSources(docs) {
  for (const d of docs) {
    assert.equal(d.metadata.index, CHUNKS);
    assert.equal(d.metadata.source_index, SOURCE);
    assert.equal(squash(d.pageContent), squash(DOCS[d.metadata.source_id].slice(d.metadata.start, d.metadata.end)));
  }
}

before(async () => {
  await call("DELETE", `/${SOURCE},${CHUNKS}?ignore_unavailable=true`);
  await ok("PUT", `/_ingest/pipeline/${SOURCE}`, { processors: [{ multi_granular_chunking: {
    field: "body", target_index: CHUNKS, strategy: { type: "recursive", max_words: 60 } } }] });
  const bulk = Object.entries(DOCS).flatMap(([id, body]) => [{ index: { _index: SOURCE, _id: id } }, { body }])
    .map((line) => JSON.stringify(line) + "\n").join("");
  const r = await ok("POST", `/_bulk?pipeline=${SOURCE}&refresh=true`, bulk, "application/x-ndjson");
  assert.equal(r.errors, false, JSON.stringify(r));
  await ok("POST", `/${CHUNKS}/_refresh`);
});

test("returns the raw search's passages: same texts, citations and order", async () => {
  const docs = await retriever({ k: 5, budget: 128 }).invoke(QUESTION);
  const raw = await ok("POST", `/${CHUNKS}/_search`, rawBody(5, 128));
  const passages = raw.ext.strata_context.passages;
  assert.ok(passages.length > 0, JSON.stringify(raw));
  assert.deepEqual(docs.map((d) => ({ ...d.metadata, text: d.pageContent })), passages);
  assertQuotesTheSources(docs);
  assert.ok(docs.reduce((n, d) => n + d.metadata.tokens, 0) <= 128);
  // the question is about the lighthouse: its passage comes first
  assert.equal(docs[0].metadata.source_id, "lighthouse");
});

test("with a filter on parent fields keeps to the filtered document", async () => {
  const filter = { term: { source_id: "comet" } };
  const docs = await retriever({ k: 3, budget: 200, filter }).invoke(QUESTION);
  assert.ok(docs.length > 0);
  for (const d of docs) assert.equal(d.metadata.source_id, "comet");
  const raw = await ok("POST", `/${CHUNKS}/_search`, rawBody(3, 200, filter));
  assert.deepEqual(docs.map((d) => d.pageContent), raw.ext.strata_context.passages.map((p) => p.text));
  assertQuotesTheSources(docs);
});

test("through a named pipeline gives the inline pipeline's passages", async () => {
  await ok("PUT", "/_search/pipeline/lcjs-rag", { response_processors: [{ strata_context: { budget: 1000, order: "document" } }] });
  const named = await retriever({ k: 4, budget: 96, pipeline: "lcjs-rag" }).invoke(QUESTION);
  const inline = await retriever({ k: 4, budget: 96 }).invoke(QUESTION);
  // the request's budget overrides the pipeline's; its order (document) stays
  assert.ok(named.reduce((n, d) => n + d.metadata.tokens, 0) <= 96);
  assert.deepEqual(named.map((d) => d.pageContent).sort(), inline.map((d) => d.pageContent).sort());
  assertQuotesTheSources(named);
});

test("with a bad budget raises the server's 400 message", async () => {
  const raw = await call("POST", `/${CHUNKS}/_search`, rawBody(10, 0));
  assert.equal(raw.status, 400);
  const reason = raw.body.error.reason;
  assert.match(reason, /\[budget\]/);
  await assert.rejects(retriever({ budget: 0 }).invoke(QUESTION), (e) => {
    assert.ok(e instanceof StrataError);
    assert.equal(e.status, 400);
    assert.ok(e.message.includes(reason), `${e.message} lacks ${reason}`);
    return true;
  });
});

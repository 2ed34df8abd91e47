import { BaseRetriever } from "@langchain/core/retrievers";
import { Document } from "@langchain/core/documents";
import { fetchTrusting } from "./https.js";

/**
 * @typedef {object} StrataRetrieverInput
 * @property {string} url the cluster, e.g. `https://127.0.0.1:9200`
 * @property {string} index the chunk index (or an alias of it), e.g. `books-chunks`
 * @property {number} [k=10] parents the query returns (multi_granular's `k`, and the search's `size`)
 * @property {number} [budget=512] at most this many tokens in the context (strata_context's `budget`)
 * @property {"hybrid"|"dense"|"lexical"} [mode] default: the index's (hybrid with vectors)
 * @property {object} [filter] a query on parent fields, e.g. `{ term: { "title.keyword": "Emma" } }` (an exact `keyword`; a `term` on a `text` field matches whole tokens only): multi_granular's `filter`
 * @property {string} [tokenizer] the embedded model whose tokenizer counts the budget; default: the chunk index's model
 * @property {"rank"|"document"} [order] `rank` (best hit's passage first, the default) or `document`
 * @property {boolean} [neighbours] whether passages may grow into neighbouring parents (default true)
 * @property {string} [pipeline] a named search pipeline with a strata_context processor instead of an inline one;
 *   the options above then go in `ext.strata_context` and override the pipeline's
 * @property {string} [username] HTTP basic authentication
 * @property {string} [password]
 * @property {string|Buffer} [ca] PEM certificate(s) to trust for HTTPS (instead of Node's CA store)
 * @property {typeof fetch} [fetch] a fetch implementation (default: the global one)
 * @property {string[]} [tags]
 * @property {Record<string, unknown>} [metadata]
 * @property {import("@langchain/core/callbacks/manager").Callbacks} [callbacks]
 * @property {boolean} [verbose]
 */

/**
 * The citation of a passage: where its text is in the source document, and the hits it came from.
 * @typedef {object} StrataCitation
 * @property {string} index the chunk index
 * @property {string} source_index
 * @property {string} source_id
 * @property {number} start offset of the text in the source document's text (inclusive)
 * @property {number} end (exclusive)
 * @property {number} tokens the passage's token count
 * @property {string[]} hits the `_id`s of the hits whose chunks the passage holds
 * @property {boolean} [truncated] present (true) on a passage cut to fit the budget
 */

/** A search that failed: `status` is the HTTP status, the message carries the server's own reason. */
export class StrataError extends Error {
  /**
   * @param {string} message
   * @param {number} status
   * @param {unknown} [body] the parsed error body, when it was JSON
   */
  constructor(message, status, body) {
    super(message);
    this.name = "StrataError";
    this.status = status;
    this.body = body;
  }
}

const CITATION = ["index", "source_index", "source_id", "start", "end", "tokens", "hits"];

/**
 * A LangChain.js retriever that lets the cluster assemble the context: one search of a Strata chunk index with the
 * `multi_granular` query and the `strata_context` response processor; one Document per passage of
 * `ext.strata_context.passages`, in the response's order (the order meant for the prompt), its pageContent the passage
 * text (the source text at `[start, end)`) and its metadata the citation.
 *
 * @extends {BaseRetriever<StrataCitation>}
 */
export class StrataRetriever extends BaseRetriever {
  static lc_name() {
    return "StrataRetriever";
  }

  lc_namespace = ["strata", "retrievers"];

  /** @param {StrataRetrieverInput} fields */
  constructor(fields) {
    super(fields);
    if (!fields?.url) throw new Error("[strata] [url] is required");
    if (!fields.index) throw new Error("[strata] [index] is required");
    if ((fields.username == null) !== (fields.password == null)) {
      throw new Error("[strata] [username] and [password] go together");
    }
    this.url = fields.url.replace(/\/+$/, "");
    this.index = fields.index;
    this.k = fields.k ?? 10;
    this.budget = fields.budget ?? 512;
    this.mode = fields.mode;
    this.filter = fields.filter;
    this.tokenizer = fields.tokenizer;
    this.order = fields.order;
    this.neighbours = fields.neighbours;
    this.pipeline = fields.pipeline;
    this.authorization = fields.username == null ? undefined
      : "Basic " + Buffer.from(`${fields.username}:${fields.password}`).toString("base64");
    this.fetch = fields.fetch ?? (fields.ca ? fetchTrusting(fields.ca) : globalThis.fetch);
  }

  /**
   * The search body: exactly what a user would send by hand (docs/query.md).
   * @param {string} query
   */
  requestBody(query) {
    // explain_child: the context is seeded with the matched chunks (without it, with whole parents); evidence: each hit's
    // other matched chunks and best sentences, which the processor's default seeds fall back on when a matched chunk does
    // not fit the budget
    const multiGranular = { query_text: query, k: this.k, explain_child: true, evidence: { chunks: 3, sentences: 3 } };
    if (this.mode !== undefined) multiGranular.mode = this.mode;
    if (this.filter !== undefined) multiGranular.filter = this.filter;
    const context = { budget: this.budget };
    if (this.tokenizer !== undefined) context.tokenizer = this.tokenizer;
    if (this.order !== undefined) context.order = this.order;
    if (this.neighbours !== undefined) context.neighbours = this.neighbours;
    const body = { size: this.k, query: { multi_granular: multiGranular } };
    if (this.pipeline === undefined) {
      // an inline pipeline: nothing to create on the cluster first
      body.search_pipeline = { response_processors: [{ strata_context: context }] };
    } else {
      body.ext = { strata_context: context };
    }
    return body;
  }

  /**
   * @param {string} query
   * @returns {Promise<Document<StrataCitation>[]>}
   */
  async _getRelevantDocuments(query) {
    const params = this.pipeline === undefined ? "" : `?search_pipeline=${encodeURIComponent(this.pipeline)}`;
    const target = `${this.url}/${encodeURIComponent(this.index)}/_search${params}`;
    /** @type {Record<string, string>} */
    const headers = { "Content-Type": "application/json", Accept: "application/json" };
    if (this.authorization) headers.Authorization = this.authorization;
    let response;
    try {
      response = await this.fetch(target, { method: "POST", headers, body: JSON.stringify(this.requestBody(query)) });
    } catch (e) {
      throw new StrataError(`[strata] search of ${target} failed: ${e?.cause?.message ?? e?.message ?? e}`, 0);
    }
    const text = await response.text();
    if (!response.ok) {
      const { reason, body } = errorReason(text);
      throw new StrataError(`[strata] search of ${target} failed (${response.status}): ${reason}`, response.status, body);
    }
    const passages = JSON.parse(text)?.ext?.strata_context?.passages ?? [];
    return passages.map((p) => new Document({ pageContent: p.text, metadata: citation(p) }));
  }
}

/** @returns {StrataCitation} */
function citation(passage) {
  const metadata = Object.fromEntries(CITATION.map((f) => [f, passage[f]]));
  if (passage.truncated) metadata.truncated = true;
  return /** @type {StrataCitation} */ (metadata);
}

/** OpenSearch's `error.reason` (what a user reads), else the body as it came (a proxy's page). */
function errorReason(text) {
  try {
    const body = JSON.parse(text);
    const error = body?.error;
    if (typeof error === "string") return { reason: error, body };
    if (typeof error?.reason === "string") {
      return { reason: error.type ? `${error.type}: ${error.reason}` : error.reason, body };
    }
    return { reason: text, body };
  } catch {
    return { reason: text, body: undefined };
  }
}

// Strata Studio. Plain DOM, no framework, no network beyond this cluster's REST API (same origin). Every text from the
// cluster or the user is inserted with textContent / createTextNode, never as HTML: the Content-Security-Policy forbids
// inline script anyway, and a chunk of a book must never be able to run code in the page.
'use strict';

const SVG = 'http://www.w3.org/2000/svg';
const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') e.className = v; else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}

function svgEl(tag, attrs) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  return e;
}

/** A REST call to this cluster; non-2xx → Error whose message is the cluster's reason (it names the field). */
async function api(method, path, body) {
  const response = await fetch(path, {
    method, credentials: 'same-origin',
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  let json = null;
  try { json = await response.json(); } catch (e) { /* not JSON */ }
  if (!response.ok) {
    const err = json && json.error;
    const reason = err ? (typeof err === 'string' ? err : (err.reason || (err.root_cause && err.root_cause[0].reason)))
      : response.statusText;
    const e = new Error(reason || ('HTTP ' + response.status));
    e.status = response.status;
    throw e;
  }
  return json;
}

// ----- status and field errors -----

function setStatus(node, text, loading) {
  node.textContent = text;
  node.classList.toggle('loading', !!loading);
}

function clearErrors(scope) {
  scope.querySelectorAll('.field-error').forEach((n) => n.remove());
  scope.querySelectorAll('.invalid').forEach((n) => n.classList.remove('invalid'));
}

/**
 * Shows a 400's message next to the inputs whose field it names: "[strategy.max_words] must be ..." or "[max_words] ..."
 * marks the input with data-field "strategy.max_words". Returns whether any input was marked.
 */
function showFieldErrors(scope, message) {
  const named = [...message.matchAll(/\[([A-Za-z_.]+)\]/g)].map((m) => m[1]);
  let marked = false;
  for (const input of scope.querySelectorAll('[data-field]')) {
    const field = input.dataset.field;
    const last = field.split('.').pop();
    if (named.some((n) => n === field || n === last || n.endsWith('.' + last))) {
      input.classList.add('invalid');
      input.closest('label').append(el('span', { class: 'field-error' }, message));
      marked = true;
      break; // the most specific input only
    }
  }
  return marked;
}

// ----- configurations -----

function makeConfig(container, defaults) {
  container.append($('config-template').content.cloneNode(true));
  if (defaults) {
    container.querySelector('.f-strategy').value = defaults.type || 'recursive';
    container.querySelector('.f-theta').value = defaults.theta || 300;
  }
}

function readConfig(container) {
  const strategy = { type: container.querySelector('.f-strategy').value };
  const thetaInput = container.querySelector('.f-theta');
  const theta = thetaInput.value.trim();
  const unit = container.querySelector('.f-unit').value; // max_words or max_tokens
  thetaInput.dataset.field = 'strategy.' + unit; // a 400 naming the field marks this input
  if (theta !== '') strategy[unit] = Number(theta);
  const extra = container.querySelector('.f-extra').value.trim();
  if (extra !== '') {
    let parsed;
    try { parsed = JSON.parse(extra); } catch (e) { throw new Error('[strategy] more options must be a JSON object: ' + e.message); }
    Object.assign(strategy, parsed);
  }
  const body = { strategy };
  const format = container.querySelector('.f-format').value;
  if (format !== 'text') body.format = format;
  const gran = container.querySelector('.f-gran').value.trim();
  body.granularities = gran === '' ? [] : gran.split(',').map((g) => Number(g.trim()));
  const model = container.querySelector('.f-model').value.trim();
  if (model !== '') body.model = model;
  const children = container.querySelector('.f-children').value;
  if (children !== 'separate') body.children = { embedding: children };
  return body;
}

async function chunk(text, config) {
  return api('POST', '/_plugins/_strata/_chunk', Object.assign({ text }, config));
}

// ----- rendering a chunked text -----

/**
 * The text with parents as coloured bands and child boundaries as marks. Each stretch between two boundaries is a span
 * whose tooltip names the chunks holding it (level, ordinal, words, offsets) and which carries its offsets, so the
 * evidence plot can scroll to it. {@code marked}: parent starts to flag (the Compare view's differences).
 */
function renderChunks(view, text, result, marked) {
  view.replaceChildren();
  let at = 0;
  result.parents.forEach((p, i) => {
    if (p.start > at) view.append(document.createTextNode(text.slice(at, p.start)));
    const band = el('span', { class: 'parent p' + (i % 5), 'data-ordinal': String(p.ordinal) });
    band.dataset.start = p.start;
    band.dataset.end = p.end;
    const cuts = new Map(); // offset → level of the widest chunk starting there
    const children = p.children.filter((c) => c.level > 0);
    for (const c of children) {
      if (c.start > p.start && (!cuts.has(c.start) || cuts.get(c.start) > c.level)) cuts.set(c.start, c.level);
    }
    const points = [p.start, ...[...cuts.keys()].sort((a, b) => a - b), p.end];
    const best = bestChunk(p); // with a question: the chunk that scores this parent
    const startCut = el('span', { class: 'cut l0' + (marked && marked.has(p.start) ? ' diff' : '') });
    startCut.title = 'parent ' + p.ordinal + ': ' + size(p) + ', [' + p.start + ', ' + p.end + ')';
    band.append(startCut);
    for (let k = 0; k + 1 < points.length; k++) {
      const from = points[k];
      const to = points[k + 1];
      if (k > 0) {
        const cut = el('span', { class: 'cut l' + cuts.get(from) });
        band.append(cut);
      }
      const holders = [['parent ' + p.ordinal + ' (level 0): ' + size(p) + ', [' + p.start + ', ' + p.end + ')']];
      for (const c of children) {
        if (c.start <= from && c.end >= to) {
          holders.push(['level ' + c.level + ' child ' + c.ordinal + ': ' + size(c) + ', [' + c.start + ', ' + c.end + ')']);
        }
      }
      // stretches start at chunk starts: the best chunk holds those starting inside it
      const seg = el('span', { class: 'seg' + (best && best.start <= from && from < best.end ? ' best' : '') }, text.slice(from, to));
      seg.dataset.start = from;
      seg.dataset.end = to;
      seg.title = holders.join('\n');
      band.append(seg);
    }
    view.append(band);
    at = p.end;
  });
  if (at < text.length) view.append(document.createTextNode(text.slice(at)));
}

/** The mode a side's answer is scored in (its one mode), or null without a question. */
function scoredMode(result) {
  const e = result.embedding;
  return e && e.best ? e.modes[0] : null;
}

/** The chunk that scores parent {@code p} under the answer's mode ({@code p.best}), or null without a question. */
function bestChunk(p) {
  if (!p.best) return null;
  const b = Object.values(p.best)[0];
  return b.level === 0 ? p : p.children.find((c) => c.level === b.level && c.ordinal === b.ordinal) || null;
}

/** Each parent's chunks (the parent, then its children) as [level, start, end] keys: whether two answers cut the same chunks. */
function chunkKeys(result) {
  return JSON.stringify(result.parents.map((p) => [[0, p.start, p.end], ...p.children.map((c) => [c.level, c.start, c.end])]));
}

/**
 * The Compare view's score table: one row per chunk with its score under A's and B's children mode; each side's best chunk
 * of a parent marked, and the parents whose best chunk differs between the sides outlined. Returns how many differ.
 */
function renderScores(table, a, b, labelA, labelB) {
  table.replaceChildren(el('tr', {}, el('th', {}, 'parent'), el('th', {}, 'chunk'), el('th', {}, 'words'), el('th', {}, 'text'),
    el('th', {}, labelA), el('th', {}, labelB)));
  let differs = 0;
  a.parents.forEach((pa, i) => {
    const pb = b.parents[i];
    const chunksA = [pa, ...pa.children];
    const chunksB = [pb, ...pb.children];
    const bestA = bestChunk(pa);
    const bestB = bestChunk(pb);
    const ia = chunksA.indexOf(bestA);
    const ib = chunksB.indexOf(bestB);
    if (ia !== ib) differs++;
    chunksA.forEach((c, k) => {
      const level = k === 0 ? 0 : c.level;
      const name = k === 0 ? 'parent' : 'level ' + level + ' #' + c.ordinal;
      const snippet = c.text.length > 80 ? c.text.slice(0, 80) + '…' : c.text;
      const row = el('tr', { class: 'chunk' + (ia !== ib ? ' best-differs' : ''), 'data-parent': String(i), 'data-chunk': String(k) },
        el('td', {}, String(pa.ordinal)), el('td', {}, name), el('td', {}, String(c.words)), el('td', {}, snippet),
        el('td', { class: 'score score-a' + (k === ia ? ' best' : '') }, Object.values(c.scores)[0].toFixed(4)),
        el('td', { class: 'score score-b' + (k === ib ? ' best' : '') }, Object.values(chunksB[k].scores)[0].toFixed(4)));
      table.append(row);
    });
  });
  table.hidden = false;
  return differs;
}

/**
 * The heading tree of a structured document (format markdown or html) beside the bands: one entry per section path at
 * the first parent in it, indented by depth, with the sub-sections merged into a parent under it; a click scrolls to
 * that parent. Hidden for plain text, whose chunks have no section.
 */
function renderOutline(nav, result, view) {
  nav.replaceChildren();
  let previous = null;
  for (const p of result.parents) {
    if (!Array.isArray(p.section)) continue;
    const key = JSON.stringify(p.section);
    if (key !== previous && p.section.length > 0) {
      const entry = el('a', { class: 'heading', 'data-start': String(p.start), 'data-depth': String(p.section.length) },
        p.section[p.section.length - 1]);
      entry.style.paddingLeft = (p.section.length - 1) * 12 + 'px';
      entry.title = p.section.join(' › ');
      entry.addEventListener('click', () => scrollToOffset(view, p.start));
      nav.append(entry);
    }
    previous = key;
    for (const merged of p.merged_sections || []) {
      const entry = el('a', { class: 'heading merged', 'data-start': String(p.start), 'data-depth': String(p.section.length + 1) },
        merged + ' (merged)');
      entry.style.paddingLeft = p.section.length * 12 + 'px';
      entry.addEventListener('click', () => scrollToOffset(view, p.start));
      nav.append(entry);
    }
  }
  nav.hidden = nav.childElementCount === 0;
}

function countsPerLevel(result) {
  const counts = {};
  for (const p of result.parents) {
    counts[0] = (counts[0] || 0) + 1;
    for (const c of p.children) if (c.level > 0) counts[c.level] = (counts[c.level] || 0) + 1;
  }
  return counts;
}

function renderStats(node, result) {
  const counts = countsPerLevel(result);
  const words = result.parents.map((p) => p.words);
  const mean = words.reduce((a, b) => a + b, 0) / Math.max(1, words.length);
  const theta = result.max_tokens !== undefined ? result.max_tokens + ' tokens' : result.max_words + ' words';
  node.replaceChildren(el('span', { id: 'parent-count' }, String(result.parents.length)), ' parents (',
    result.strategy + ', θ ' + theta + ', mean ' + mean.toFixed(1) + ' words, ' + result.took_ms + ' ms); per level: ',
    Object.entries(counts).map(([l, n]) => 'level ' + l + ': ' + n).join(', '));
  const t = result.tokens;
  if (t) {
    // tokens as the model is fed each chunk (prefix and special tokens included) against its limit
    // the largest chunk the model embeds; a parent above the limit kept whole (embedded: false) has no vector: its
    // children score it
    let most = 0;
    let whole = 0;
    for (const p of result.parents) {
      if (p.embedded === false) whole++;
      for (const c of p.embedded === false ? p.children : [p, ...p.children]) most = Math.max(most, c.tokens || 0);
    }
    node.append('; ', el('span', { id: 'token-summary', class: t.truncated > 0 ? 'truncated' : '' },
      t.model + ': largest chunk ' + most + ' of ' + t.limit + ' tokens, ' + t.limit_splits + ' cut to fit, '
        + t.truncated + ' truncated' + (whole > 0 ? ', ' + whole + ' larger parents kept whole (scored by their children)' : '')));
  }
}

/** A chunk's size for tooltips: its words and, when the model's tokenizer is known, its tokens as embedded. */
function size(c) {
  if (c.tokens === undefined) return c.words + ' words';
  return c.words + ' words, ' + c.tokens + ' tokens' + (c.truncated ? ' (truncated by the model)' : '')
    + (c.embedded === false ? ' (above the model\'s window: no vector of its own, scored by its children)' : '');
}

function renderHistogram(svg, result) {
  svg.replaceChildren();
  const words = result.parents.map((p) => p.words);
  if (words.length === 0) return;
  const w = Number(svg.getAttribute('width'));
  const h = Number(svg.getAttribute('height'));
  const max = Math.max(...words);
  const bins = 12;
  const counts = new Array(bins).fill(0);
  for (const x of words) counts[Math.min(bins - 1, Math.floor((x / (max + 1)) * bins))]++;
  const top = Math.max(...counts);
  const bw = (w - 20) / bins;
  counts.forEach((n, i) => {
    const bh = top === 0 ? 0 : ((h - 30) * n) / top;
    const r = svgEl('rect', { class: 'bar', x: 10 + i * bw, y: h - 18 - bh, width: bw - 2, height: bh });
    const t = svgEl('title');
    t.textContent = n + ' parents of ' + Math.round((i * (max + 1)) / bins) + '–' + Math.round(((i + 1) * (max + 1)) / bins) + ' words';
    r.append(t);
    svg.append(r);
  });
  const label = svgEl('text', { x: 10, y: h - 4 });
  label.textContent = 'parent length (words), 0–' + max;
  svg.append(label);
}

/** Each evidence signal as a line over the text's offsets, with its threshold; a click scrolls to that sentence. */
function renderEvidence(svg, text, result, view) {
  svg.replaceChildren();
  const evidence = (result.evidence || []).filter((e) => e.values.length > 0);
  svg.hidden = evidence.length === 0;
  if (evidence.length === 0) return;
  const w = Number(svg.getAttribute('width'));
  const h = Number(svg.getAttribute('height'));
  for (const e of evidence) {
    const values = e.values.filter((v) => Number.isFinite(v));
    let lo = Math.min(...values);
    let hi = Math.max(...values);
    if (e.threshold !== undefined) { lo = Math.min(lo, e.threshold); hi = Math.max(hi, e.threshold); }
    if (hi === lo) hi = lo + 1;
    const x = (pos) => 10 + ((w - 20) * pos) / Math.max(1, text.length);
    const y = (v) => h - 14 - ((h - 28) * (v - lo)) / (hi - lo);
    const pts = e.positions.map((pos, i) => x(pos) + ',' + y(e.values[i])).join(' ');
    svg.append(svgEl('polyline', { class: 'line', points: pts }));
    if (e.threshold !== undefined) {
      svg.append(svgEl('line', { class: 'threshold', x1: 10, x2: w - 10, y1: y(e.threshold), y2: y(e.threshold) }));
    }
    e.positions.forEach((pos, i) => {
      const c = svgEl('circle', { class: 'pt', cx: x(pos), cy: y(e.values[i]), r: 3 });
      c.dataset.pos = pos;
      const t = svgEl('title');
      t.textContent = e.signal + ' ' + Number(e.values[i]).toFixed(4) + ' at offset ' + pos;
      c.append(t);
      c.addEventListener('click', () => scrollToOffset(view, pos));
      svg.append(c);
    });
    const label = svgEl('text', { x: 12, y: 12 });
    label.textContent = e.signal + (e.threshold !== undefined ? ' (threshold ' + Number(e.threshold).toFixed(4) + ')' : '');
    svg.append(label);
  }
}

function scrollToOffset(view, pos) {
  const segs = [...view.querySelectorAll('.seg')];
  const seg = segs.find((s) => Number(s.dataset.start) <= pos && pos < Number(s.dataset.end)) || segs[segs.length - 1];
  if (!seg) return;
  view.querySelectorAll('.flash').forEach((n) => n.classList.remove('flash'));
  seg.classList.add('flash');
  seg.scrollIntoView({ block: 'center' });
}

// ----- views -----

async function runChunk() {
  const scope = $('view-chunk');
  clearErrors(scope);
  const status = $('chunk-status');
  const text = $('chunk-text').value;
  let config;
  try { config = readConfig($('cfg-a')); } catch (e) { showFieldErrors(scope, e.message); setStatus(status, e.message); return; }
  setStatus(status, 'chunking…', true);
  try {
    const result = await chunk(text, config);
    // HTML is chunked as its extracted text, which the offsets index: show that text
    const shown = typeof result.document_text === 'string' ? result.document_text : text;
    renderStats($('chunk-stats'), result);
    renderHistogram($('chunk-hist'), result);
    renderChunks($('chunk-view'), shown, result);
    renderOutline($('chunk-outline'), result, $('chunk-view'));
    renderEvidence($('chunk-plot'), shown, result, $('chunk-view'));
    setStatus(status, 'done');
  } catch (e) {
    setStatus(status, 'error: ' + e.message);
    showFieldErrors(scope, e.message);
  }
}

async function loadDocument() {
  const error = $('doc-error');
  error.textContent = '';
  const index = $('doc-index').value.trim();
  const id = $('doc-id').value.trim();
  try {
    const doc = await api('GET', '/' + encodeURIComponent(index) + '/_doc/' + encodeURIComponent(id));
    // no field typed: the one the document's pipeline chunked (its summary), else "text"
    const chunked = doc._source && doc._source.strata && doc._source.strata.field;
    const field = $('doc-field').value.trim() || (typeof chunked === 'string' ? chunked : 'text');
    $('doc-field').value = field;
    const value = field.split('.').reduce((o, k) => (o == null ? o : o[k]), doc._source);
    if (typeof value !== 'string') throw new Error('[' + field + '] is not a text field of that document');
    $('chunk-text').value = value;
  } catch (e) {
    error.textContent = e.message;
  }
}

async function runCompare() {
  const scope = $('view-compare');
  clearErrors(scope);
  const status = $('compare-status');
  const text = $('chunk-text').value;
  let a;
  let b;
  try { a = readConfig($('cfg-b')); b = readConfig($('cfg-c')); } catch (e) { setStatus(status, e.message); return; }
  const question = $('compare-question').value.trim();
  if (question !== '') {
    a.query_text = question;
    b.query_text = question;
  }
  $('compare-scores').hidden = true;
  setStatus(status, 'chunking both…', true);
  const [ra, rb] = await Promise.allSettled([chunk(text, a), chunk(text, b)]);
  for (const [r, cfg] of [[ra, $('cfg-b')], [rb, $('cfg-c')]]) {
    if (r.status === 'rejected') showFieldErrors(cfg, r.reason.message);
  }
  if (ra.status === 'rejected' || rb.status === 'rejected') {
    setStatus(status, 'error: ' + (ra.status === 'rejected' ? 'A: ' + ra.reason.message : 'B: ' + rb.reason.message));
    return;
  }
  const starts = (r) => new Set(r.value.parents.map((p) => p.start).filter((s) => s > 0));
  const sa = starts(ra);
  const sb = starts(rb);
  const onlyA = new Set([...sa].filter((s) => !sb.has(s)));
  const onlyB = new Set([...sb].filter((s) => !sa.has(s)));
  const shown = (r) => (typeof r.value.document_text === 'string' ? r.value.document_text : text);
  renderChunks($('compare-a'), shown(ra), ra.value, onlyA);
  renderChunks($('compare-b'), shown(rb), rb.value, onlyB);
  $('compare-diff').replaceChildren('A: ', el('span', { id: 'compare-count-a' }, String(ra.value.parents.length)),
    ' parents; B: ', el('span', { id: 'compare-count-b' }, String(rb.value.parents.length)), ' parents; boundaries only in A: ',
    el('span', { id: 'compare-only-a' }, String(onlyA.size)), ', only in B: ', el('span', { id: 'compare-only-b' }, String(onlyB.size)),
    ' (marked red)');
  const modeA = scoredMode(ra.value);
  const modeB = scoredMode(rb.value);
  if (modeA && modeB) {
    const diff = $('compare-diff');
    if (chunkKeys(ra.value) === chunkKeys(rb.value)) {
      const differs = renderScores($('compare-scores'), ra.value, rb.value, 'A: ' + modeA, 'B: ' + modeB);
      diff.append('; best chunk (highlighted) differs in ', el('span', { id: 'compare-best-differs' }, String(differs)), ' of '
        + ra.value.parents.length + ' parents (outlined in the table)');
    } else {
      diff.append('; the sides cut different chunks: each highlights its own best chunk per parent');
    }
  }
  setStatus(status, 'done');
}

/** The matched chunk of a hit: fields.strata_best_child (every mode); older nodes answered the lexical mode with an inner hit. */
function bestChild(hit) {
  if (hit.fields && hit.fields.strata_best_child) return hit.fields.strata_best_child[0];
  const inner = hit.inner_hits && hit.inner_hits.strata_best_child;
  if (inner && inner.hits.hits.length > 0) {
    const h = inner.hits.hits[0];
    return Object.assign({ side: 'lexical', score: h._score }, h._source);
  }
  return null;
}

/** The assembled context of strata_context: its token count against the budget, then each passage with its citation. */
function showContext(ctx) {
  const box = $('search-context');
  if (!ctx) return;
  $('search-context-meta').textContent = 'context: ' + ctx.tokens + ' of ' + ctx.budget + ' tokens (' + ctx.tokenizer + '), '
    + ctx.passages.length + ' passages';
  const list = $('search-context-passages');
  list.replaceChildren();
  for (const p of ctx.passages) {
    const cite = p.source_id + ' [' + p.start + ', ' + p.end + ') · ' + p.tokens + ' tokens · hits ' + p.hits.join(', ')
      + (p.truncated ? ' · truncated' : '');
    list.append(el('li', { class: 'passage' }, el('div', { class: 'meta' }, cite), el('div', { class: 'passage-text' }, p.text)));
  }
  box.hidden = false;
}

async function runSearch() {
  const scope = $('view-search');
  clearErrors(scope);
  const status = $('search-status');
  const index = $('search-index').value.trim();
  const k = Number($('search-k').value);
  const mg = { query_text: $('search-question').value, k, explain_child: true };
  const mode = $('search-mode').value;
  if (mode !== '') mg.mode = mode;
  if ($('search-parents-only').checked) mg.levels = [0];
  const body = { size: k, query: { multi_granular: mg }, _source: { excludes: ['embedding', 'children'] } };
  // a context budget: the same search through an inline search pipeline with strata_context (nothing to create first),
  // asking for the evidence its default seeds fall back on, as the framework retrievers do: the context they would get
  const budget = $('search-budget').value.trim();
  if (budget !== '') {
    mg.evidence = { chunks: 3, sentences: 3 };
    body.search_pipeline = { response_processors: [{ strata_context: { budget: Number(budget) } }] };
  }
  setStatus(status, 'searching…', true);
  const list = $('search-results');
  $('search-context').hidden = true;
  try {
    const r = await api('POST', '/' + encodeURIComponent(index) + '/_search', body);
    list.replaceChildren();
    showContext(r.ext && r.ext.strata_context);
    for (const hit of r.hits.hits) {
      const src = hit._source || {};
      const child = bestChild(hit);
      const parentText = src.text || '';
      const textNode = el('div', { class: 'parent-text' });
      if (child && typeof child.start === 'number' && typeof src.start === 'number') {
        // a table piece stores its table's header row before its own text: the source's [start, end) is the rest
        const base = typeof src.end === 'number' ? Math.max(0, parentText.length - (src.end - src.start)) : 0;
        const from = Math.max(0, base + child.start - src.start);
        const to = Math.min(parentText.length, base + child.end - src.start);
        textNode.append(parentText.slice(0, from), el('mark', { class: 'matched' }, parentText.slice(from, to)), parentText.slice(to));
      } else {
        textNode.append(parentText);
      }
      const meta = ['score ' + Number(hit._score).toFixed(4), 'parent ' + src.ordinal + ' of document ' + src.source_id];
      if (child) {
        meta.push('matched: level ' + child.level + ' chunk ' + child.ordinal + (child.side ? ' (' + child.side + ' side)' : ''));
        if (child.dense) meta.push('dense ' + Number(child.dense.score).toFixed(4) + ' (share ' + Number(child.dense.share).toFixed(2) + ')');
        if (child.lexical) meta.push('lexical ' + Number(child.lexical.score).toFixed(4) + ' (share ' + Number(child.lexical.share).toFixed(2) + ')');
        if (child.dense || child.lexical) meta.push('fused ' + Number(child.score).toFixed(4));
      }
      const item = el('li', { class: 'hit', 'data-id': hit._id }, el('div', { class: 'meta' }, meta.join(' · ')));
      // structured documents: where the matched chunk sits in the heading tree (else the parent's section)
      const section = (child && Array.isArray(child.section) && child.section) || (Array.isArray(src.section) && src.section);
      if (section && section.length > 0) item.append(el('div', { class: 'section' }, 'section: ' + section.join(' › ')));
      item.append(textNode);
      list.append(item);
    }
    setStatus(status, r.hits.hits.length + ' parents in ' + r.took + ' ms');
  } catch (e) {
    list.replaceChildren();
    setStatus(status, 'error: ' + e.message);
    showFieldErrors(scope, e.message);
  }
}

/**
 * Defaults from the chunk index the page is pointed at: one of its source documents (source index, id) and the field its
 * pipeline chunks, which the source document's summary records (strata.field). Read as the user; what the user may not
 * read, or typed already, is left as it is.
 */
async function indexDefaults(index) {
  if (index === '') return;
  try {
    const r = await api('POST', '/' + encodeURIComponent(index) + '/_search',
      { size: 1, _source: ['source_index', 'source_id'], query: { match_all: {} } });
    const hit = r.hits.hits[0];
    if (!hit || !hit._source) return;
    const { source_index: sourceIndex, source_id: sourceId } = hit._source;
    if ($('doc-index').value.trim() === '') $('doc-index').value = sourceIndex;
    if ($('doc-id').value.trim() === '') $('doc-id').value = sourceId;
    const doc = await api('GET', '/' + encodeURIComponent(sourceIndex) + '/_doc/' + encodeURIComponent(sourceId)
      + '?_source_includes=strata.field');
    const field = doc._source && doc._source.strata && doc._source.strata.field;
    if (typeof field === 'string' && $('doc-field').value.trim() === '') $('doc-field').value = field;
  } catch (e) { /* no defaults: the inputs keep their placeholders */ }
}

// ----- Compare view, questions mode: two chunk indices on the user's questions (POST _plugins/_strata/_compare) -----

/** The JSONL of the questions box as _compare's questions; a line that is not a JSON object throws, naming the line. */
function questionLines(text) {
  const out = [];
  const lines = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    let q;
    try { q = JSON.parse(line); } catch (e) { throw new Error('line ' + (i + 1) + ': not JSON: ' + e.message); }
    if (q === null || typeof q !== 'object' || Array.isArray(q)) throw new Error('line ' + (i + 1) + ': not a JSON object');
    out.push(q);
    lines.push(i + 1);
  });
  if (out.length === 0) throw new Error('no questions: one JSON object a line');
  return { questions: out, lines };
}

/**
 * The source index's generations (GET _plugins/_strata/generations): each chunk index with its generation, whether it
 * serves, its state, its config identity and counts, offered in both index inputs; a rebuild running on the answering node shows
 * its progress (click again to refresh).
 */
async function listChunkIndices() {
  const source = $('cq-source').value.trim();
  const status = $('cq-status');
  if (source === '') { setStatus(status, 'error: name a source index'); return; }
  try {
    const r = await api('GET', '/_plugins/_strata/generations?index=' + encodeURIComponent(source));
    const generations = r.generations || [];
    $('cq-indices').replaceChildren(...generations.map((g) => el('option', { value: g.index })));
    renderGenerations(generations, r.rebuild);
    setStatus(status, generations.length + ' chunk indices of ' + source);
  } catch (e) {
    setStatus(status, 'error: ' + e.message + ' (type the chunk indices' + "'" + ' names)');
  }
}

function renderGenerations(generations, rebuild) {
  const table = $('cq-generations');
  const head = el('tr', {}, ...['index', 'generation', 'serving', 'state', 'config', 'documents', 'parents'].map((h) => el('th', {}, h)));
  // state: complete, or interrupted (a rebuild that no task runs any more: re-issue it to resume)
  const rows = generations.map((g) => el('tr', { class: 'g-row', 'data-index': g.index },
    el('td', {}, g.index), el('td', {}, String(g.generation ?? '')), el('td', {}, g.serving ? 'yes' : 'no'), el('td', {}, g.state || ''),
    el('td', {}, g.config || ''), el('td', {}, String(g.documents ?? '')), el('td', {}, String(g.parents ?? ''))));
  table.replaceChildren(head, ...rows);
  table.hidden = generations.length === 0;
  const line = $('cq-rebuild');
  line.hidden = !rebuild;
  if (rebuild) {
    line.textContent = 'rebuilding ' + rebuild.generation_index + ': ' + rebuild.phase + ', ' + rebuild.done + ' / '
      + rebuild.total + ' documents, ' + rebuild.parents_written + ' parents written, '
      + Number(rebuild.documents_per_second || 0).toFixed(1) + ' documents/s (task ' + rebuild.task + ')';
  }
}

/** Both sides' scores and B − A with its interval: one row per metric. */
function renderQuestionScores(table, r) {
  const cell = (v) => el('td', { class: 'score' }, Number(v).toFixed(1));
  const signed = (v) => (Math.abs(v) < 0.05 ? '0.0' : (v > 0 ? '+' : '−') + Math.abs(v).toFixed(1));
  const rows = [el('tr', {}, el('th', {}, ''), el('th', {}, 'A: ' + r.a.index), el('th', {}, 'B: ' + r.b.index),
    el('th', {}, 'B − A [95% CI]'))];
  for (const [key, name] of [['dcg@1', 'DCG@1'], ['dcg@k', 'DCG@' + r.k], ['recall@k', 'Recall@' + r.k]]) {
    const d = r.difference[key];
    const delta = el('td', { class: 'score', 'data-metric': key },
      signed(d.mean) + ' [' + signed(d.low) + ', ' + signed(d.high) + ']');
    if (d.excludes_zero) delta.classList.add('best');
    rows.push(el('tr', { 'data-metric': key }, el('th', {}, name), cell(r.a[key]), cell(r.b[key]), delta));
  }
  table.replaceChildren(...rows);
  table.hidden = false;
}

/** Per question: both sides' rank of the first relevant parent and which side found it within k. */
function renderQuestionRows(table, r) {
  const rows = [el('tr', {}, el('th', {}, '#'), el('th', {}, 'question'), el('th', {}, 'source_id'), el('th', {}, 'A rank'),
    el('th', {}, 'B rank'), el('th', {}, 'found by'))];
  r.per_question.forEach((q, i) => {
    const ra = q.a.rank;
    const rb = q.b.rank;
    const found = ra > 0 && rb > 0 ? 'both' : ra > 0 ? 'A' : rb > 0 ? 'B' : 'neither';
    rows.push(el('tr', { class: 'q-row', 'data-found': found }, el('td', {}, String(i + 1)), el('td', {}, q.question),
      el('td', {}, q.source_id), el('td', { class: 'score' }, ra > 0 ? String(ra) : '–'),
      el('td', { class: 'score' }, rb > 0 ? String(rb) : '–'), el('td', { class: 'found' }, found)));
  });
  table.replaceChildren(...rows);
  table.hidden = false;
}

async function runCompareQuestions() {
  const scope = $('compare-questions-mode');
  clearErrors(scope);
  const status = $('cq-status');
  $('cq-scores').hidden = true;
  $('cq-questions').hidden = true;
  $('cq-summary').textContent = '';
  let parsed;
  try { parsed = questionLines($('cq-jsonl').value); } catch (e) { setStatus(status, 'error: ' + e.message); return; }
  const body = { a: $('cq-a').value.trim(), b: $('cq-b').value.trim(), questions: parsed.questions,
    k: Number($('cq-k').value || 10) };
  if ($('cq-mode').value) body.query = { mode: $('cq-mode').value };
  setStatus(status, 'searching ' + parsed.questions.length + ' questions on both…', true);
  try {
    const r = await api('POST', '/_plugins/_strata/_compare', body);
    renderQuestionScores($('cq-scores'), r);
    $('cq-summary').textContent = r.questions + ' questions in ' + r.clusters + ' clusters, k ' + r.k + '; A holds the chunks of '
      + r.a.source_index + ', B of ' + r.b.source_index + '; scores in %, intervals from ' + r.resamples + ' resamples (seed '
      + r.seed + ')';
    renderQuestionRows($('cq-questions'), r);
    setStatus(status, 'done');
  } catch (e) {
    // the node names questions[i]: say which line of the box that is
    const message = e.message.replace(/questions\[(\d+)\]/g, (m, i) => m + ' (line ' + parsed.lines[Number(i)] + ')');
    showFieldErrors(scope, message);
    setStatus(status, 'error: ' + message);
  }
}

function setupCompareQuestions() {
  const kind = $('compare-kind');
  kind.addEventListener('change', () => {
    $('compare-questions-mode').hidden = kind.value !== 'questions';
    $('compare-texts-mode').hidden = kind.value === 'questions';
  });
  $('cq-file').addEventListener('change', async () => {
    const file = $('cq-file').files[0];
    if (file) $('cq-jsonl').value = await file.text();
  });
  $('cq-list').addEventListener('click', listChunkIndices);
  $('cq-run').addEventListener('click', runCompareQuestions);
}

function show(view) {
  for (const v of ['chunk', 'compare', 'search']) {
    $('view-' + v).hidden = v !== view;
    $('tab-' + v).classList.toggle('active', v === view);
  }
  if (location.hash !== '#' + view) history.replaceState(null, '', '#' + view);
}

document.addEventListener('DOMContentLoaded', () => {
  makeConfig($('cfg-a'));
  makeConfig($('cfg-b'), { type: 'recursive', theta: 300 });
  makeConfig($('cfg-c'), { type: 'sentence', theta: 300 });
  document.querySelectorAll('.tab').forEach((t) => t.addEventListener('click', () => show(t.dataset.view)));
  $('chunk-run').addEventListener('click', runChunk);
  $('doc-load').addEventListener('click', loadDocument);
  $('compare-run').addEventListener('click', runCompare);
  setupCompareQuestions();
  $('search-run').addEventListener('click', runSearch);
  $('search-index').addEventListener('change', () => indexDefaults($('search-index').value.trim()));
  const pointed = new URLSearchParams(location.search).get('index');
  if (pointed) {
    $('search-index').value = pointed;
    indexDefaults(pointed);
  }
  const initial = location.hash.slice(1);
  show(['chunk', 'compare', 'search'].includes(initial) ? initial : 'chunk');
  document.body.dataset.ready = 'true';
});

// The lockgate dashboard: polls the REST API beside it once a second and draws what it says.
//
// Invariants: every text that comes from a job (names, uids, messages) is set as textContent or
// an attribute, never parsed as HTML; every request goes to the app that served this page
// (../jobs..., wherever it is mounted); polls never overlap, and <body data-polls> counts those
// that drew what the API answered; the rolling history is the page's
// own (the last HISTORY_MS of samples of the selected job while it runs) and starts anew with
// another job.
"use strict";

const POLL_MS = 1000;
const HISTORY_MS = 5 * 60 * 1000;
const MIN_SPAN_MS = 60 * 1000;
const API_ROOT = new URL("../", document.baseURI);
const SVG_NS = "http://www.w3.org/2000/svg";
const TERMINAL = new Set(["FINISHED", "FAILED", "CANCELED"]);
const SERIES_COLOURS = ["#1f77b4", "#9467bd", "#17becf", "#8c564b", "#e377c2", "#bcbd22", "#7f7f7f"];
const TIME_LAYERS = [
  ["busy", "busy", "#ef6c00"],
  ["backpressured", "backpressured", "#c62828"],
  ["idle", "idle", "#90caf9"],
];
const STORED = { token: "lockgate.token", folder: "lockgate.savepointFolder" };
const BOX = { width: 300, header: 44, row: 20, pad: 10, gapX: 130, gapY: 28, margin: 16 };
const CHART = { width: 560, height: 150, left: 58, right: 10, top: 10, bottom: 22 };

const view = { key: null, name: null, status: null, plan: null, boxes: new Map(), history: [] };
const poller = { timer: null, inFlight: false, again: false };

// ---- small DOM helpers ------------------------------------------------------------------

function $(id) {
  return document.getElementById(id);
}

function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  setAttributes(node, attributes);
  node.append(...children.filter((child) => child !== null));
  return node;
}

function svg(tag, attributes = {}, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  setAttributes(node, attributes);
  node.append(...children.filter((child) => child !== null));
  return node;
}

function setAttributes(node, attributes) {
  for (const [name, value] of Object.entries(attributes)) {
    if (value !== null && value !== undefined) node.setAttribute(name, String(value));
  }
}

function svgText(x, y, text, attributes = {}) {
  return svg("text", { x, y, ...attributes }, text);
}

function clip(text, length) {
  return text.length <= length ? text : `${text.slice(0, length - 1)}…`;
}

// ---- formats ------------------------------------------------------------------------------

function orDash(value, format) {
  return value === null || value === undefined ? "—" : format(value);
}

function milliseconds(ms) {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(ms < 10000 ? 2 : 1)} s`;
}

function bytes(size) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let value = Math.round(size);
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`;
}

function clockTime(ms) {
  return new Date(ms).toLocaleTimeString();
}

function number(value) {
  if (Math.abs(value) >= 1e6) return `${(value / 1e6).toFixed(1)} M`;
  if (Math.abs(value) >= 1e4) return `${(value / 1e3).toFixed(1)} k`;
  return Number.isInteger(value) ? String(value) : value.toFixed(1);
}

function percent(ratio) {
  return `${Math.round(ratio * 100)}%`;
}

function watermark(value) {
  // event-time milliseconds as the job's timestamps have them; epoch-like ones also as a date
  const plain = String(value);
  return value > 1e11 && value < 1e14 ? `${plain} (${new Date(value).toISOString()})` : plain;
}

// ---- the REST API -------------------------------------------------------------------------

class ApiError extends Error {}

function jobPath(name, suffix = "") {
  return `jobs/${encodeURIComponent(name)}${suffix}`;
}

async function answerOf(response) {
  const body = await response.json().catch(() => ({ error: response.statusText, type: "" }));
  if (!response.ok) {
    const type = body.type ? ` ${body.type}` : "";
    throw new ApiError(`${response.status}${type}: ${body.error}`);
  }
  return body;
}

async function getJson(path) {
  return answerOf(await fetch(new URL(path, API_ROOT), { cache: "no-store" }));
}

async function postJson(path, body) {
  const headers = { "Content-Type": "application/json" };
  const token = sessionStorage.getItem(STORED.token);
  if (token) headers.Authorization = `Bearer ${token}`;
  const request = { method: "POST", headers, body: JSON.stringify(body) };
  return answerOf(await fetch(new URL(path, API_ROOT), request));
}

// ---- polling ------------------------------------------------------------------------------

function pollSoon() {
  if (poller.inFlight) {
    poller.again = true;
    return;
  }
  clearTimeout(poller.timer);
  poller.timer = setTimeout(poll, 0);
}

async function poll() {
  poller.inFlight = true;
  try {
    await refresh();
    document.body.dataset.polls = String(Number(document.body.dataset.polls ?? 0) + 1);
    setConnection("");
  } catch (error) {
    setConnection(`The REST API did not answer: ${error.message}`);
  } finally {
    poller.inFlight = false;
    poller.timer = setTimeout(poll, poller.again ? 0 : POLL_MS);
    poller.again = false;
  }
}

function setConnection(message) {
  $("connection").textContent = message;
  $("connection").hidden = !message;
}

function selectedJob() {
  const hash = decodeURIComponent(location.hash.slice(1));
  return hash.startsWith("job=") ? hash.slice(4) : null;
}

async function refresh() {
  const { jobs } = await getJson("jobs");
  const name = selectedJob();
  renderJobList(jobs, name);
  const overview = jobs.find((job) => job.name === name);
  // the job's view, and so its buttons, show only once it is drawn for this very job
  if (!overview || overview.name !== view.name) $("job").hidden = true;
  if (!overview) return;
  await ensurePlan(overview);
  const [vertices, checkpoints, watermarks, exceptions] = await Promise.all(
    ["/vertices", "/checkpoints", "/watermarks", "/exceptions"].map((s) => getJson(jobPath(name, s))),
  );
  renderOverview(overview);
  renderLevels(vertices);
  renderSubtasks(vertices);
  if (!TERMINAL.has(overview.status)) record(vertices); // an ended job's last minutes stay
  renderCharts();
  renderCheckpoints(checkpoints);
  renderWatermarks(watermarks);
  renderExceptions(exceptions);
  $("job").hidden = false;
}

async function ensurePlan(overview) {
  const key = `${overview.name}@${overview.start_time}`;
  if (view.key === key) return;
  const { plan } = await getJson(jobPath(overview.name));
  if (view.name !== overview.name) showResult("", "");
  Object.assign(view, { key, name: overview.name, plan, history: [] });
  drawGraph(plan);
}

// ---- the job list and overview ------------------------------------------------------------

function statusBadge(status) {
  return el("span", { class: `status ${status}` }, status);
}

function renderJobList(jobs, selected) {
  const rows = jobs.map((job) =>
    el(
      "tr",
      { "data-job": job.name, class: job.name === selected ? "selected" : null },
      el("td", {}, el("a", { href: `#job=${encodeURIComponent(job.name)}` }, job.name)),
      el("td", {}, statusBadge(job.status)),
      el("td", {}, String(job.attempt)),
      el("td", {}, orDash(job.start_time, clockTime)),
      el("td", {}, orDash(job.duration, milliseconds)),
      el("td", {}, String(job.failures)),
    ),
  );
  $("job-list").tBodies[0].replaceChildren(...rows);
  $("no-jobs").hidden = jobs.length > 0;
}

function renderOverview(overview) {
  view.status = overview.status;
  $("job-name").textContent = overview.name;
  $("job-status").replaceChildren(statusBadge(overview.status));
  $("job-attempt").textContent = `attempt ${overview.attempt}`;
  enableActions(!TERMINAL.has(overview.status));
}

// ---- the graph ----------------------------------------------------------------------------

function depths(plan) {
  const depth = new Map(plan.chains.map((chain) => [chain.id, 0]));
  for (let pass = 0; pass < plan.chains.length; pass += 1) {
    for (const edge of plan.edges) {
      depth.set(edge.target, Math.max(depth.get(edge.target), depth.get(edge.source) + 1));
    }
  }
  return depth;
}

function boxHeight(chain) {
  return BOX.header + BOX.row * chain.operators.length + BOX.pad;
}

function layout(plan) {
  const depth = depths(plan);
  const columns = [];
  for (const chain of plan.chains) (columns[depth.get(chain.id)] ??= []).push(chain);
  const heightOf = (column) => column.reduce((sum, c) => sum + boxHeight(c) + BOX.gapY, -BOX.gapY);
  const tallest = Math.max(...columns.map(heightOf));
  const places = new Map();
  columns.forEach((column, index) => {
    let y = BOX.margin + (tallest - heightOf(column)) / 2;
    for (const chain of column) {
      places.set(chain.id, { x: BOX.margin + index * (BOX.width + BOX.gapX), y, h: boxHeight(chain) });
      y += boxHeight(chain) + BOX.gapY;
    }
  });
  const width = 2 * BOX.margin + columns.length * BOX.width + (columns.length - 1) * BOX.gapX;
  return { places, width, height: tallest + 2 * BOX.margin };
}

function drawGraph(plan) {
  const { places, width, height } = layout(plan);
  const graph = $("graph");
  setAttributes(graph, { viewBox: `0 0 ${width} ${height}`, width, height });
  const marker = svg("marker", {
    id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 8, markerHeight: 8, orient: "auto",
  }, svg("path", { d: "M0,0 L10,5 L0,10 z" }));
  const byId = new Map(plan.chains.map((chain) => [chain.id, chain]));
  const edges = plan.edges.map((edge, index) => drawEdge(edge, index, places, byId));
  view.boxes = new Map();
  const boxes = plan.chains.map((chain, index) => drawChain(chain, index, places.get(chain.id)));
  graph.replaceChildren(svg("defs", {}, marker), ...edges, ...boxes);
}

function drawEdge(edge, index, places, byId) {
  const from = places.get(edge.source);
  const to = places.get(edge.target);
  const [x1, y1] = [from.x + BOX.width, from.y + from.h / 2];
  const [x2, y2] = [to.x, to.y + to.h / 2];
  const bend = (x2 - x1) / 2;
  const d = `M${x1},${y1} C${x1 + bend},${y1} ${x2 - bend},${y2} ${x2},${y2}`;
  const parallelism = `${byId.get(edge.source).parallelism}→${byId.get(edge.target).parallelism}`;
  const side = edge.side_output === null ? "" : ` · side output '${edge.side_output}'`;
  const label = `${edge.partitioning} ${parallelism}${side}`;
  const [lx, ly] = [(x1 + x2) / 2, (y1 + y2) / 2 - 6 - (index % 2) * 12];
  return svg(
    "g",
    {
      class: "edge", "data-edge-id": edge.id, "data-source": edge.source, "data-target": edge.target,
      "data-partitioning": edge.partitioning,
    },
    svg("title", {}, label),
    svg("path", { d, "marker-end": "url(#arrow)" }),
    svgText(lx, ly, clip(label, 22), { class: "edge-label", "text-anchor": "middle" }),
  );
}

function drawChain(chain, index, place) {
  const level = svgText(place.x + 12, place.y + 36, "…", { class: "level-text" });
  const title = svg("title", {}, chain.name);
  const rowY = (row) => place.y + BOX.header + 14 + row * BOX.row;
  const operators = chain.operators.map((operator, row) =>
    svgText(place.x + 12, rowY(row), clip(`${operator.uid} · ${operator.kind}`, 28), {
      class: "operator", "data-uid": operator.uid,
    }),
  );
  const counts = new Map(chain.operators.map((operator, row) => [
    operator.uid,
    svgText(place.x + BOX.width - 10, rowY(row), "", {
      class: "operator-records", "data-uid": operator.uid, "text-anchor": "end",
    }),
  ]));
  const box = svg(
    "g",
    { class: "chain", "data-chain-id": chain.id, "data-backpressure": "NONE" },
    title,
    svg("rect", { x: place.x, y: place.y, width: BOX.width, height: place.h, rx: 6 }),
    svg("circle", { cx: place.x + 16, cy: place.y + 14, r: 5, fill: seriesColour(index) }),
    svgText(place.x + 27, place.y + 18, `chain ${chain.id} · parallelism ${chain.parallelism}`, { class: "chain-title" }),
    level,
    svg("line", { x1: place.x, x2: place.x + BOX.width, y1: place.y + BOX.header, y2: place.y + BOX.header }),
    ...operators,
    ...counts.values(),
  );
  view.boxes.set(chain.id, { box, level, title, counts, name: chain.name });
  return box;
}

function renderLevels(vertices) {
  for (const vertex of vertices.vertices) {
    const drawn = view.boxes.get(vertex.id);
    if (!drawn) continue;
    const worst = Math.max(0, ...vertex.subtasks.map((s) => s.backpressure_ratio));
    const level = vertex.backpressure_level ?? "NONE";
    drawn.box.setAttribute("data-backpressure", level);
    drawn.level.textContent = level === "NONE" ? "not running" : `${level} · ${percent(worst)} backpressured`;
    drawn.title.textContent = [drawn.name, ...vertex.subtasks.map(subtaskLine)].join("\n");
    renderOperatorRecords(drawn.counts, vertex.operators);
  }
}

function renderOperatorRecords(counts, operators) {
  // records in → records out of each operator, summed over the chain's subtasks
  for (const operator of operators) {
    const text = counts.get(operator.uid);
    if (!text) continue;
    text.textContent = `${number(operator.records_in)} → ${number(operator.records_out)}`;
    setAttributes(text, { "data-records-in": operator.records_in, "data-records-out": operator.records_out });
  }
}

function subtaskLine(subtask) {
  const shares = `busy ${percent(subtask.busy_ratio)}, backpressured ${percent(subtask.backpressure_ratio)}`;
  return `subtask ${subtask.subtask}: ${shares}, idle ${percent(subtask.idle_ratio)}, input fill ${percent(subtask.input_fill)}`;
}

function seriesColour(index) {
  return SERIES_COLOURS[index % SERIES_COLOURS.length];
}

function levelBadge(level) {
  return el("span", { class: `level ${level}` }, level);
}

function rateOf(value, format) {
  return value === null || value === undefined ? "—" : `${format(value)}/s`;
}

function renderSubtasks(vertices) {
  const rows = vertices.vertices.flatMap((vertex) =>
    vertex.subtasks.map((s) =>
      el(
        "tr",
        { "data-chain-id": vertex.id, "data-subtask": s.subtask, "data-backpressure": s.backpressure_level },
        el("td", {}, vertex.name),
        el("td", {}, String(s.subtask)),
        el("td", { class: "level-cell" }, levelBadge(s.backpressure_level)),
        el("td", { class: "records-in" }, number(s.records_in)),
        el("td", { class: "records-out" }, number(s.records_out)),
        el("td", { class: "rates" }, `${rateOf(s.records_in_per_second, number)} / ${rateOf(s.records_out_per_second, number)}`),
        el("td", { class: "bytes-in", "data-bytes": s.bytes_in }, orDash(s.bytes_in, bytes)),
        el("td", { class: "bytes-out", "data-bytes": s.bytes_out }, orDash(s.bytes_out, bytes)),
        el("td", { class: "byte-rates" }, `${rateOf(s.bytes_in_per_second, bytes)} / ${rateOf(s.bytes_out_per_second, bytes)}`),
        el("td", { class: "time" }, `${percent(s.busy_ratio)} / ${percent(s.backpressure_ratio)} / ${percent(s.idle_ratio)}`),
        el("td", { class: "fill" }, `${percent(s.input_fill)} / ${percent(s.output_fill)}`),
      ),
    ),
  );
  $("subtasks").tBodies[0].replaceChildren(...rows);
}

// ---- the rolling history and its charts ---------------------------------------------------

function mean(values) {
  return values.length ? values.reduce((a, b) => a + b, 0) / values.length : 0;
}

function sample(vertex) {
  const subtasks = vertex.subtasks;
  return {
    rate: subtasks.reduce((sum, s) => sum + s.records_in_per_second, 0),
    inputFill: Math.max(0, ...subtasks.map((s) => s.input_fill)),
    outputFill: Math.max(0, ...subtasks.map((s) => s.output_fill)),
    busy: mean(subtasks.map((s) => s.busy_time_ms_per_second)),
    backpressured: mean(subtasks.map((s) => s.backpressured_time_ms_per_second)),
    idle: mean(subtasks.map((s) => s.idle_time_ms_per_second)),
  };
}

function record(vertices) {
  const history = view.history;
  const last = history[history.length - 1];
  if (last && vertices.timestamp <= last.t) return;
  const chains = new Map(vertices.vertices.map((vertex) => [vertex.id, sample(vertex)]));
  history.push({ t: vertices.timestamp, chains });
  while (history.length && history[0].t < vertices.timestamp - HISTORY_MS) history.shift();
}

function renderCharts() {
  const chains = view.plan.chains;
  const lines = (field) =>
    chains.map((chain, index) => ({ key: `chain-${chain.id}`, label: chain.name, colour: seriesColour(index), field, id: chain.id }));
  const figures = [
    lineChart("throughput", "Throughput: records in per second (a source: records read)", lines("rate"), null, number),
    lineChart("input-fill", "Input channel fill (the fullest subtask)", lines("inputFill"), 1, percent),
    lineChart("output-fill", "Output buffer fill (the fullest subtask)", lines("outputFill"), 1, percent),
    ...chains.map((chain) => timeChart(chain)),
  ];
  $("charts").replaceChildren(...figures);
}

function chartFrame(name, caption, keys, body) {
  const list = el("ul", { class: "keys" }, ...keys.map(([label, colour]) =>
    el("li", {}, el("span", { class: "swatch", style: `background:${colour}` }), label)));
  const frame = svg("svg", { viewBox: `0 0 ${CHART.width} ${CHART.height}`, class: "plot" }, ...body);
  return el("figure", { class: "chart", "data-chart": name }, el("figcaption", {}, caption), frame, list);
}

function timeDomain() {
  const history = view.history;
  const end = history.length ? history[history.length - 1].t : 0;
  const span = Math.min(HISTORY_MS, Math.max(MIN_SPAN_MS, end - (history[0]?.t ?? end)));
  return { start: end - span, end, span };
}

function scales(yMax) {
  const domain = timeDomain();
  const plotW = CHART.width - CHART.left - CHART.right;
  const plotH = CHART.height - CHART.top - CHART.bottom;
  const x = (t) => CHART.left + ((t - domain.start) / domain.span) * plotW;
  const y = (v) => CHART.top + plotH - (Math.min(v, yMax) / yMax) * plotH;
  return { x, y, domain };
}

function axes(yMax, format, domain) {
  const bottom = CHART.height - CHART.bottom;
  const right = CHART.width - CHART.right;
  return [
    svg("line", { class: "axis", x1: CHART.left, x2: right, y1: bottom, y2: bottom }),
    svg("line", { class: "axis", x1: CHART.left, x2: CHART.left, y1: CHART.top, y2: bottom }),
    svg("line", { class: "grid", x1: CHART.left, x2: right, y1: CHART.top, y2: CHART.top }),
    svgText(CHART.left - 6, CHART.top + 4, format(yMax), { class: "tick", "text-anchor": "end" }),
    svgText(CHART.left - 6, bottom, format(0), { class: "tick", "text-anchor": "end" }),
    svgText(CHART.left, bottom + 16, `−${Math.round(domain.span / 1000)} s`, { class: "tick" }),
    svgText(right, bottom + 16, "now", { class: "tick", "text-anchor": "end" }),
  ];
}

function niceMaximum(value) {
  if (value <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  return [1, 2, 5, 10].map((step) => step * power).find((bound) => bound >= value);
}

function lineChart(name, caption, series, fixedMax, format) {
  const values = (s) => view.history.map((h) => [h.t, h.chains.get(s.id)?.[s.field] ?? 0]);
  const highest = Math.max(0, ...series.flatMap((s) => values(s).map(([, v]) => v)));
  const yMax = fixedMax ?? niceMaximum(highest * 1.1);
  const { x, y, domain } = scales(yMax);
  const polylines = series.map((s) => {
    const points = values(s);
    return svg("polyline", {
      class: "series", "data-series": s.key, "data-points": points.length, stroke: s.colour,
      points: points.map(([t, v]) => `${x(t).toFixed(1)},${y(v).toFixed(1)}`).join(" "),
    });
  });
  const keys = series.map((s) => [s.label, s.colour]);
  return chartFrame(name, caption, keys, [...axes(yMax, format, domain), ...polylines]);
}

function timeChart(chain) {
  // busy, backpressured and idle stacked: together one second per second
  const { x, y, domain } = scales(1000);
  let below = view.history.map(() => 0);
  const areas = TIME_LAYERS.map(([field, label, colour]) => {
    const above = view.history.map((h, i) => below[i] + (h.chains.get(chain.id)?.[field] ?? 0));
    const top = view.history.map((h, i) => `${x(h.t).toFixed(1)},${y(above[i]).toFixed(1)}`);
    const bottom = view.history.map((h, i) => `${x(h.t).toFixed(1)},${y(below[i]).toFixed(1)}`).reverse();
    below = above;
    return svg("polygon", { class: "layer", "data-series": field, fill: colour, points: [...top, ...bottom].join(" ") });
  });
  const caption = `Time of '${chain.name}' in ms per second (mean of its subtasks)`;
  const keys = TIME_LAYERS.map(([, label, colour]) => [label, colour]);
  const ms = (v) => `${Math.round(v)} ms`;
  return chartFrame(`time-${chain.id}`, caption, keys, [...axes(1000, ms, domain), ...areas]);
}

// ---- checkpoints, watermarks, exceptions --------------------------------------------------

function renderCheckpoints(document) {
  const { completed, failed, in_progress: inProgress } = document.counts;
  $("checkpoint-counts").textContent = `${completed} completed, ${failed} failed, ${inProgress} in progress`;
  const phase = (name, ms) => el("td", { class: name, "data-ms": ms }, orDash(ms, milliseconds));
  const rows = document.history.map((c) =>
    el(
      "tr",
      { "data-checkpoint-id": c.id, "data-status": c.status },
      el("td", {}, String(c.id)),
      el("td", { class: "status-cell" }, el("span", { class: `status ${c.status}` }, c.status), c.failure_reason ? ` ${c.failure_reason}` : null),
      el("td", {}, orDash(c.trigger_timestamp, clockTime)),
      phase("duration", c.end_to_end_duration),
      el("td", { class: "size", "data-bytes": c.state_size }, orDash(c.state_size, bytes)),
      phase("start-delay", c.start_delay),
      phase("alignment", c.alignment_duration),
      phase("sync", c.sync_duration),
      phase("async", c.async_duration),
      el("td", { class: "unaligned" }, c.unaligned ? "yes" : "no"),
      el("td", { class: "persisted", "data-bytes": c.persisted_in_flight }, orDash(c.persisted_in_flight, bytes)),
      el("td", { class: "acknowledged" }, `${c.num_acknowledged_subtasks}/${c.num_subtasks}`),
      el("td", { class: "failure" }, c.failure_message ?? ""),
    ),
  );
  $("checkpoints").tBodies[0].replaceChildren(...rows);
}

function renderWatermarks(document) {
  const rows = document.vertices.flatMap((vertex) =>
    vertex.subtasks.map((s) =>
      el(
        "tr",
        { "data-chain-id": vertex.id, "data-subtask": s.subtask },
        el("td", {}, vertex.name),
        el("td", {}, String(s.subtask)),
        el("td", { class: "input" }, orDash(s.input_watermark, watermark)),
        el("td", { class: "output" }, orDash(s.output_watermark, watermark)),
      ),
    ),
  );
  $("watermarks").tBodies[0].replaceChildren(...rows);
}

function renderExceptions(document) {
  const items = document.entries.map((entry) => {
    const where = entry.uid === null ? "" : ` in '${entry.uid}' (subtask ${entry.subtask})`;
    const heading = `attempt ${entry.attempt} · ${clockTime(entry.timestamp)} · ${entry.type}${where}`;
    return el(
      "li",
      { "data-attempt": entry.attempt, "data-uid": entry.uid },
      el("p", { class: "heading" }, heading),
      el("p", { class: "message" }, entry.message),
      el("details", {}, el("summary", {}, "stack trace"), el("pre", {}, entry.stacktrace)),
    );
  });
  $("exceptions").replaceChildren(...items);
  $("no-exceptions").hidden = items.length > 0;
}

// ---- savepoint, stop, cancel --------------------------------------------------------------

const ACTION_BUTTONS = ["savepoint-button", "stop-button", "cancel-button"];
let acting = false;

function enableActions(running) {
  for (const id of ACTION_BUTTONS) $(id).disabled = acting || !running;
}

function savepointFolder() {
  const folder = $("savepoint-folder").value.trim();
  if (!folder) {
    throw new Error("enter the savepoint folder first: a file:// or s3:// URL, or an absolute path");
  }
  return folder;
}

function showResult(message, kind, savepoint = null) {
  const output = $("action-result");
  output.textContent = message;
  output.className = kind;
  if (savepoint === null) delete output.dataset.savepoint;
  else output.dataset.savepoint = savepoint;
}

async function act(run) {
  acting = true;
  enableActions(false);
  showResult("working…", "pending");
  try {
    const outcome = await run(view.name);
    if (outcome === null) showResult("", "");
    else showResult(outcome.message, "ok", outcome.savepoint ?? null);
  } catch (error) {
    showResult(error.message, "error");
  } finally {
    acting = false;
    enableActions(!TERMINAL.has(view.status));
    pollSoon();
  }
}

async function triggerSavepoint(name) {
  const { savepoint } = await postJson(jobPath(name, "/savepoints"), { path: savepointFolder() });
  return { message: `savepoint written: ${savepoint}`, savepoint };
}

async function stopWithSavepoint(name) {
  const folder = savepointFolder();
  const drain = $("drain").checked;
  if (!confirm(`Stop job '${name}' with a savepoint under ${folder}${drain ? ", draining its input" : ""}?`)) return null;
  const { savepoint, status } = await postJson(jobPath(name, "/stop"), { savepoint: folder, drain });
  return { message: `stopped with a savepoint (${status}): ${savepoint}`, savepoint };
}

async function cancelJob(name) {
  if (!confirm(`Cancel job '${name}'? It ends without a savepoint.`)) return null;
  const { status } = await postJson(jobPath(name, "/cancel"), {});
  return { message: `cancel requested (${status})` };
}

// ---- start --------------------------------------------------------------------------------

function keep(input, key) {
  input.value = sessionStorage.getItem(key) ?? "";
  input.addEventListener("input", () => sessionStorage.setItem(key, input.value));
}

function start() {
  keep($("token"), STORED.token);
  keep($("savepoint-folder"), STORED.folder);
  $("settings").addEventListener("submit", (event) => event.preventDefault());
  $("savepoint-button").addEventListener("click", () => act(triggerSavepoint));
  $("stop-button").addEventListener("click", () => act(stopWithSavepoint));
  $("cancel-button").addEventListener("click", () => act(cancelJob));
  window.addEventListener("hashchange", pollSoon);
  poll();
}

start();

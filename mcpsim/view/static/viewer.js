// mcpsim viewer: one page, hash routes, server-side filtering and paging. No dependencies.
// Every text from a run is put in the page with textContent, never parsed as HTML.
"use strict";

const TOKEN_KEY = "mcpsim-token";
const state = { info: null, timer: null, renderId: 0 };

// -- helpers ------------------------------------------------------------------------------------

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

const SVG = "http://www.w3.org/2000/svg";
function svg(tag, attrs, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  for (const c of children.flat()) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

function fmt(v, digits = 3) {
  if (v === null || v === undefined) return "–";
  if (typeof v === "number") return Number.isInteger(v) ? String(v) : v.toFixed(digits);
  return String(v);
}
function pct(v) { return v === null || v === undefined ? "–" : (100 * v).toFixed(1) + "%"; }
function show(v) { return v === null || v === undefined ? "null" : typeof v === "string" ? v : JSON.stringify(v); }
function pretty(v) { return typeof v === "string" ? v : JSON.stringify(v, null, 2); }
function keyText(key) {
  try { const k = JSON.parse(key); return Array.isArray(k) ? k.join(", ") : String(k); } catch (e) { return key; }
}

function parseHash() {
  const raw = location.hash.replace(/^#/, "");
  const [path, query] = raw.split("?");
  return { parts: path.split("/").filter(Boolean).map(decodeURIComponent), params: new URLSearchParams(query || "") };
}
function link(parts, params) {
  const q = params && [...params].length ? "?" + params.toString() : "";
  return "#/" + parts.map(encodeURIComponent).join("/") + q;
}

// A function that changes some of a page's query parameters (any change but paging goes back to
// the first page) and goes there.
function navigate(parts, params) {
  return (changes) => {
    const next = new URLSearchParams(params);
    for (const [k, v] of Object.entries(changes)) { if (v === "" || v === null) next.delete(k); else next.set(k, v); }
    if (!("offset" in changes)) next.delete("offset");
    location.hash = link(parts, next);
  };
}

async function api(path) {
  const headers = {};
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) headers.Authorization = "Bearer " + token;
  const response = await fetch(path, { headers });
  let data = null;
  try { data = await response.json(); } catch (e) { data = null; }
  if (response.status === 401) throw { unauthorized: true };
  if (!response.ok) throw { message: (data && data.error) || response.status + " " + response.statusText };
  return data;
}

function setMain(...children) {
  const main = document.getElementById("main");
  main.replaceChildren(...children.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false));
  return main;
}
function crumbs(...items) {
  document.getElementById("crumbs").replaceChildren(
    ...items.map(([text, href]) => (href ? el("a", { href }, text) : el("span", {}, text))));
}
function status(text) { document.getElementById("status").textContent = text || ""; }

function tokenForm() {
  crumbs();
  const input = el("input", { type: "password", placeholder: "control-plane token", "aria-label": "token" });
  return setMain(
    el("h1", {}, "This server needs its control-plane token"),
    el("p", { class: "muted" }, "The live pages are behind the same bearer token as the control plane (mcpsim serve prints it when it generates one). It is kept for this tab only."),
    el("form", { class: "token", onsubmit: (e) => {
      e.preventDefault(); sessionStorage.setItem(TOKEN_KEY, input.value.trim()); route();
    } }, input, el("button", { type: "submit" }, "Open")));
}

function failed(err) {
  if (err && err.unauthorized) { tokenForm(); return; }
  setMain(el("div", { class: "error-box" }, String((err && err.message) || err)));
}

// -- plots (inline SVG) ---------------------------------------------------------------------------

function barChart(bins, { label, width = 360, height = 150 }) {
  const max = Math.max(1, ...bins.map((b) => b.count));
  const pad = { l: 28, r: 6, t: 8, b: 28 };
  const w = (width - pad.l - pad.r) / Math.max(1, bins.length);
  const plot = svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": label });
  const h = height - pad.t - pad.b;
  plot.append(svg("line", { x1: pad.l, y1: pad.t + h, x2: width - pad.r, y2: pad.t + h, stroke: "#999" }));
  plot.append(svg("text", { x: 2, y: pad.t + 8 }, String(max)));
  plot.append(svg("text", { x: 2, y: pad.t + h }, "0"));
  bins.forEach((b, i) => {
    const bh = (b.count / max) * h;
    const x = pad.l + i * w;
    plot.append(svg("rect", { x: x + 1, y: pad.t + h - bh, width: Math.max(1, w - 2), height: bh, fill: "#2456b3",
      "data-count": b.count }, svg("title", {}, `${b.label}: ${b.count}`)));
    if (bins.length <= 12 || i % Math.ceil(bins.length / 10) === 0)
      plot.append(svg("text", { x: x + w / 2, y: height - pad.b + 12, "text-anchor": "middle" }, b.tick));
  });
  plot.append(svg("text", { x: width / 2, y: height - 3, "text-anchor": "middle" }, label));
  return plot;
}

function rateChart(tools) {
  const width = 400, row = 16, left = 150;
  const shown = tools.slice(0, 15);
  const height = Math.max(40, shown.length * row + 24);
  const plot = svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": "error rate per tool" });
  shown.forEach((t, i) => {
    const y = 4 + i * row;
    const w = (width - left - 90) * t.error_rate;
    plot.append(svg("text", { x: left - 4, y: y + 11, "text-anchor": "end" }, t.tool.slice(0, 24)));
    plot.append(svg("rect", { x: left, y: y + 2, width: width - left - 90, height: row - 5, fill: "#eef1f5" }));
    plot.append(svg("rect", { x: left, y: y + 2, width: Math.max(0, w), height: row - 5, fill: "#c62828",
      "data-tool": t.tool }, svg("title", {}, `${t.tool}: ${t.errors} errors, ${t.faults} faults in ${t.calls} calls`)));
    plot.append(svg("text", { x: width - 86, y: y + 11 }, `${pct(t.error_rate)} of ${t.calls}`));
  });
  if (!shown.length) plot.append(svg("text", { x: 10, y: 20 }, "no tool calls"));
  if (tools.length > shown.length) plot.append(svg("text", { x: 10, y: height - 4 }, `and ${tools.length - shown.length} more tools`));
  return plot;
}

// -- pages ----------------------------------------------------------------------------------------

async function route() {
  const id = ++state.renderId;
  if (state.timer) { clearTimeout(state.timer); state.timer = null; }
  status("");
  const { parts, params } = parseHash();
  try {
    if (!state.info) state.info = await api("api/info");
    if (id !== state.renderId) return;
    const live = state.info.mode === "live";
    if (parts[0] === "runs" && parts.length === 2) await runPage(+parts[1], params, id);
    else if (parts[0] === "runs" && parts[2] === "episodes") await episodePage(+parts[1], parts[3], parts[5], id);
    else if (parts[0] === "compare" && parts[3] === "episodes") await sideBySide(+parts[1], +parts[2], parts[4], id);
    else if (parts[0] === "compare") await comparePage(+parts[1], +parts[2], params, id);
    else if (live && parts[0] === "live" && parts[1]) await liveEpisode(parts[1], parts[3], id, null);
    else if (live) await liveList(id);
    else if (state.info.runs.length === 1) location.replace(link(["runs", "0"]));
    else runsHome();
  } catch (err) {
    if (id === state.renderId) { state.info = err && err.unauthorized ? null : state.info; failed(err); }
  }
}

function runsHome() {
  crumbs();
  const runs = state.info.runs;
  const a = el("select", { name: "a" }, runs.map((r, i) => el("option", { value: i }, r.name)));
  const b = el("select", { name: "b" }, runs.map((r, i) => el("option", { value: i, selected: i === 1 }, r.name)));
  setMain(
    el("h1", {}, "Runs"),
    el("table", {}, el("tr", {}, ["run", "episodes", "worlds", "agents", "file"].map((h) => el("th", {}, h))),
      runs.map((r, i) => el("tr", { class: "click", onclick: () => { location.hash = link(["runs", String(i)]); } },
        el("td", {}, el("a", { href: link(["runs", String(i)]) }, r.name)), el("td", { class: "num" }, r.episodes),
        el("td", {}, r.worlds.join(", ")), el("td", {}, r.agents.join(", ")), el("td", { class: "muted" }, r.path)))),
    el("h2", {}, "Compare two runs"),
    el("div", { class: "filters" }, el("label", {}, "A", a), el("label", {}, "B", b),
      el("button", { id: "compare", onclick: () => { location.hash = link(["compare", a.value, b.value]); } }, "Compare")));
}

const COLUMNS = [
  ["task", "task", (r, href) => el("a", { href: href(r), class: "episode-link" }, r.task_id || r.eid)],
  ["trial", "trial", (r) => r.trial, "num"],
  ["world", "world", (r) => r.world],
  ["split", null, (r) => r.split],
  ["tags", null, (r) => r.tags.join(", ")],
  ["reward", "reward", (r) => el("span", { class: "badge " + (r.passed ? "pass" : "fail") }, r.passed ? "pass" : "fail")],
  ["partial", "partial", (r) => fmt(r.partial_reward, 2), "num"],
  ["calls", "calls", (r) => r.calls, "num"],
  ["errors", "errors", (r) => r.errors, "num"],
  ["faults", "faults", (r) => r.faults, "num"],
  ["tokens", "tokens", (r) => r.tokens, "num"],
  ["failure", "failure", (r) => r.failure],
  ["ended by", "termination", (r) => r.termination],
];
const FILTERS = ["world", "tag", "split", "passed", "failure", "termination"];

async function runPage(run, params, id) {
  const query = new URLSearchParams(params);
  const [head, page] = await Promise.all([api(`api/runs/${run}/summary?${query}`), api(`api/runs/${run}/episodes?${query}`)]);
  if (id !== state.renderId) return;
  const s = head.summary;
  crumbs([head.run.name, null]);
  const go = navigate(["runs", String(run)], params);
  const hats = Object.entries(s.pass_hat_k).map(([k, v]) => card(`pass^${k}`, fmt(v)));
  const filterBar = el("div", { class: "filters", id: "filters" },
    FILTERS.map((name) => {
      const options = name === "passed"
        ? [{ value: "yes", count: null }, { value: "no", count: null }] : head.facets[name] || [];
      return el("label", {}, name, el("select", { name, onchange: (e) => go({ [name]: e.target.value }) },
        el("option", { value: "" }, "any"),
        options.map((o) => el("option", { value: o.value, selected: params.get(name) === o.value },
          o.count === null ? o.value : `${o.value} (${o.count})`))));
    }),
    el("label", {}, "task contains", el("input", { name: "q", value: params.get("q") || "", onchange: (e) => go({ q: e.target.value }) })),
    el("button", { onclick: () => { location.hash = link(["runs", String(run)]); } }, "Clear"));
  const filtered = FILTERS.concat(["q"]).some((f) => params.get(f));
  const others = state.info.runs.map((r, i) => i).filter((i) => i !== run);
  setMain(
    el("h1", {}, head.run.name, " ", el("span", { class: "muted" }, `${head.run.agents.join(", ")} on ${head.run.worlds.join(", ")}`)),
    filtered ? el("p", { class: "notice" }, `Figures over the ${s.episodes} episodes that match the filters.`) : null,
    el("div", { class: "cards", id: "stats" },
      card("pass@1", fmt(s.pass_at_1), "pass_at_1"), ...hats, card("mean reward", fmt(s.mean_reward)),
      card("partial reward", fmt(s.mean_partial)), card("episodes", `${s.passed} / ${s.episodes} passed`),
      card("tool calls", s.calls), card("tool errors", s.errors), card("faults", s.faults), card("tokens", s.tokens),
      card("episode errors", s.episode_errors), s.cancelled ? card("cancelled", s.cancelled) : null),
    el("div", { class: "plots" },
      el("div", { class: "plot" }, el("h3", {}, "partial reward"),
        barChart(s.partial_histogram.map((b) => ({ ...b, label: `${b.low.toFixed(1)}–${b.high.toFixed(1)}`, tick: b.low.toFixed(1) })), { label: "partial reward" })),
      el("div", { class: "plot" }, el("h3", {}, "tool calls per episode"),
        barChart(s.calls_histogram.map((b) => ({ ...b, label: b.high - b.low === 1 ? String(b.low) : `${b.low}–${b.high - 1}`, tick: String(b.low) })), { label: "calls" })),
      el("div", { class: "plot" }, el("h3", {}, "error rate per tool"), rateChart(s.tools))),
    others.length ? el("p", {}, "Compare with: ", others.map((i) => el("a", { href: link(["compare", String(run), String(i)]), style: "margin-right:.6rem" }, state.info.runs[i].name))) : null,
    el("h2", {}, "Episodes"),
    filterBar,
    episodeTable(page, params, go, (r) => link(["runs", String(run), "episodes", r.eid])));
}

function card(k, v, id) { return el("div", { class: "card", "data-stat": id || k }, el("div", { class: "v" }, v), el("div", { class: "k" }, k)); }

function episodeTable(page, params, go, href) {
  const sort = params.get("sort") || "task", desc = params.get("order") === "desc";
  const table = el("table", { id: "episodes" },
    el("tr", {}, COLUMNS.map(([title, key, , cls]) => el("th", {
      class: [cls, key ? "sortable" : "", key === sort ? (desc ? "sorted-desc" : "sorted-asc") : ""].filter(Boolean).join(" "),
      "data-sort": key, onclick: key ? () => go({ sort: key, order: key === sort && !desc ? "desc" : "asc" }) : null,
    }, title))),
    page.rows.map((r) => el("tr", { class: "click", "data-eid": r.eid, onclick: opens(href(r)) },
      COLUMNS.map(([, , cell, cls]) => el("td", { class: cls }, cell(r, href))))));
  return el("div", {}, table, pager(page, go));
}

// A table row's click handler: go to `hash`, unless the click was on a link of the row (the
// episode's own <a href>), which the browser follows itself: in this tab, or in a new one with
// Ctrl/Cmd or the middle button, and "copy link address" gives a URL that opens the episode.
function opens(hash) {
  return (event) => { if (!event.target.closest("a")) location.hash = hash; };
}

function pager(page, go) {
  const end = Math.min(page.total, page.offset + page.rows.length);
  return el("div", { class: "pager", id: "pager" },
    el("button", { disabled: page.offset === 0, onclick: () => go({ offset: Math.max(0, page.offset - page.limit) }) }, "‹ previous"),
    el("span", { id: "range" }, page.total ? `${page.offset + 1}–${end} of ${page.total}` : "no episodes match"),
    el("button", { disabled: end >= page.total, onclick: () => go({ offset: page.offset + page.limit }) }, "next ›"));
}

// -- an episode -------------------------------------------------------------------------------------

async function episodePage(run, eid, call, id) {
  const data = await api(`api/runs/${run}/episodes/${encodeURIComponent(eid)}`);
  if (id !== state.renderId) return;
  crumbs([state.info.runs[run].name, link(["runs", String(run)])], [eid, null]);
  setMain(episodeView(data, (i) => link(["runs", String(run), "episodes", eid, "calls", String(i)]), call));
  focusCall(call);
}

function focusCall(call) {
  if (call === undefined) { window.scrollTo(0, 0); return; }
  const node = document.getElementById("call-" + call);
  if (node) { node.classList.add("selected"); node.scrollIntoView({ block: "center" }); }
}

function episodeView(t, callHref, selected) {
  const v = t.view || {};
  const verdict = t.verdict;
  const byId = new Map(t.calls.map((c) => [c.tool_call_id, c]));
  const used = new Set();
  const conversation = [];
  for (const m of t.messages) {
    if (m.role === "tool" && byId.has(m.tool_call_id)) continue;
    if (m.role === "system") {
      conversation.push(el("details", { class: "msg system" }, el("summary", {}, "system (the world's policy)"), el("div", { class: "text" }, m.content || "")));
      continue;
    }
    const box = el("div", { class: "msg " + m.role }, el("div", { class: "role" }, m.role === "tool" ? `tool ${m.name || ""}` : m.role));
    if (m.content) box.append(el("div", { class: "text" }, m.content));
    for (const tc of m.tool_calls || []) {
      const c = byId.get(tc.id);
      if (c) { used.add(c.index); box.append(callView(c, callHref, selected)); }
      else box.append(el("pre", {}, `${tc.function.name}(${tc.function.arguments}) — never reached the server`));
    }
    conversation.push(box);
  }
  const unplaced = t.calls.filter((c) => !used.has(c.index));
  const title = v.task_id || t.task_id || t.episode_id || "episode";
  return el("div", { class: "episode" },
    el("h1", {}, title, t.trial !== undefined && t.task_id ? el("span", { class: "muted" }, ` trial ${t.trial}`) : null, " ",
      verdict ? el("span", { class: "badge " + (verdict.passed ? "pass" : "fail"), id: "outcome" }, verdict.passed ? "passed" : "failed") : el("span", { class: "badge", id: "outcome" }, t.live ? (t.live.ended ? "ended" : "live") : "ungraded")),
    el("div", { class: "cards" },
      card("reward", fmt(t.reward)), card("partial", fmt(t.partial_reward, 2)), card("calls", t.calls.length),
      card("errors", t.calls.filter((c) => !c.ok).length), card("faults", t.calls.filter((c) => c.fault).length),
      card("tokens", t.usage.total_tokens), card("agent", t.agent), card("ended by", t.termination),
      v.failure && !(t.live && !verdict) ? card("failure", v.failure) : null, v.split ? card("split", v.split) : null,
      v.tags && v.tags.length ? card("tags", v.tags.join(", ")) : null),
    t.error ? el("div", { class: "error-box" }, t.error) : null,
    verdictView(verdict),
    el("h2", {}, "Conversation"),
    conversation,
    unplaced.length ? [el("h2", {}, "Calls not in the conversation"), unplaced.map((c) => callView(c, callHref, selected))] : null);
}

function verdictView(verdict) {
  if (!verdict) return el("p", { class: "muted" }, "Not graded.");
  const out = [el("h2", {}, "Verdict")];
  if (verdict.failure) out.push(el("div", { class: "error-box" }, "Failed closed: " + verdict.failure));
  if (verdict.detail === "summary") {
    out.push(el("p", { class: "muted" }, "This server shows verdicts in summary detail: which checks passed, not what they expected."));
    out.push(el("table", { id: "checks" }, verdict.checks.map((c) => el("tr", {}, el("td", {}, badge(c.passed)), el("td", {}, c.id || c.check)))));
    return out;
  }
  out.push(el("table", { id: "checks" },
    el("tr", {}, ["", "check", "requirement", "result", "reason", "weight"].map((h) => el("th", {}, h))),
    verdict.checks.map((c) => el("tr", { "data-passed": c.passed },
      el("td", {}, badge(c.passed)), el("td", { class: "check-id" }, c.id || c.type), el("td", {}, c.requirement),
      el("td", {}, c.passed ? "passed" : "failed"), el("td", {}, c.reason),
      el("td", { class: "num" }, fmt(c.weight, 2))))));
  const gold = verdict.checks.filter((c) => c.type === "gold_state");
  out.push(el("h2", {}, "Final diff"));
  out.push(el("p", { class: "muted" }, "The episode's net changes (first before, last after per row), as graded." +
    (gold.length ? " Against the gold state: " : "")), ...gold.map((c) => el("div", { class: c.passed ? "notice" : "error-box", id: "gold" }, c.reason)));
  if (!verdict.diff.length) out.push(el("p", { id: "final-diff" }, "No row changed."));
  else out.push(el("table", { id: "final-diff" },
    el("tr", {}, ["op", "table", "key", "column", "before", "after"].map((h) => el("th", {}, h))),
    verdict.diff.map((d) => el("tr", {},
      el("td", {}, d.op), el("td", {}, d.table), el("td", {}, keyText(d.key)), el("td", {}, d.column || ""),
      el("td", { class: d.before === null ? "" : "before" }, d.op === "insert" ? "" : pretty(d.before)),
      el("td", { class: d.after === null ? "" : "after" }, d.op === "delete" ? "" : pretty(d.after))))));
  return out;
}

function badge(passed) { return el("span", { class: "badge " + (passed ? "pass" : "fail") }, passed ? "✓" : "✗"); }

function callView(c, callHref, selected) {
  const changes = (c.changes || []).filter((ch) => ch.table !== "_faults");
  const node = el("div", { class: "call" + (c.ok ? "" : " error"), id: "call-" + c.index, "data-index": c.index },
    el("div", { class: "head" },
      el("a", { href: callHref(c.index), class: "permalink", title: "link to this call" }, `#${c.index}`),
      el("span", { class: "name" }, c.tool),
      el("span", { class: "badge " + (c.ok ? "pass" : "fail") }, c.ok ? "ok" : "error"),
      c.fault ? el("span", { class: "badge fault", "data-fault": c.fault.kind }, `fault: ${c.fault.kind}`) : null,
      changes.length ? el("span", { class: "badge" }, `${changes.length} row${changes.length > 1 ? "s" : ""} changed`) : null,
      c.duration_ms !== null && c.duration_ms !== undefined ? el("span", { class: "muted" }, `${c.duration_ms.toFixed(0)} ms`) : null),
    el("div", { class: "body" },
      el("div", { class: "label" }, "arguments"), el("pre", { class: "arguments" }, pretty(c.arguments)),
      c.ok ? [el("div", { class: "label" }, "result"), el("pre", { class: "result" }, pretty(c.result))]
        : [el("div", { class: "label" }, "error"), el("pre", { class: "error" }, c.error || "")],
      c.fault ? [el("div", { class: "label" }, "injected fault"), el("pre", { class: "fault" }, pretty(c.fault))] : null,
      changes.length ? [el("div", { class: "label" }, "rows changed"), changes.map(changeView)] : null));
  if (String(c.index) === String(selected)) node.classList.add("selected");
  return node;
}

function changeView(ch) {
  const head = el("div", { class: "chead" },
    { insert: "+ inserted ", update: "~ updated ", delete: "− deleted " }[ch.op] || ch.op + " ", `${ch.table} ${keyText(ch.key)}`);
  const box = el("div", { class: "change " + ch.op, "data-op": ch.op, "data-table": ch.table, "data-key": keyText(ch.key) }, head);
  if (ch.op === "update") {
    const before = ch.before || {}, after = ch.after || {};
    const cols = [...new Set([...Object.keys(before), ...Object.keys(after)])];
    const changed = cols.filter((k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]));
    const same = cols.filter((k) => !changed.includes(k));
    box.append(el("table", {}, el("tr", {}, el("th", {}, "column"), el("th", {}, "before"), el("th", {}, "after")),
      changed.map((k) => el("tr", { "data-col": k }, el("td", {}, k), el("td", { class: "before" }, show(before[k])), el("td", { class: "after" }, show(after[k]))))));
    if (same.length) box.append(el("details", {}, el("summary", {}, `${same.length} unchanged columns`),
      el("table", {}, same.map((k) => el("tr", {}, el("td", {}, k), el("td", {}, show(after[k])))))));
  } else {
    const row = (ch.op === "delete" ? ch.before : ch.after) || {};
    box.append(el("table", {}, Object.entries(row).map(([k, val]) =>
      el("tr", { "data-col": k }, el("td", {}, k), el("td", { class: ch.op === "delete" ? "before" : "after" }, show(val))))));
  }
  return box;
}

// -- comparing two runs -------------------------------------------------------------------------------

async function comparePage(a, b, params, id) {
  const query = new URLSearchParams(params);
  if (!query.get("only")) query.set("only", "all");
  const data = await api(`api/compare/${a}/${b}?${query}`);
  if (id !== state.renderId) return;
  crumbs([`${data.a.name} vs ${data.b.name}`, null]);
  const go = navigate(["compare", String(a), String(b)], params);
  const c = data.counts;
  const side = (r) => r ? el("span", {}, el("span", { class: "badge " + (r.passed ? "pass" : "fail") }, r.passed ? "pass" : "fail"), " ", fmt(r.partial_reward, 2)) : el("span", { class: "muted" }, "absent");
  const delta = (d) => d === null ? "–" : el("span", { class: d > 0 ? "delta-pos" : d < 0 ? "delta-neg" : "" }, (d > 0 ? "+" : "") + d.toFixed(2));
  setMain(
    el("h1", {}, `${data.a.name} vs ${data.b.name}`),
    el("div", { class: "cards", id: "compare-counts" },
      card("fixed (fail → pass)", c.fixed, "fixed"), card("broke (pass → fail)", c.broke, "broke"),
      card("matched episodes", c.matched, "matched"), card(`only in ${data.a.name}`, c.only_a, "only_a"), card(`only in ${data.b.name}`, c.only_b, "only_b")),
    el("div", { class: "filters" },
      el("label", {}, "show", el("select", { name: "only", onchange: (e) => go({ only: e.target.value }) },
        [["all", "all episodes"], ["flipped", "flipped only"], ["changed", "changed reward"]].map(([v, t]) =>
          el("option", { value: v, selected: (params.get("only") || "all") === v }, t)))),
      el("label", {}, "task contains", el("input", { name: "q", value: params.get("q") || "", onchange: (e) => go({ q: e.target.value }) }))),
    el("table", { id: "comparison" },
      el("tr", {}, ["task", "trial", data.a.name, data.b.name, "Δ reward", "Δ partial", "flipped"].map((h) => el("th", {}, h))),
      data.rows.map((r) => { const to = link(["compare", String(a), String(b), "episodes", `${r.task_id}@${r.trial}`]);
        return el("tr", { class: "click", "data-task": r.task_id, "data-flipped": r.flipped, onclick: opens(to) },
        el("td", {}, el("a", { href: to, class: "episode-link" }, r.task_id)), el("td", { class: "num" }, r.trial), el("td", {}, side(r.a)), el("td", {}, side(r.b)),
        el("td", { class: "num" }, delta(r.reward_delta)), el("td", { class: "num" }, delta(r.partial_delta)),
        el("td", {}, r.flipped ? el("span", { class: "badge " + (r.flipped === "fixed" ? "pass" : "fail") }, r.flipped) : "")); })),
    pager(data, go));
}

async function sideBySide(a, b, eid, id) {
  const get = (run) => api(`api/runs/${run}/episodes/${encodeURIComponent(eid)}`).catch((err) => ({ missing: err.message || String(err) }));
  const [ea, eb] = await Promise.all([get(a), get(b)]);
  if (id !== state.renderId) return;
  const names = [state.info.runs[a].name, state.info.runs[b].name];
  crumbs([`${names[0]} vs ${names[1]}`, link(["compare", String(a), String(b)])], [eid, null]);
  const pane = (run, t, name) => el("div", { class: "pane", "data-run": run }, el("h2", {}, name),
    t.missing ? el("p", { class: "muted" }, t.missing) : episodeView(t, (i) => link(["runs", String(run), "episodes", eid, "calls", String(i)])));
  setMain(el("div", { class: "cols", id: "side-by-side" }, pane(a, ea, names[0]), pane(b, eb, names[1])));
}

// -- live episodes ------------------------------------------------------------------------------------

async function liveList(id) {
  const data = await api("api/live");
  if (id !== state.renderId) return;
  crumbs(["live episodes", null]);
  setMain(
    el("h1", {}, "Live episodes"),
    el("p", { class: "muted" }, "This server's episodes, refreshed every few seconds. Open one to watch its calls as they happen."),
    data.episodes.length ? el("table", { id: "live" },
      el("tr", {}, ["episode", "world", "task", "calls", "clock", "state", "verdict"].map((h) => el("th", {}, h))),
      data.episodes.map((e) => el("tr", { class: "click", "data-id": e.id, onclick: opens(link(["live", e.id])) },
        el("td", {}, el("a", { href: link(["live", e.id]) }, e.id)), el("td", {}, e.world), el("td", {}, e.task || ""),
        el("td", { class: "num" }, e.calls), el("td", {}, e.clock), el("td", {}, e.ended ? "ended" : e.flagged ? "flagged" : "live"),
        el("td", {}, e.passed === null ? "" : badge(e.passed)))))
      : el("p", { id: "live" }, "No episodes yet."));
  state.timer = setTimeout(() => { if (id === state.renderId) liveList(id).catch(failed); }, 3000);
}

async function liveEpisode(episodeId, call, id, version) {
  const data = await api(`api/live/${encodeURIComponent(episodeId)}` + (version ? `?since=${encodeURIComponent(version)}` : ""));
  if (id !== state.renderId) return;
  if (!data.unchanged) {
    crumbs(["live episodes", link(["live"])], [episodeId, null]);
    const y = window.scrollY;
    setMain(episodeView(data, (i) => link(["live", episodeId, "calls", String(i)]), call));
    if (version === null) focusCall(call); else window.scrollTo(0, y);
    version = data.version;
  }
  status(`live · updated ${new Date().toLocaleTimeString()}`);
  state.timer = setTimeout(() => {
    if (id === state.renderId) liveEpisode(episodeId, call, id, version).catch(failed);
  }, 1000 * (state.info.poll_seconds || 1));
}

// -- start ---------------------------------------------------------------------------------------------

(function start() {
  const m = location.hash.match(/^#token=([^&]*)/);
  if (m) {  // a link with the token: keep it for this tab, and out of the address bar and history
    sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(m[1]));
    history.replaceState(null, "", location.pathname + location.search + "#/");
  }
  window.addEventListener("hashchange", route);
  route();
})();

#include "interloper/serve/page.hpp"

namespace interloper::serve {

// Every value reaches the document through textContent or setAttribute, never innerHTML, so a
// key such as "<script>" shows as text.
const std::string_view kPage = R"PAGE(<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>interloper</title>
<meta name="interloper-token" content="@TOKEN@">
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
:root{--m:#2da44e;--s:#bf8700;--f:#cf222e;--x:#d0d7de;--ink:#1f2328;--mute:#656d76;--line:#d8dee4;--bg:#f6f8fa}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--ink);background:#fff}
header{display:flex;align-items:center;gap:24px;padding:12px 24px;background:#24292f;color:#fff}
header b{font-size:16px;letter-spacing:.3px}
header nav a{color:#d0d7de;text-decoration:none;margin-right:16px}
header nav a.on{color:#fff;font-weight:600}
header .pipe{margin-left:auto;color:#9198a1;font-size:12px}
main{padding:20px 24px;max-width:1600px}
h1{font-size:20px;margin:0 0 4px}h2{font-size:15px;margin:24px 0 8px}
.sub{color:var(--mute);margin-bottom:16px}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:7px 10px;border-bottom:1px solid var(--line);vertical-align:top}
th{font-size:12px;color:var(--mute);font-weight:600;background:var(--bg)}
td.num{text-align:right;font-variant-numeric:tabular-nums}
a{color:#0969da}
code,.mono{font:12px ui-monospace,SFMono-Regular,Menlo,monospace}
.bar{display:flex;height:8px;width:100px;border-radius:4px;overflow:hidden;background:var(--x)}
.bar span{display:block;height:100%}
.n-m{color:var(--m)}.n-s{color:var(--s)}.n-f{color:var(--f)}.n-x{color:var(--mute)}
.legend{display:flex;gap:14px;color:var(--mute);font-size:12px;margin:8px 0}
.legend i{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:4px;vertical-align:-1px}
.grid{display:inline-grid;gap:3px;padding:8px;border:1px solid var(--line);border-radius:6px}
.row-label{font-size:11px;color:var(--mute);padding-right:6px;white-space:nowrap;align-self:center}
.cell{width:13px;height:13px;border-radius:2px;cursor:pointer}
.cell.materialized,.legend .materialized{background:var(--m)}
.cell.stale,.legend .stale{background:var(--s)}
.cell.failed,.legend .failed{background:var(--f)}
.cell.missing,.legend .missing{background:var(--x)}
.cell.bucket{width:6px;height:28px;border-radius:1px}
.cell:hover{outline:2px solid var(--ink)}
.labels{display:flex;flex-wrap:wrap;gap:6px}
.cell.label{width:auto;height:auto;padding:4px 10px;color:#fff;font:12px ui-monospace,monospace}
.cell.label.missing{color:var(--ink)}
.strip{display:flex;flex-wrap:wrap;gap:1px;max-width:1200px}
#detail{margin-top:14px;padding:10px 14px;border:1px solid var(--line);border-radius:6px;background:var(--bg);min-height:20px}
pre{white-space:pre-wrap;margin:4px 0;font:12px ui-monospace,monospace;background:#fff1f0;border-left:3px solid var(--f);padding:6px 8px}
.state{padding:1px 8px;border-radius:10px;font-size:12px;color:#fff}
.state.succeeded,.state.materialized{background:var(--m)}.state.stale{background:var(--s)}.state.failed{background:var(--f)}
.state.running{background:#bf8700}.state.interrupted,.state.missing{background:#8c959f}
svg a text{fill:var(--ink)} svg rect{fill:#fff;stroke:#8c959f;rx:6}
svg a:hover rect{stroke:#0969da;stroke-width:2}
.err{color:var(--f)}
button.run-missing{font:12px system-ui,sans-serif;padding:2px 8px;border:1px solid #8c959f;border-radius:5px;background:#fff;cursor:pointer}
button.run-missing:disabled{cursor:progress;opacity:.6}
.run-outcome{font-size:12px;color:var(--mute);margin-left:6px}
.run-outcome.refused{color:var(--f)}
.fire{display:block;white-space:nowrap}
.desc{display:block;color:var(--mute);font-size:12px;max-width:24em;white-space:pre-line}
.nobr{white-space:nowrap}
.long{overflow-wrap:anywhere}
.about{color:var(--ink);max-width:60em;white-space:pre-line;margin:4px 0 12px}
td.dest{min-width:10em;max-width:20em}
td.win{min-width:8em}
td.dest{overflow-wrap:break-word}
.run-id{overflow-wrap:anywhere}
td.name{min-width:9em}
td.name .desc{min-width:10em}
td.name a,.desc,td.source{overflow-wrap:anywhere}
button.run-missing{min-width:9em}
td .run-outcome{display:block;max-width:15em;margin:4px 0 0}
</style></head>
<body>
<header><b>interloper</b><nav><a href="/" id="nav-overview">Overview</a><a href="/lineage" id="nav-lineage">Lineage</a><a href="/runs" id="nav-runs">Runs</a></nav><span class="pipe" id="pipeline"></span></header>
<main id="main"></main>
<script>
"use strict";
const main = document.getElementById("main");
// The per-server token that allows POSTs; empty unless the server runs with --allow-runs.
const token = document.querySelector('meta[name="interloper-token"]').content;
const outcomes = {};  // asset name -> what its last "run missing" click did, kept across refreshes
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}
async function api(path) {
  const r = await fetch(path);
  const body = await r.json();
  if (!r.ok) throw new Error(body.error || r.statusText);
  return body;
}
function bar(m, s, f, x) {
  const total = Math.max(1, m + f + x), b = el("div", {class: "bar"});
  for (const [n, c] of [[m - s, "--m"], [s, "--s"], [f, "--f"], [x, "--x"]]) {
    const s = el("span"); s.style.width = (100 * n / total) + "%"; s.style.background = "var(" + c + ")"; b.append(s);
  }
  return b;
}
function partitioningText(p) {
  if (!p) return "unpartitioned";
  if (p.kind === "time") return el("span", {}, p.granularity + " by " + p.column, ...(p.start ? [" from ", el("span", {class: "nobr"}, String(p.start).replace("T00:00:00", ""))] : []));
  if (p.kind === "list") return "list by " + p.column + " (" + (p.values || []).length + " values)";
  return p.kind;
}
// A run id as a table shows it, without the time it starts with (the time is shown beside it):
// "run-20261206T004256-31968" as "…31968", the whole id on hover.
function runId(id) {
  const m = /^run-\d{8}T\d{6}-([^\s]{1,16})$/.exec(id || "");
  return el("code", {class: m ? "run-id nobr" : "run-id", title: id}, m ? "…" + m[1] : id);
}
// An instant "2026-12-06T00:42:56" as "2026-12-06 00:42:56", which may break between the date
// and the time only.
function when(t) {
  const [date, time] = String(t).split("T");
  return el("span", {class: "when"}, el("span", {class: "nobr"}, date), ...(time ? [" ", el("span", {class: "nobr"}, time)] : []));
}
// Text that may break after each "/", "?", "&", "@" or "..", and nowhere else (not at the
// hyphens of a date), but anywhere in a part too long for a column: a URL or a window.
function breakable(text) {
  if (!text) return ["-"];
  const out = [];
  for (const part of String(text).split(/(?<=\/|\?|&|@|\.\.)/)) out.push(el("span", {class: part.length > 24 ? "long" : "nobr"}, part), el("wbr"));
  out.pop();
  return out;
}
function runLine(r) {
  return el("span", {}, el("span", {class: "state " + r.status}, r.status), " ",
            el("code", {}, r.run_id), " " + (r.window || "-") + " · " + r.succeeded + " ok, " +
            r.failed + " failed · " + r.started);
}
// The "run missing partitions" button of an asset and the outcome of its last click, or nothing
// when the server does not allow runs.
function runButton(name, window) {
  if (!token) return "";
  const outcome = el("span", {class: "run-outcome", "data-asset": name});
  const paint = (e, o) => { e.textContent = o.text; e.classList.toggle("refused", !o.ok); };
  if (outcomes[name]) paint(outcome, outcomes[name]);
  // The answer may come after a refresh replaced this row: write it wherever the asset is shown.
  const show = o => { for (const e of document.querySelectorAll(".run-outcome")) if (e.dataset.asset === name) paint(e, o); };
  const button = el("button", {class: "run-missing", type: "button", "data-asset": name}, "Run missing partitions");
  button.addEventListener("click", async () => {
    button.disabled = true;
    let o;
    try {
      const r = await fetch("/api/assets/" + encodeURIComponent(name) + "/backfill" + (window ? "?window=" + encodeURIComponent(window) : ""),
                            {method: "POST", headers: {"X-Interloper-Token": token}});
      const body = await r.json();
      o = r.ok ? {ok: true, text: "backfill of the missing partitions of " + (body.window || name) + " started"}
               : {ok: false, text: "refused: " + (body.error || r.statusText)};
    } catch (e) { o = {ok: false, text: "failed: " + e.message}; }
    outcomes[name] = o; show(o); button.disabled = false;
  });
  return el("span", {class: "run"}, button, outcome);
}
function failureText(f) {
  return f ? el("span", {class: "mono", title: f.error}, ...(f.partitions ? [...breakable(f.partitions), " · "] : []),
                when(f.finished), " ", runId(f.run_id)) : "-";
}
function lastRunText(r) {
  return r ? el("span", {class: "mono " + (r.status === "failed" ? "n-f" : "n-m"), title: r.error || ""},
                r.status + " · ", when(r.finished), " ", runId(r.run_id)) : "-";
}
// An asset's name, linking to its page, over its description.
function assetName(a) {
  const out = el("td", {class: "name"}, el("a", {href: "/assets/" + encodeURIComponent(a.name)}, a.name));
  if (a.description) out.append(el("span", {class: "desc"}, a.description));
  return out;
}
async function overview() {
  const o = await api("/api/overview");
  const rows = o.assets.map(a => el("tr", {class: "asset"}, assetName(a),
    el("td", a.source_description ? {class: "source", title: a.source_description} : {class: "source"}, a.source),
    el("td", {}, partitioningText(a.partitioning)),
    el("td", {class: "mono dest"}, ...breakable(a.destination)), el("td", {class: "mono win"}, ...breakable(a.window)),
    el("td", {class: "num n-m"}, a.materialized, ...(a.stale ? [el("span", {class: "n-s stale", title: "materialized by an older definition: backfill --missing runs them again"}, " (" + a.stale + " stale)")] : [])),
    el("td", {class: "num n-f"}, a.failed),
    el("td", {class: "num n-x"}, a.missing), el("td", {}, bar(a.materialized, a.stale, a.failed, a.missing)),
    el("td", {class: "last-run"}, lastRunText(a.last_run)),
    el("td", {class: "last-failure"}, failureText(a.last_failure)), ...(token ? [el("td", {}, runButton(a.name, a.window))] : [])));
  return [el("h1", {}, "Assets"),
          el("div", {class: "sub"}, "Last run: ", o.last_run ? runLine(o.last_run) : "none recorded"),
          el("table", {}, el("thead", {}, el("tr", {}, ...["asset", "source", "partitioning",
             "destination", "window", "materialized", "failed", "missing", "", "last run", "last failure", ...(token ? [""] : [])].map(h => el("th", {}, h)))),
             el("tbody", {}, ...rows))];
}
function legend() {
  return el("div", {class: "legend"}, ...["materialized", "stale", "failed", "missing"].map(s =>
    el("span", {}, el("i", {class: s}), s)));
}
function cell(state, key, extra) {
  const c = el("div", {class: "cell " + state + (extra ? " " + extra : ""), "data-key": key, title: key + ": " + state});
  return c;
}
// Rows of the grid: a label and one slot per column (null for padding).
function layout(g) {
  const cells = g.cells;
  if (g.granularity === "day") {
    const rows = []; let row = null;
    for (const c of cells) {
      const d = new Date(c.key + "T00:00:00Z"), dow = (d.getUTCDay() + 6) % 7;
      if (!row || dow === 0) { row = {label: c.key, slots: new Array(7).fill(null)}; rows.push(row); }
      row.slots[dow] = c;
    }
    return {cols: 7, rows};
  }
  const per = {hour: 24, month: 12, quarter: 4, week: 13}[g.granularity] || 10;
  const rows = [];
  for (let i = 0; i < cells.length; i += per) {
    const slice = cells.slice(i, i + per), slots = slice.slice();
    while (slots.length < per) slots.push(null);
    rows.push({label: g.granularity === "hour" ? slice[0].key.slice(0, 10) : slice[0].key, slots});
  }
  return {cols: per, rows};
}
function gridView(g, name) {
  if (g.buckets) {
    const strip = el("div", {class: "strip"});
    for (const b of g.buckets) {
      const state = b.failed ? "failed" : b.missing ? "missing" : b.stale ? "stale" : "materialized";
      const c = cell(state, b.first, "bucket");
      c.title = b.first + ".." + b.last + ": " + b.materialized + " materialized (" + b.stale + " stale), " + b.failed + " failed, " + b.missing + " missing";
      strip.append(c);
    }
    return [el("div", {class: "sub"}, g.partitions + " partitions in " + g.buckets.length + " buckets (a bucket is red if any partition failed, grey if any is missing, amber if any is stale)"), strip];
  }
  if (g.kind !== "time") {
    const box = el("div", {class: "labels"});
    for (const c of g.cells) {
      const e = cell(c.state, c.key, "label"); e.textContent = c.key || name; box.append(e);
      e.addEventListener("click", () => detail(name, c.key));
    }
    return [box];
  }
  const {cols, rows} = layout(g);
  const grid = el("div", {class: "grid"});
  grid.style.gridTemplateColumns = "auto repeat(" + cols + ", 13px)";
  for (const r of rows) {
    grid.append(el("div", {class: "row-label"}, r.label));
    for (const s of r.slots) {
      if (!s) { grid.append(el("div", {class: "pad"})); continue; }
      const c = cell(s.state, s.key); c.addEventListener("click", () => detail(name, s.key)); grid.append(c);
    }
  }
  return [grid];
}
async function detail(name, key) {
  const box = document.getElementById("detail");
  const d = await api("/api/assets/" + encodeURIComponent(name) + "/partitions/" + encodeURIComponent(key));
  box.replaceChildren(el("b", {}, d.key || name), " ", el("span", {class: "state " + d.state}, d.state),
    d.run_id ? " run " + d.run_id + ", " + d.started + " → " + d.finished : "",
    d.error ? el("pre", {}, d.error) : "");
}
async function assetPage(name) {
  const q = new URLSearchParams(location.search).get("window");
  const g = await api("/api/assets/" + encodeURIComponent(name) + (q ? "?window=" + encodeURIComponent(q) : ""));
  const out = [el("h1", {}, name)];
  if (g.description) out.push(el("p", {class: "about"}, g.description));
  if (g.source) out.push(el("div", {class: "sub source"}, "source " + g.source + (g.source_description ? ": " + g.source_description : "")));
  out.push(el("div", {class: "sub"}, (g.window ? g.window + " · " : "") + (g.partitions) + " partitions · " +
       (g.destination || "no destination")), legend());
  if (g.counts) out.push(el("div", {class: "sub"}, el("span", {class: "n-m"}, g.counts.materialized + " materialized"), " · ",
    ...(g.counts.stale ? [el("span", {class: "n-s"}, g.counts.stale + " of them stale"), " · "] : []),
    el("span", {class: "n-f"}, g.counts.failed + " failed"), " · ", el("span", {class: "n-x"}, g.counts.missing + " missing")));
  if (token) out.push(el("div", {class: "sub"}, runButton(name, g.window)));
  out.push(...gridView(g, name), el("div", {id: "detail"}, "Click a partition for its details."));
  if (g.failures && g.failures.length) {
    out.push(el("h2", {}, "Failures"), el("table", {}, el("thead", {}, el("tr", {}, ...["partitions", "run", "finished", "error"].map(h => el("th", {}, h)))),
      el("tbody", {}, ...g.failures.map(f => el("tr", {class: "failure"}, el("td", {class: "mono"}, f.partitions),
        el("td", {class: "mono"}, f.run_id), el("td", {}, f.finished), el("td", {}, el("pre", {}, f.error)))))));
  }
  return out;
}
async function lineage() {
  const l = await api("/api/lineage");
  const NS = "http://www.w3.org/2000/svg", W = 170, H = 34, DX = 230, DY = 56;
  const perLayer = {}, pos = {};
  for (const n of l.nodes) { const i = perLayer[n.layer] = (perLayer[n.layer] || 0) + 1; pos[n.name] = {x: 20 + n.layer * DX, y: 20 + (i - 1) * DY}; }
  const width = 40 + (Math.max(0, ...l.nodes.map(n => n.layer)) + 1) * DX, height = 40 + Math.max(1, ...Object.values(perLayer)) * DY;
  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("width", width); svg.setAttribute("height", height); svg.setAttribute("id", "lineage");
  const mk = (t, a) => { const e = document.createElementNS(NS, t); for (const [k, v] of Object.entries(a)) e.setAttribute(k, v); return e; };
  for (const e of l.edges) {
    const a = pos[e.from], b = pos[e.to], x1 = a.x + W, y1 = a.y + H / 2, x2 = b.x, y2 = b.y + H / 2;
    svg.append(mk("path", {d: `M${x1},${y1} C${x1 + 40},${y1} ${x2 - 40},${y2} ${x2},${y2}`, fill: "none", stroke: "#8c959f", "stroke-width": 1.5}));
  }
  for (const n of l.nodes) {
    const p = pos[n.name], link = mk("a", {href: "/assets/" + encodeURIComponent(n.name), class: "node"});
    link.append(mk("rect", {x: p.x, y: p.y, width: W, height: H, rx: 6}));
    const t = mk("text", {x: p.x + 10, y: p.y + 21, "font-size": 13}); t.textContent = n.name; link.append(t);
    svg.append(link);
  }
  return [el("h1", {}, "Lineage"), el("div", {class: "sub"}, "Each asset sits one column right of its deepest dependency."), svg];
}
// A table with a header row and one row of `cells(item)` per item, each row of class `cls`.
function table(headers, items, cls, cells) {
  return el("table", {}, el("thead", {}, el("tr", {}, ...headers.map(h => el("th", {}, h)))),
            el("tbody", {}, ...items.map(x => el("tr", {class: cls}, ...cells(x)))));
}
function jobsView(jobs) {
  if (!jobs.length) return [];
  const fires = j => j.next_fires.map(f => el("span", {class: "fire", title: f.fire_utc}, f.fire + " (" + (f.window || "before start: skipped") + ")"));
  return [el("h2", {}, "Jobs"), table(["job", "cron", "zone", "assets", "mode", "next fires (window)"], jobs, "job", j => [
    el("td", {class: "mono"}, j.name), el("td", {class: "mono"}, j.cron), el("td", {}, j.time_zone),
    el("td", {}, j.assets.join(", ")), el("td", {}, j.mode), el("td", {class: "mono"}, ...fires(j))])];
}
function queueView(q) {
  if (!q) return [];
  const out = [el("h2", {}, "Queue"), el("div", {class: "sub"}, el("code", {}, q.url), " · backfills of " + q.pipeline + ", newest first")];
  if (q.error) return [...out, el("p", {class: "err"}, q.error)];
  out.push(table(["backfill", "window", "assets", "created", "queued", "running", "succeeded", "failed", "canceled"], q.backfills, "backfill", b => [
    el("td", {class: "mono"}, b.backfill + (b.canceled ? " (canceled)" : "")), el("td", {class: "mono"}, b.window),
    el("td", {}, b.assets.join(", ")), el("td", {}, b.created), el("td", {class: "num"}, b.queued), el("td", {class: "num"}, b.running),
    el("td", {class: "num n-m"}, b.succeeded), el("td", {class: "num n-f"}, b.failed), el("td", {class: "num"}, b.canceled_tasks)]));
  const tasks = q.backfills.flatMap(b => b.running_tasks.map(t => ({backfill: b.backfill, ...t})));
  out.push(el("h2", {}, "Running tasks"), !tasks.length ? el("div", {class: "sub"}, "none") :
    table(["backfill", "asset", "partition", "worker", "seconds", "attempt"], tasks, "task", t => [
      el("td", {class: "mono"}, t.backfill), el("td", {}, t.asset), el("td", {class: "mono"}, t.partition),
      el("td", {class: "mono worker"}, t.worker), el("td", {class: "num"}, Math.round(t.seconds)), el("td", {class: "num"}, t.attempts)]));
  return out;
}
async function runs() {
  const r = await api("/api/runs");
  return [el("h1", {}, "Runs"), table(["run", "status", "window", "started", "seconds", "partitions", "ok", "failed", "canceled", "skipped", "command"], r.runs, "run", x => [
    el("td", {class: "mono"}, x.run_id), el("td", {}, el("span", {class: "state " + x.status}, x.status)),
    el("td", {class: "mono"}, x.window || "-"), el("td", {}, x.started), el("td", {class: "num"}, x.seconds), el("td", {class: "num"}, x.partitions),
    el("td", {class: "num"}, x.succeeded), el("td", {class: "num"}, x.failed), el("td", {class: "num"}, x.canceled), el("td", {class: "num"}, x.skipped), el("td", {class: "mono"}, x.command_line)]),
    ...jobsView(r.jobs), ...queueView(r.queue)];
}
async function render() {
  const path = location.pathname;
  let view, nav = "overview";
  if (path.startsWith("/assets/")) view = () => assetPage(decodeURIComponent(path.slice(8)));
  else if (path === "/lineage") { view = lineage; nav = "lineage"; }
  else if (path === "/runs") { view = runs; nav = "runs"; }
  else view = overview;
  for (const a of document.querySelectorAll("header nav a")) a.classList.toggle("on", a.id === "nav-" + nav);
  try {
    const children = await view();
    const keep = document.getElementById("detail");
    main.replaceChildren(...children);
    if (keep && document.getElementById("detail")) document.getElementById("detail").replaceWith(keep);
    // When the first view was laid out, in ms since navigation started (read by the bench).
    if (!main.dataset.renderedMs) { void main.offsetHeight; main.dataset.renderedMs = Math.round(performance.now()); }
  } catch (e) { main.replaceChildren(el("p", {class: "err"}, e.message)); }
}
render();
setInterval(render, 5000);  // the store changes while runs go on
</script></body></html>
)PAGE";

}  // namespace interloper::serve

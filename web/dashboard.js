"use strict";
const $ = id => document.getElementById(id);
const charts = {
  quality: new RefresherChart($("chart-quality"), { xLabel: "time unit", yLabel: "quality", yUnit: "a share", yMax: 1 }),
  fresh: new RefresherChart($("chart-fresh"), { xLabel: "time unit", yLabel: "fresh@10", yUnit: "a share", yMax: 1 }),
  map: new RefresherChart($("chart-map"), { xLabel: "time unit", yLabel: "MAP@10", yUnit: "a share", yMax: 1 }),
};
const runs = new Map();      // id -> { info, history }
const streams = new Map();   // id -> EventSource
let serving = [];

function label(info) { return `#${info.id} ${info.policy} B=${info.budget}`; }

function redraw() {
  const pick = { quality: "quality", fresh: "fresh_at_10", map: "map_at_10" };
  for (const [chart, key] of Object.entries(pick)) {
    const series = [...runs.values()].map(r => ({ name: label(r.info), family: r.info.policy, points: r.history.map(u => [u.unit, u[key]]) }));
    if (serving.length) series.push({ name: "no refresh (served)", dashed: true, color: "#868e96", points: serving.map(p => [p.unit, p[key]]) });
    charts[chart].setSeries(series);
  }
  const rows = [...runs.values()].sort((a, b) => b.info.id - a.info.id).map(({ info }) => {
    const cancel = el("button", { class: "secondary", type: "button", text: "cancel" });
    cancel.disabled = ["done", "cancelled", "failed"].includes(info.status);
    cancel.addEventListener("click", () => postJSON(`/api/runs/${info.id}/cancel`, {}).then(refresh).catch(e => showError($("message"), e)));
    return el("tr", { "data-run": info.id, "data-status": info.status },
      el("td", { text: String(info.id), title: meaning("run_id") }), el("td", { text: info.policy }), numberCell(info.budget, "budget"),
      el("td", { text: (info.delta_q === "exact" ? info.mode + " (exact ΔQ)" : info.mode) + (info.new_pages === "frontier" ? ", new pages in B" : "") + (info.warmup_units > 0 ? ", warm-up " + info.warmup_units : "") + (info.oracle_history === "warm-up" ? ", oracle told the warm-up only" : (info.mode === "oracle" ? " (knows the future: a bound)" : "")) + (info.signals && info.signals.join(",") !== "none" ? ", signals " + info.signals.join(" + ") : "") }), el("td", { text: info.workload }),
      el("td", { class: "status", text: info.status + (info.error ? ": " + info.error : "") }),
      numberCell(`${info.units_done}/${info.units_total}`, "units_done"),
      numberCell(fmt(info.latest && info.latest.quality), "quality_now"),
      numberCell(fmt(info.mean_quality), "mean_quality"), numberCell(fmt(info.mean_fresh_at_10), "mean_fresh_at_10"),
      numberCell(fmt(info.mean_map_at_10), "mean_map_at_10"), el("td", {}, cancel));
  });
  $("runs").tBodies[0].replaceChildren(...rows);
}

function follow(id) {
  if (streams.has(id)) return;
  const source = new EventSource(`/api/runs/${id}/events`);
  streams.set(id, source);
  const run = runs.get(id);
  run.history = [];
  source.addEventListener("unit", e => {
    const record = JSON.parse(e.data);
    run.history.push(record);
    run.info.units_done = run.history.length;
    run.info.latest = record;
    if (run.info.status === "queued") run.info.status = "running";
    redraw();
  });
  source.addEventListener("end", e => { run.info = JSON.parse(e.data); source.close(); redraw(); });
  source.addEventListener("lagged", () => { source.close(); streams.delete(id); refresh(); });
  source.onerror = () => { source.close(); };
}

// The simulated Web: its size and, when several collections were read, each one's capture
// period (they are aligned at their own first unit); and how the served index is split.
function describeCorpus(corpus, shards) {
  if (!corpus) return;
  const list = (corpus.collections && corpus.collections.list) || [];
  const days = corpus.collections ? corpus.collections.unit_seconds / 86400 : 0;
  const lines = [`Corpus: ${corpus.pages} pages over ${corpus.units} units of ${days} days.`];
  if (list.length > 1) {
    lines.push(`${list.length} collections, each aligned at its own first unit:`);
    for (const c of list) {
      const sites = c.sites.map(s => `${s.host} ${s.pages}`).join(", ");
      lines.push(`${c.path}: captured ${c.first_capture_date} .. ${c.last_capture_date}, ${c.pages} pages (${sites})`);
    }
  }
  if (shards) {
    const sizes = shards.pages_per_shard;
    lines.push(`Served index split over ${sizes.length} shards by ${shards.by} (pages per shard ${sizes.join(", ")}; the largest ${shards.skew.toFixed(2)}× the mean): every search is scored with the statistics of all shards and merged, as one index would answer.`);
  }
  $("corpus").replaceChildren(...lines.map(text => el("div", { text })));
}

async function refresh() {
  try {
    const q = await api("/api/quality");
    serving = q.serving || [];
    describeCorpus(q.corpus, q.shards);
    for (const { run, history } of q.runs) {
      const known = runs.get(run.id);
      if (known && streams.has(run.id)) { if (["done", "cancelled", "failed"].includes(run.status)) known.info = run; continue; }
      runs.set(run.id, { info: run, history });
      if (!["done", "cancelled", "failed"].includes(run.status)) follow(run.id);
    }
    redraw();
  } catch (err) { showError($("message"), err); }
}

// "key=value; key=value" → { key: value }: numbers as numbers, anything else as text (a GP4C
// function may hold commas, so pairs are separated by semicolons).
function parseParams(text) {
  const params = {};
  for (const pair of text.split(";").map(p => p.trim()).filter(p => p)) {
    const at = pair.indexOf("=");
    if (at < 1) throw new Error(`parameters: \`${pair}\` is not key=value`);
    const key = pair.slice(0, at).trim(), value = pair.slice(at + 1).trim();
    params[key] = value !== "" && Number.isFinite(Number(value)) ? Number(value) : value;
  }
  return params;
}

$("run-form").addEventListener("submit", async e => {
  e.preventDefault();
  try {
    const info = await postJSON("/api/runs", { policy: $("policy").value, budget: Number($("budget").value), mode: $("mode").value, workload: $("workload").value, delta_q: $("delta-q").value, new_pages: $("new-pages").value, warmup_units: Number($("warmup").value), oracle_history: $("oracle-history").value, signals: signalSpecs($("signals").value), params: parseParams($("params").value) });
    $("message").textContent = `Run #${info.id} queued.`;
    runs.set(info.id, { info, history: [] });
    follow(info.id);
    redraw();
  } catch (err) { showError($("message"), err); }
});

api("/api/policies").then(p => {
  $("policy").replaceChildren(...p.policies.map(n => el("option", { text: n })));
  if (!p.policies.length) { $("start").disabled = true; $("message").textContent = "This server offers no refresh policies."; }
}).catch(e => showError($("message"), e));
refresh();
setInterval(refresh, 5000);

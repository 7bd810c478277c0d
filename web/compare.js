"use strict";
const $ = id => document.getElementById(id);
// Budgets on log axes (B = 0 is a labelled reference line), shares capped at 1. Fig. 4 as paper
// 003 draws it: quality across, the budget B up (each curve still a function of B: `flip`), the
// budget needed for each quality as steps. The "gap" toggle puts the share of the staleness gap
// recovered across instead, on an axis of its nines, so the last percent is not squeezed.
const QUALITY_AXIS = { yLabel: "mean repository quality", yUnit: "a share", yNines: false };
const GAP_AXIS = { yLabel: "staleness gap recovered", yUnit: "", yNines: true };
const fig4 = new RefresherChart($("chart-fig4"), Object.assign({ xLabel: "budget B", xUnit: "per unit", xLog: true, yMax: 1, flip: true, zeroLabel: "B = 0", steps: true, height: 320 }, QUALITY_AXIS));
const freshChart = new RefresherChart($("chart-fresh"), { xLabel: "budget B", xUnit: "refreshes per unit", yLabel: "fresh@10", yUnit: "a share", xLog: true, yMax: 1, zeroLabel: "B = 0" });
let shown = null;
let timer = null;

function byPolicy(curves) {
  const groups = new Map();
  for (const c of curves) { if (!groups.has(c.policy)) groups.set(c.policy, []); groups.get(c.policy).push(c); }
  return groups;
}

function render(c) {
  $("oracle-note").hidden = !c.oracle_bound;
  $("signals-shown").textContent = (c.signals && c.signals.length) ? "signals: " + c.signals.join(", ") : "";
  shown = c;
  const groups = byPolicy(c.curves);
  drawFig4(groups);
  freshChart.setSeries([...groups].map(([name, pts]) => ({ name, points: pts.map(p => [p.budget, p.mean_fresh_at_10]) })));
  // Absolute targets ("Q ≥ 0.99") and shares of the quality lost to staleness ("90 % of gap":
  // recover 90 % of the gap between the unrefreshed repository and a perfect one).
  const key = r => r.gap_share != null ? "gap:" + r.gap_share : "q:" + r.target_quality;
  const targets = [...new Map(c.rows.map(r => [key(r), r])).values()];
  // A cell: the budget read between grid points, then its 95 % interval (as `refresher
  // compare` prints it: an end not reached on the grid is left open); the grid budget it falls
  // under is in the cell's title.
  const amount = b => b >= 10 ? String(Math.round(b)) : b.toFixed(1);
  const end = b => b == null ? "" : amount(b);
  const needed = r => !r || r.budget_needed == null ? "—"
    : amount(r.budget_interpolated) + (r.budget_interval ? ` (${end(r.budget_interval.low)}–${end(r.budget_interval.high)})` : "");
  const budgetCell = r => {
    const cell = numberCell(needed(r), r && r.budget_interval ? "budget_interval" : "budget_interpolated");
    if (r && r.budget_needed != null) cell.title += `. Smallest grid budget reaching it: ${r.budget_needed}.`;
    return cell;
  };
  for (const [id, rows] of [["fig4-table", c.rows], ["fixed-table", c.fixed_rows || []]]) {
    $(id).tHead.replaceChildren(el("tr", {}, el("th", { text: "policy" }), ...targets.map(t => el("th", {
      class: "num",
      text: t.gap_share != null ? `${Math.round(t.gap_share * 100)} % of gap` : "Q ≥ " + t.target_quality,
      title: t.gap_share != null ? `${meaning("gap_share")}: ${Math.round(t.gap_share * 100)} %, i.e. Q ≥ ${fmt(t.target_quality)}` : `${meaning("target_quality")}: Q ≥ ${t.target_quality}`,
    }))));
    const policies = [...new Set(rows.map(r => r.policy))];
    $(id).tBodies[0].replaceChildren(...policies.map(p => el("tr", {}, el("td", { text: p, title: meaning("policy") }),
      ...targets.map(t => budgetCell(rows.find(r => r.policy === p && key(r) === key(t)))))));
  }
  renderOracleRatios(c.oracle_ratios || [], amount);
  $("curves").tBodies[0].replaceChildren(...c.curves.map(p => el("tr", {}, el("td", { text: p.policy, title: meaning("policy") }), numberCell(p.budget, "budget"),
    numberCell(p.theta != null ? p.theta : "", "theta"), numberCell(fmt(p.mean_quality), "mean_quality"), numberCell(fmt(p.mean_fresh_at_10), "mean_fresh_at_10"), numberCell(fmt(p.mean_map_at_10), "mean_map_at_10"))));
  const pending = c.runs_total - c.runs_finished;
  $("message").replaceChildren(...sentence(...(c.sweep ? ["Sweep #", [c.sweep, "sweep_id"], ": "] : ["All runs: "]),
    [`${c.runs_finished}/${c.runs_total}`, "runs_finished"], " runs finished" + (pending ? " — updating…" : ".") + " “—” means no budget in the grid reached the target."));
  clearTimeout(timer);
  if (pending) timer = setTimeout(load, 2000);
}

// Online budget ÷ the full oracle's per share of the staleness gap (`oracle_ratios`, as
// `refresher compare --mode oracle,online` prints it); hidden unless both are shown.
function renderOracleRatios(ratios, amount) {
  const rows = ratios.filter(r => r.gap_share != null);
  $("oracle-ratios-section").hidden = rows.length === 0;
  const shares = [...new Set(rows.map(r => r.gap_share))];
  $("oracle-ratios").tHead.replaceChildren(el("tr", {}, el("th", { text: "online policy" }),
    ...shares.map(g => el("th", { class: "num", text: `${Math.round(g * 100)} % of gap`, title: `${meaning("gap_share")}: ${Math.round(g * 100)} %` }))));
  const policies = [...new Set(rows.map(r => r.policy))];
  $("oracle-ratios").tBodies[0].replaceChildren(...policies.map(p => el("tr", {}, el("td", { text: p, title: meaning("policy") }),
    ...shares.map(g => {
      const r = rows.find(x => x.policy === p && x.gap_share === g);
      const cell = numberCell(r && r.ratio != null ? r.ratio.toFixed(2) + "×" : "—", "oracle_ratio");
      if (r) cell.title += `. Online ${r.online_budget == null ? "—" : amount(r.online_budget)}, oracle ${r.oracle_budget == null ? "—" : amount(r.oracle_budget)} refreshes per unit.`;
      return cell;
    }))));
}

// Fig. 4 over quality, or over the share of the staleness gap recovered from Q₀ (the B = 0
// quality; without a B = 0 run there is no gap to share, and the toggle is off).
function drawFig4(groups) {
  const zero = shown.curves.find(p => p.budget === 0);
  const toggle = $("gap-axis");
  toggle.disabled = !zero || !(zero.mean_quality < 1);
  const gap = toggle.checked && !toggle.disabled;
  const q0 = zero && zero.mean_quality;
  const y = gap ? q => 1 - (1 - q) / (1 - q0) : q => q;
  if (fig4.options.yNines !== gap) fig4.setOptions(gap ? GAP_AXIS : QUALITY_AXIS);
  fig4.setSeries([...groups].map(([name, pts]) => ({ name, points: pts.map(p => [p.budget, y(p.mean_quality)]) })));
}
$("gap-axis").addEventListener("change", () => { if (shown) drawFig4(byPolicy(shown.curves)); });

// The sweeps offered in the "show" list: every id up to the newest one seen.
function offerSweeps(latest) {
  const view = $("view");
  for (let id = 1; id <= latest; id++) {
    if (![...view.options].some(o => o.value === String(id))) view.append(el("option", { value: String(id), text: `sweep #${id}` }));
  }
}

async function load() {
  const view = $("view").value;
  try {
    const c = await api("/api/compare" + (view ? "?sweep=" + encodeURIComponent(view) : ""));
    if (c.sweep) offerSweeps(c.sweep);
    render(c);
  } catch (err) { showError($("message"), err); }
}
$("view").addEventListener("change", load);

$("sweep-form").addEventListener("submit", async e => {
  e.preventDefault();
  const policies = [...document.querySelectorAll("#policies input:checked")].map(i => i.value);
  const list = id => $(id).value.split(",").map(s => s.trim()).filter(Boolean).map(Number);
  const budgets = list("budgets");
  const thetas = list("thetas");
  try {
    const r = await postJSON("/api/compare", { policies, budgets, thetas, mode: $("mode").value, delta_q: $("delta-q").value, new_pages: $("new-pages").value, warmup_units: Number($("warmup").value), oracle_history: $("oracle-history").value, signals: signalSpecs($("signals").value) });
    $("message").textContent = `Sweep #${r.sweep} queued (${r.runs.length} runs).`;
    offerSweeps(r.sweep);
    $("view").value = String(r.sweep);
    load();
  } catch (err) { showError($("message"), err); }
});

api("/api/policies").then(p => {
  $("policies").replaceChildren(...p.policies.map(n => el("label", { style: "flex-direction:row;gap:4px;color:inherit" },
    Object.assign(el("input", { type: "checkbox", value: n }), { checked: (p.default_comparison || p.policies).includes(n) }), n)));
}).catch(e => showError($("message"), e));
load();

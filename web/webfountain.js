"use strict";
// The WebFountain model page: POST /api/webfountain with an instance and a strategy, then the
// plan as a chart of obsolete pages per period and tables of crawls.
(() => {
  const $ = id => document.getElementById(id);
  const example = {
    description: "12 buckets of 1000 pages, 6 periods, capacity 2000 per period",
    periods: 6, capacity_per_period: 2000, initial_obsolete: 0, new_pages_per_period: 0,
    buckets: [0.362085, 0.09151, 0.047213, 0.024078, 0.012207, 0.008366, 0.006529, 0.005094,
      0.003974, 0.0031, 0.002418, 0.001886].map(a => ({ pages: 1000, change_probability: a })),
    expected_objective: { "1": 284.868, "2": 196.4532, "3": 232.1556 },
  };
  $("wf-instance").value = JSON.stringify(example, null, 1);
  const chart = new RefresherChart($("wf-chart"), { xLabel: "period", yLabel: "obsolete pages" });
  const num = (x, d) => Number(x).toLocaleString(undefined, { maximumFractionDigits: d });
  $("wf-form").addEventListener("submit", async event => {
    event.preventDefault();
    const message = $("wf-message");
    let instance = "paper-like";
    if ($("wf-source").value === "inline") {
      try { instance = JSON.parse($("wf-instance").value); } catch (err) {
        showError(message, new Error(`instance: not JSON (${err.message})`));
        return;
      }
    }
    const body = { instance, strategy: Number($("wf-strategy").value) };
    if ($("wf-eps").value !== "") body.eps = Number($("wf-eps").value);
    message.textContent = "solving…";
    $("wf-solve").disabled = true;
    let plan;
    try { plan = await postJSON("/api/webfountain", body); } catch (err) {
      showError(message, err);
      return;
    } finally { $("wf-solve").disabled = false; }
    message.textContent = "";
    render(plan);
  });
  function render(plan) {
    const o = plan.optimality;
    const reference = plan.expected_objective == null ? [] :
      [" — the instance's reference optimum ", [plan.expected_objective, "wf_reference"], " (relative difference ",
        [plan.relative_difference.toExponential(2), "wf_relative_difference"], ")"];
    const summary = $("wf-summary");
    summary.dataset.objective = String(plan.objective);
    summary.replaceChildren(...sentence(
      [plan.buckets, "wf_buckets"], " buckets, ", [plan.periods, "wf_periods"], " periods, strategy ", [plan.strategy, "wf_strategy"],
      ...(plan.epsilon == null ? [] : [" (ε = ", [plan.epsilon, "wf_epsilon"], ")"]), ": objective ", [num(plan.objective, 4), "wf_objective"],
      ...reference, ". Frank–Wolfe gap ", [o.fw_gap.toExponential(2), "wf_fw_gap"], " (relative ", [o.relative_gap.toExponential(2), "wf_relative_gap"],
      `, ${o.stop}), `, [o.iterations, "wf_iterations"], ` steps from the ${o.start} start, `, [o.seconds.toFixed(2), "wf_seconds"], " s."));
    chart.setSeries([{ name: `strategy ${plan.strategy}`, points: plan.obsolete_per_period.map((y, t) => [t + 1, y]) }]);
    $("wf-periods").querySelector("tbody").replaceChildren(...plan.obsolete_per_period.map((y, t) => el("tr", {},
      numberCell(t + 1, "wf_period"),
      numberCell(plan.weights[t].toFixed(4), "wf_weight"),
      numberCell(num(y, 2), "wf_obsolete"),
      numberCell(num(plan.crawls.reduce((s, c) => s + c[t], 0), 2), "wf_crawls"))));
    const head = el("tr", {}, el("th", { class: "num", text: "bucket", title: meaning("wf_bucket") }),
      ...plan.obsolete_per_period.map((_, t) => el("th", { class: "num", text: String(t + 1), title: meaning("wf_period") })));
    $("wf-crawls").querySelector("thead").replaceChildren(head);
    $("wf-crawls").querySelector("tbody").replaceChildren(...plan.crawls.map((row, i) => el("tr", {},
      numberCell(i + 1, "wf_bucket"), ...row.map(x => numberCell(num(x, 1), "wf_bucket_crawls")))));
    $("wf-result").hidden = false;
  }
})();

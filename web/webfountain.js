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
  const chart = new SvgChart($("wf-chart"), { xLabel: "period", yLabel: "obsolete pages" });
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
    const reference = plan.expected_objective == null ? "" :
      ` — the instance's reference optimum ${plan.expected_objective} (relative difference ${plan.relative_difference.toExponential(2)})`;
    const summary = $("wf-summary");
    summary.dataset.objective = String(plan.objective);
    summary.textContent = `${plan.buckets} buckets, ${plan.periods} periods, strategy ${plan.strategy}` +
      (plan.epsilon == null ? "" : ` (ε = ${plan.epsilon})`) + `: objective ${num(plan.objective, 4)}${reference}. ` +
      `Frank–Wolfe gap ${o.fw_gap.toExponential(2)} (relative ${o.relative_gap.toExponential(2)}, ${o.stop}), ` +
      `${o.iterations} steps from the ${o.start} start, ${o.seconds.toFixed(2)} s.`;
    chart.setSeries([{ name: `strategy ${plan.strategy}`, points: plan.obsolete_per_period.map((y, t) => [t + 1, y]) }]);
    $("wf-periods").querySelector("tbody").replaceChildren(...plan.obsolete_per_period.map((y, t) => el("tr", {},
      el("td", { class: "num", text: String(t + 1) }),
      el("td", { class: "num", text: plan.weights[t].toFixed(4) }),
      el("td", { class: "num", text: num(y, 2) }),
      el("td", { class: "num", text: num(plan.crawls.reduce((s, c) => s + c[t], 0), 2) }))));
    const head = el("tr", {}, el("th", { class: "num", text: "bucket" }),
      ...plan.obsolete_per_period.map((_, t) => el("th", { class: "num", text: String(t + 1) })));
    $("wf-crawls").querySelector("thead").replaceChildren(head);
    $("wf-crawls").querySelector("tbody").replaceChildren(...plan.crawls.map((row, i) => el("tr", {},
      el("td", { class: "num", text: String(i + 1) }), ...row.map(x => el("td", { class: "num", text: num(x, 1) })))));
    $("wf-result").hidden = false;
  }
})();

"use strict";
// The served engine panel of the dashboard (`serve --refresh`): the index users search
// refreshing itself, unit by unit, with the exact quality of that index at each unit.
(() => {
  const panel = document.getElementById("engine");
  if (!panel) return;
  const fmt4 = x => (x == null ? "—" : Number(x).toFixed(4));
  async function poll() {
    let e;
    try { e = await api("/api/engine"); } catch (err) { setTimeout(poll, 5000); return; }
    if (!e.enabled) return; // no engine: the panel stays hidden
    panel.hidden = false;
    document.getElementById("engine-summary").textContent =
      `${e.label}, B = ${e.budget}, one unit every ${e.unit_seconds} s — unit ${e.unit} of ${e.last_unit}` +
      `${e.finished ? " (history replayed to its end)" : ""}; ${e.refreshes} refreshes, ${e.changes_found} changes found, ` +
      `${e.not_modified} not modified, ${e.discovered} new pages, ${e.errors} errors` + (e.error ? ` — stopped: ${e.error}` : "");
    document.getElementById("engine-now").textContent =
      `quality ${fmt4(e.quality)}   fresh@10 ${fmt4(e.fresh_at_10)}   MAP@10 ${fmt4(e.map_at_10)}` +
      (e.served_queries ? ` — ${e.served_queries} served queries steer it with the log` : "");
    // A crawling engine: fetch counts and the latest errors per host.
    const hosts = Object.entries(e.hosts || {});
    document.getElementById("engine-hosts").replaceChildren(...hosts.map(([h, c]) => el("li", {
      text: `${h}: ${c.fetches} fetches, ${c.copies} copies, ${c.not_modified} not modified, ${c.gone} gone, ` +
        `${c.errors} errors, ${c.robots_disallowed} disallowed by robots.txt` +
        (c.last_errors.length ? ` — last: ${c.last_errors[c.last_errors.length - 1]}` : ""),
    })));
    const rows = e.per_unit.slice().reverse().map(u => el("tr", { "data-unit": String(u.unit) },
      el("td", { class: "num", text: String(u.unit) }),
      el("td", { class: "num", text: String(u.refreshed) }),
      el("td", { class: "num", text: String(u.changes_found) }),
      el("td", { class: "num", text: String(u.not_modified) }),
      el("td", { class: "num", text: String(u.discovered) }),
      el("td", { class: "num", text: u.estimated_delta_q.toExponential(2) }),
      el("td", { class: "num quality", text: fmt4(u.quality) }),
      el("td", { class: "num", text: fmt4(u.fresh_at_10) }),
      el("td", { class: "num", text: fmt4(u.map_at_10) })));
    document.querySelector("#engine-units tbody").replaceChildren(...rows);
    panel.dataset.unit = String(e.unit);
    if (!e.finished) setTimeout(poll, 1000);
  }
  poll();
})();

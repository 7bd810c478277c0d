"use strict";
// The served engine panel of the dashboard (`serve --policy`): the index users search
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
    document.getElementById("engine-summary").replaceChildren(...sentence(
      [e.label, "policy"], ", B = ", [e.budget, "budget"], ", one unit every ", [e.unit_seconds, "unit_seconds"], " s — unit ",
      [e.unit, "unit"], " of ", [e.last_unit, "last_unit"], `${e.finished ? " (history replayed to its end)" : ""}; `,
      [e.refreshes, "refreshes"], " refreshes, ", [e.changes_found, "changes_found"], " changes found, ",
      [e.not_modified, "not_modified"], " not modified, ", [e.discovered, "discovered"], " new pages, ",
      [e.errors, "errors"], " errors", e.error ? ` — stopped: ${e.error}` : ""));
    document.getElementById("engine-now").replaceChildren(...sentence(
      termSpan("quality", "quality"), " ", [fmt4(e.quality), "quality"], "   ", termSpan("fresh@10", "fresh_at_10"), " ",
      [fmt4(e.fresh_at_10), "fresh_at_10"], "   ", termSpan("MAP@10", "map_at_10"), " ", [fmt4(e.map_at_10), "map_at_10"],
      ...(e.served_queries ? [" — ", [e.served_queries, "served_queries"], " served queries steer it with the log"] : [])));
    // A crawling engine: fetch counts and the latest errors per host.
    const hosts = Object.entries(e.hosts || {});
    document.getElementById("engine-hosts").replaceChildren(...hosts.map(([h, c]) => el("li", {}, ...sentence(
      `${h}: `, [c.fetches, "fetches"], " fetches, ", [c.copies, "copies"], " copies, ", [c.not_modified, "not_modified"],
      " not modified, ", [c.gone, "gone"], " gone, ", [c.errors, "host_errors"], " errors, ",
      [c.robots_disallowed, "robots_disallowed"], " disallowed by robots.txt",
      c.last_errors.length ? ` — last: ${c.last_errors[c.last_errors.length - 1]}` : ""))));
    const rows = e.per_unit.slice().reverse().map(u => el("tr", { "data-unit": String(u.unit) },
      numberCell(u.unit, "unit"),
      numberCell(u.refreshed, "refreshed"),
      numberCell(u.changes_found, "changes_found"),
      numberCell(u.not_modified, "not_modified"),
      numberCell(u.discovered, "discovered"),
      numberCell(u.estimated_delta_q.toExponential(2), "estimated_delta_q"),
      numberCell(fmt4(u.quality), "quality", "quality"),
      numberCell(fmt4(u.fresh_at_10), "fresh_at_10"),
      numberCell(fmt4(u.map_at_10), "map_at_10")));
    document.querySelector("#engine-units tbody").replaceChildren(...rows);
    panel.dataset.unit = String(e.unit);
    if (!e.finished) setTimeout(poll, 1000);
  }
  poll();
})();

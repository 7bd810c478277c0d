"use strict";
const state = { q: "", offset: 0, limit: 10 };
const $ = id => document.getElementById(id);

async function runSearch() {
  const params = new URLSearchParams({ q: state.q, offset: state.offset, limit: state.limit });
  history.replaceState(null, "", "/?" + params);
  try {
    const r = await api("/api/search?" + params);
    render(r);
  } catch (err) {
    $("results").replaceChildren();
    $("pager").hidden = true;
    showError($("summary"), err);
  }
}

function render(r) {
  const first = r.total_hits ? r.offset + 1 : 0;
  const last = r.offset + r.results.length;
  // A page past the end (an old link, or results that shrank): say so and offer the way back.
  const past = !r.results.length && r.total_hits > 0;
  const pages = Math.max(1, Math.ceil(r.total_hits / r.limit));
  // The query and the server's notes are the user's words, not numbers: a titled span each.
  const query = el("span", { class: "query", text: `“${r.query}”`, title: "your query, as the server read it" });
  $("summary").replaceChildren(...sentence(
    ...(past
      ? ["no results on this page: ", query, " has ", [r.total_hits, "total_hits"], " result(s), the last on page ", [pages, "pages"], "; "]
      : [[r.total_hits, "total_hits"], " result(s) for ", query, " — showing ", [`${first}–${last}`, "shown_range"], ", "]),
    [r.took_ms.toFixed(1), "took_ms"], " ms; copies from unit ", [r.served_unit, "served_unit"],
    ", stale markers against unit ", [r.live_unit, "live_unit"],
    ...(r.notes && r.notes.length ? [" — note: ", el("span", { class: "notes", text: r.notes.join("; "), title: "what the server changed in the query" })] : [])));
  const items = r.results.map(hit => {
    // Only http(s) targets become links (a `javascript:` URI in a WARC must not be clickable).
    const linkable = /^https?:\/\//i.test(hit.url);
    const title = linkable
      ? el("a", { class: "result-title", href: hit.url, rel: "noopener noreferrer", text: hit.title || hit.url })
      : el("span", { class: "result-title", text: hit.title || hit.url });
    const badge = el("span", { class: "badge " + (hit.stale ? "stale" : "fresh"), text: hit.stale ? "stale" : "fresh" });
    const snippet = el("div", { class: "snippet" });
    snippet.innerHTML = hit.snippet; // server-escaped; only <b> marks
    return el("li", { class: "result", "data-stale": hit.stale },
      el("div", {}, el("span", { class: "rank note", text: hit.rank + ". ", title: meaning("rank") }), title, badge),
      el("div", { class: "result-url", text: hit.url }), snippet,
      el("div", { class: "score" }, "score ", numberSpan(hit.score.toFixed(3), "score")));
  });
  $("results").replaceChildren(...items);
  $("pager").hidden = r.total_hits <= r.limit && !past;
  $("prev").disabled = r.offset === 0;
  $("next").disabled = last >= r.total_hits;
  $("page-info").replaceChildren(...sentence("page ", [Math.floor(r.offset / r.limit) + 1, "page"], " of ", [pages, "pages"]));
}

$("search-form").addEventListener("submit", e => {
  e.preventDefault();
  state.q = $("q").value.trim();
  state.limit = Number($("limit").value);
  state.offset = 0;
  if (state.q) runSearch();
});
$("prev").addEventListener("click", () => { state.offset = Math.max(0, state.offset - state.limit); runSearch(); });
$("next").addEventListener("click", () => { state.offset += state.limit; runSearch(); });

const initial = new URLSearchParams(location.search);
if (initial.get("q")) {
  state.q = initial.get("q");
  state.offset = Number(initial.get("offset") || 0);
  state.limit = Number(initial.get("limit") || 10);
  $("q").value = state.q;
  $("limit").value = String(state.limit);
  runSearch();
}

// What each number on the pages means, shown as its hover title (issue 14). Defined once here:
// pages build number elements with `numberCell`/`numberSpan`, and static headers name their
// meaning with `data-meaning="key"` (filled in by `explainStatic`).
"use strict";
const MEANINGS = {
  // Runs and sweeps
  run_id: "Run number, in the order runs were started on this server",
  budget: "Refresh budget B: pages the policy may refresh per time unit (B = 0: the repository is never refreshed)",
  sweep_id: "Sweep number, in the order comparisons were started on this server",
  runs_finished: "Runs of this view finished / runs in it",
  units_done: "Time units simulated so far / time units in the run",
  theta: "The SBR/EBR shingle threshold θ that gave the best mean quality at this budget (paper 003: the best of the thresholds tried is plotted)",
  budget_interpolated: "The budget B at which the policy's curve first reaches this target, read between grid points: log-linear in B between the last grid budget below the target and the first reaching it (linear from B = 0; — : no grid budget did)",
  budget_interval: "The budget B at which the policy's curve first reaches this target, read between grid points (log-linear in B; — : no grid budget did); in brackets its 95 % interval: the same budget read under each of 200 resamples of the workload's query submissions, from the same runs (an open end: not reached on the grid)",
  budget_needed: "The smallest budget B in the sweep's grid whose mean repository quality reaches this target (— : no budget in the grid reached it)",
  target_quality: "Target mean repository quality",
  oracle_ratio: "The online policy's budget for this target over the budget oracle user-centric (told the whole history: a bound no crawler reaches) needs for it, both read between grid points at parameters fixed before the run; — : either not reached",
  gap_share: "Target as a share of the quality lost to staleness: the unrefreshed repository's quality plus this share of the gap to a perfect (1.0) repository",
  policy: "The refresh policy and its parameters",
  // Quality measures
  quality: "Repository quality Q(W_L) (paper 003, Eq. 5): how well the repository's search results match those the live Web would give for the workload's queries; 1 = identical",
  quality_now: "Repository quality Q(W_L) at the latest simulated unit (paper 003, Eq. 5)",
  mean_quality: "Repository quality Q(W_L) averaged over the run's units (paper 003, Eq. 5)",
  fresh_at_10: "Top-10 freshness (paper 000, Formula 8): share of the top 10 results whose repository copy equals the live page",
  mean_fresh_at_10: "Top-10 freshness averaged over the run's units (paper 000, Formula 8)",
  map_at_10: "MAP@10 (paper 000, Formula 9): mean average precision of the repository's top 10, taking the live Web's top 10 as relevant",
  mean_map_at_10: "MAP@10 averaged over the run's units (paper 000, Formula 9)",
  // Served engine
  unit: "Time unit of the live Web's history",
  last_unit: "Last time unit of the corpus's history",
  unit_seconds: "Wall-clock seconds per time unit",
  refreshes: "Pages refreshed so far",
  refreshed: "Pages refreshed in this unit",
  changes_found: "Refreshes that found the page changed since the repository's copy",
  not_modified: "Refreshes that found the page unchanged (HTTP 304 or identical content)",
  discovered: "Pages new to the repository (found in a sitemap or by links), crawled outside the budget",
  errors: "Fetches that failed",
  estimated_delta_q: "The policy's estimated change of repository quality ΔQ from this unit's refreshes (paper 003, Section 5)",
  served_queries: "Queries this server answered; they steer the refresh policy together with the log",
  fetches: "Requests to this host answered (any status), retries included",
  copies: "Fetches from this host that brought a new copy (200 with a body other than the held one)",
  gone: "Fetches from this host answered 404/410 or not HTML: the page left the repository",
  robots_disallowed: "Fetches of this host not sent because robots.txt forbids them",
  host_errors: "Fetches from this host that failed after retries (unreachable, timeout, too long, bad status)",
  // Search
  total_hits: "Documents in the repository that match the query",
  shown_range: "Positions of the results on this page among all matches",
  took_ms: "Milliseconds the server took to answer the query",
  served_unit: "Time unit of the repository copies being searched",
  live_unit: "Time unit of the live Web the stale markers compare against",
  rank: "Position of the result in the ranking",
  score: "The result's ranking score over the repository copy (the server's scoring, BM25 unless configured otherwise; higher ranks first)",
  page: "Number of this result page",
  pages: "Result pages in all, at the chosen results per page",
  // WebFountain (paper 004)
  wf_buckets: "Change-rate buckets of the instance (pages grouped by change probability)",
  wf_periods: "Periods of the crawl cycle",
  wf_strategy: "Paper 004's strategy: 1 weighs every period alike, 2 only the cycle's last period, 3 mostly the last (ε elsewhere)",
  wf_epsilon: "Strategy 3's weight of every period but the last",
  wf_objective: "The minimised objective: weighted sum over periods of the expected obsolete pages (paper 004, Section 4)",
  wf_reference: "The optimum the instance states (expected_objective) for this strategy",
  wf_relative_difference: "Relative difference between the solved objective and the instance's reference optimum",
  wf_fw_gap: "Frank–Wolfe duality gap: an upper bound on how far the objective is above the optimum",
  wf_relative_gap: "The Frank–Wolfe gap divided by the objective",
  wf_iterations: "Frank–Wolfe steps taken from the best start",
  wf_seconds: "Wall-clock seconds the solve took",
  wf_period: "Period of the crawl cycle",
  wf_weight: "The strategy's weight of this period in the objective",
  wf_obsolete: "Expected obsolete pages (copies older than the live page) at the end of this period",
  wf_crawls: "Pages crawled in this period, over all buckets",
  wf_bucket: "Change-rate bucket (numbered as in the instance)",
  wf_bucket_crawls: "Pages of this bucket crawled in this period",
};

function meaning(key) {
  const m = MEANINGS[key];
  if (!m) throw new Error(`meanings.js: no meaning for "${key}"`);
  return m;
}

// A table cell showing a number, explained on hover.
function numberCell(text, key, cls) {
  return el("td", { class: "num" + (cls ? " " + cls : ""), text: String(text), title: meaning(key) });
}

// A number inside a sentence, explained on hover.
function numberSpan(text, key) {
  return el("span", { class: "n", text: String(text), title: meaning(key) });
}

// A measure's name inside a sentence (e.g. "MAP@10"), explained on hover.
function termSpan(text, key) {
  return el("span", { class: "term", text, title: meaning(key) });
}

// A sentence of text and numbers: parts are strings, elements or [text, key] pairs.
function sentence(...parts) {
  return parts.map(p => (Array.isArray(p) ? numberSpan(p[0], p[1]) : p));
}

// Static elements (table headers) naming their meaning with data-meaning.
function explainStatic(root) {
  for (const node of (root || document).querySelectorAll("[data-meaning]")) node.title = meaning(node.dataset.meaning);
}
document.addEventListener("DOMContentLoaded", () => explainStatic());

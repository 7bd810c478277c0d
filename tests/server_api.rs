//! API tests over a real server on loopback: search and paging against the library, error
//! bodies, the run lifecycle and its server-sent events, comparison sweeps, replay and
//! `/metrics`.

mod server_support;

use std::time::{Duration, Instant};

use hyper::{Method, StatusCode};
use refresher::client::http::{encode, HttpClient};
use refresher::client::replay::{replay, ReplayOptions, ReplayQuery};
use refresher::corpus::{LiveWeb, PageId};
use serde_json::{json, Value};

use server_support::{start, TestServer};

/// A workload term with more matches than `min_hits` in the served repository.
fn busy_query(server: &TestServer, min_hits: usize) -> String {
    let repo = server.state.search.repo().expect("one repository");
    let env = server
        .state
        .runs
        .environments
        .get(
            repo.scoring(),
            refresher::server::WorkloadSource::Log,
            refresher::quality::measure::DeltaQMethod::Estimate,
        )
        .unwrap();
    let mut best: Option<(usize, String)> = None;
    for (&term, _) in env.workload.term_frequency.iter() {
        let text = repo.vocabulary().term(term).to_string();
        let hits = repo.search(&text, 0, 1).unwrap().total_hits;
        if hits > min_hits
            && best
                .as_ref()
                .is_none_or(|(h, t)| hits > *h || (hits == *h && text < *t))
        {
            best = Some((hits, text));
        }
    }
    best.expect("a workload term with enough hits").1
}

/// Parses a server-sent-events body into `(event, data)` pairs.
fn sse_events(body: &[u8]) -> Vec<(String, String)> {
    let text = String::from_utf8_lossy(body);
    let mut out = Vec::new();
    for block in text.split("\n\n") {
        let mut event = String::new();
        let mut data = String::new();
        for line in block.lines() {
            if let Some(e) = line.strip_prefix("event: ") {
                event = e.to_string();
            } else if let Some(d) = line.strip_prefix("data: ") {
                data.push_str(d);
            }
        }
        if !event.is_empty() {
            out.push((event, data));
        }
    }
    out
}

async fn wait_for_status(client: &mut HttpClient, id: u64, done: &[&str]) -> Value {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let (status, body) = client.get_json(&format!("/api/runs/{id}")).await.unwrap();
        assert_eq!(status, StatusCode::OK);
        if done.contains(&body["run"]["status"].as_str().unwrap()) {
            return body;
        }
        assert!(Instant::now() < deadline, "run {id} did not finish: {body}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Starts a run with `request`, checks that it was accepted and returns its state once done.
async fn run_to_done(client: &mut HttpClient, request: &Value) -> Value {
    let (status, run) = client
        .send_json(Method::POST, "/api/runs", request)
        .await
        .unwrap();
    assert_eq!(status, StatusCode::ACCEPTED, "{run}");
    let body = wait_for_status(client, run["id"].as_u64().unwrap(), &["done"]).await;
    body["run"].clone()
}

/// Whether the copy of `page` held at unit `served` is out of date at unit `live`, computed
/// from the page's captures alone (not with the library's `is_fresh` or `page_at`, which the
/// server's marker uses): the last capture at or before each unit, compared by what it shows —
/// present or gone, and its content hash, title and text. Ingest keeps no capture that repeats
/// the previous one, so a different capture is different content.
fn stale_by_content(
    corpus: &refresher::corpus::Corpus,
    page: PageId,
    served: u32,
    live: u32,
) -> bool {
    let shown = |unit: u32| {
        corpus
            .timeline(page)
            .versions
            .iter()
            .rev()
            .find(|v| v.unit <= unit)
            .filter(|v| (200..300).contains(&v.status))
            .map(|v| (v.content_hash, v.title.as_str(), v.text.as_str()))
    };
    shown(served) != shown(live)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_ranks_pages_and_marks_stale_copies_like_the_library() {
    let server = start(150, 8, Duration::ZERO).await;
    let q = busy_query(&server, 12);
    let mut client = HttpClient::new(&server.url()).unwrap();

    let (status, whole) = client
        .get_json(&format!("/api/search?q={}&limit=12", encode(&q)))
        .await
        .unwrap();
    assert_eq!(status, StatusCode::OK, "{whole}");
    let total = whole["total_hits"].as_u64().unwrap() as usize;
    let expected = server
        .state
        .search
        .repo()
        .unwrap()
        .search(&q, 0, 12)
        .unwrap();
    assert_eq!(total, expected.total_hits);
    let results = whole["results"].as_array().unwrap();
    assert_eq!(results.len(), 12);
    let last_unit = server.corpus.units() - 1;
    let mut stale_seen = 0;
    for (i, (r, hit)) in results.iter().zip(&expected.hits).enumerate() {
        assert_eq!(r["rank"], i + 1);
        assert_eq!(r["url"], hit.url.as_str());
        assert!((r["score"].as_f64().unwrap() - f64::from(hit.score)).abs() < 1e-4);
        // Stale exactly when the live version at the last unit is not the unit-0 copy.
        let page: PageId = hit.page;
        let held = server.corpus.page_at(page, 0).present().map(|v| v.unit);
        let live = server
            .corpus
            .page_at(page, last_unit)
            .present()
            .map(|v| v.unit);
        assert_eq!(r["stale"].as_bool().unwrap(), held != live, "{r}");
        // The same by content, computed from the captures themselves.
        assert_eq!(
            r["stale"].as_bool().unwrap(),
            stale_by_content(&server.corpus, page, 0, last_unit),
            "{r}"
        );
        stale_seen += usize::from(held != live);
        let snippet = r["snippet"].as_str().unwrap();
        assert!(snippet.contains("<b>"), "no highlighted term in {snippet}");
        assert!(!snippet.replace("<b>", "").replace("</b>", "").contains('<'));
        assert_eq!(
            r["title"].as_str().unwrap(),
            server.corpus.page_at(page, 0).present().unwrap().title
        );
    }
    assert!(whole["took_ms"].as_f64().unwrap() >= 0.0);
    assert_eq!(whole["live_unit"], last_unit);
    eprintln!("{stale_seen} of 12 results stale");
    // Both markers occur, so neither side of the comparison is vacuous.
    assert!(
        stale_seen > 0 && stale_seen < 12,
        "{stale_seen} of 12 results stale"
    );

    // Pages of 5 tile the list of 12.
    let mut paged = Vec::new();
    for offset in [0, 5, 10] {
        let (status, page) = client
            .get_json(&format!(
                "/api/search?q={}&limit=5&offset={offset}",
                encode(&q)
            ))
            .await
            .unwrap();
        assert_eq!(status, StatusCode::OK);
        assert_eq!(page["total_hits"].as_u64().unwrap() as usize, total);
        paged.extend(page["results"].as_array().unwrap().iter().cloned());
    }
    let urls = |v: &[Value]| v.iter().map(|r| r["url"].clone()).collect::<Vec<_>>();
    assert_eq!(urls(&paged[..12]), urls(results));

    // Beyond the end: an empty page, not an error. Unknown words: zero hits.
    let (status, beyond) = client
        .get_json(&format!("/api/search?q={}&offset={total}", encode(&q)))
        .await
        .unwrap();
    assert_eq!(status, StatusCode::OK);
    assert!(beyond["results"].as_array().unwrap().is_empty());
    let (_, none) = client
        .get_json("/api/search?q=zzqqxxnotaword")
        .await
        .unwrap();
    assert_eq!(none["total_hits"], 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_queries_are_truncated_and_operators_are_read_as_words() {
    let server = start(60, 4, Duration::ZERO).await;
    let q = busy_query(&server, 2);
    let mut c = HttpClient::new(&server.url()).unwrap();
    // 41 distinct terms (a real log's long query): answered, cut to the first 32, said so.
    let long: String = std::iter::once(q.clone())
        .chain((0..40).map(|i| format!("zzw{i}")))
        .collect::<Vec<_>>()
        .join(" ");
    let (status, r) = c
        .get_json(&format!("/api/search?q={}", encode(&long)))
        .await
        .unwrap();
    assert_eq!(status, StatusCode::OK, "{r}");
    assert_eq!(r["truncated"], true);
    assert_eq!(r["terms"].as_array().unwrap().len(), 32);
    assert_eq!(r["terms"][0], q.as_str());
    let dropped = r["dropped_terms"].as_array().unwrap();
    assert_eq!(dropped.len(), 9);
    assert_eq!(dropped[0], "zzw31");
    assert!(r["notes"][0].as_str().unwrap().contains("first 32"), "{r}");
    assert!(!r["notes"][0].as_str().unwrap().contains("  "), "{r}");
    // A short query is not truncated and has no notes.
    let (_, plain) = c
        .get_json(&format!("/api/search?q={}", encode(&q)))
        .await
        .unwrap();
    assert_eq!(plain["truncated"], false);
    assert!(plain["notes"].as_array().unwrap().is_empty());
    assert!(plain["total_hits"].as_u64().unwrap() > 2);
    // `-word` and `"word"` are the word itself, and the response says how it was read.
    for (text, note) in [(format!("-{q}"), "`-`"), (format!("\"{q}\""), "quotes")] {
        let (status, r) = c
            .get_json(&format!("/api/search?q={}", encode(&text)))
            .await
            .unwrap();
        assert_eq!(status, StatusCode::OK);
        assert_eq!(r["total_hits"], plain["total_hits"], "{text}");
        assert_eq!(r["terms"], plain["terms"]);
        assert!(r["notes"][0].as_str().unwrap().contains(note), "{r}");
        assert!(!r["notes"][0].as_str().unwrap().contains("  "), "{r}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_get_json_errors_with_4xx_codes() {
    let server = start(60, 4, Duration::ZERO).await;
    let mut c = HttpClient::new(&server.url()).unwrap();
    let long = "a".repeat(3000);
    let cases: Vec<(&str, String, StatusCode)> = vec![
        ("GET", "/api/search".into(), StatusCode::BAD_REQUEST),
        (
            "GET",
            "/api/search?q=%20%20".into(),
            StatusCode::BAD_REQUEST,
        ),
        (
            "GET",
            format!("/api/search?q={long}"),
            StatusCode::BAD_REQUEST,
        ),
        (
            "GET",
            "/api/search?q=a&limit=0".into(),
            StatusCode::BAD_REQUEST,
        ),
        (
            "GET",
            "/api/search?q=a&limit=101".into(),
            StatusCode::BAD_REQUEST,
        ),
        (
            "GET",
            "/api/search?q=a&limit=abc".into(),
            StatusCode::BAD_REQUEST,
        ),
        (
            "GET",
            "/api/search?q=a&offset=-1".into(),
            StatusCode::BAD_REQUEST,
        ),
        (
            "GET",
            "/api/search?q=a&offset=20000".into(),
            StatusCode::BAD_REQUEST,
        ),
        ("GET", "/api/nothing-here".into(), StatusCode::NOT_FOUND),
        ("GET", "/static/nope.js".into(), StatusCode::NOT_FOUND),
        ("GET", "/api/runs/999".into(), StatusCode::NOT_FOUND),
        ("GET", "/api/runs/abc".into(), StatusCode::BAD_REQUEST),
        ("POST", "/api/runs/999/cancel".into(), StatusCode::NOT_FOUND),
        ("GET", "/api/compare?sweep=7".into(), StatusCode::NOT_FOUND),
    ];
    for (method, path, expected) in cases {
        let method = Method::from_bytes(method.as_bytes()).unwrap();
        let (status, body) = c.send(method, &path, None).await.unwrap();
        assert_eq!(
            status,
            expected,
            "{path}: {}",
            String::from_utf8_lossy(&body)
        );
        let v: Value = serde_json::from_slice(&body).expect("a JSON error body");
        assert!(
            v["error"]["code"].is_string() && v["error"]["message"].is_string(),
            "{v}"
        );
    }
    let bodies = [
        (
            json!({"policy": "no-such-policy", "budget": 1}),
            "unknown policy",
        ),
        (
            json!({"policy": "round-robin", "budget": 1_000_000}),
            "exceeds",
        ),
        (json!({"policy": "round-robin"}), "budget"),
        (
            json!({"policy": "round-robin", "budget": 1, "mode": "sideways"}),
            "mode",
        ),
        (
            json!({"policy": "round-robin", "budget": 1, "colour": "red"}),
            "colour",
        ),
        (
            json!({"policy": "round-robin", "budget": 1, "theta": 0.3}),
            "has no parameter `theta` (it takes none)",
        ),
        (
            json!({"policy": "user-centric", "budget": 1, "params": {"estimator": "best"}}),
            "expected one of: mean-of-ratios, pooled, viewed",
        ),
        (
            json!({"policy": "sbr", "budget": 1, "theta": 0.2, "params": {"theta": 0.3}}),
            "give θ once",
        ),
        (
            json!({"policy": "sbr", "budget": 1, "theta": 1.5}),
            "outside [0, 1]",
        ),
        (
            json!({"policies": ["round-robin"], "budgets": []}),
            "budgets",
        ),
        (
            json!({"policies": ["sbr"], "budgets": [1], "thetas": [0.5, -0.1]}),
            "thetas",
        ),
        (
            json!({"policies": ["sbr", "ebr"], "budgets": (0..20).collect::<Vec<_>>(), "thetas": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]}),
            "at most",
        ),
        (
            json!({"policies": ["age"], "budgets": [1], "sweep": {"window": [1, 2]}}),
            "no parameter `window`",
        ),
    ];
    for (i, (body, needle)) in bodies.iter().enumerate() {
        let path = if i < 9 { "/api/runs" } else { "/api/compare" };
        let (status, v) = c.send_json(Method::POST, path, body).await.unwrap();
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {v}");
        assert_eq!(v["error"]["code"], "bad_parameter");
        assert!(
            v["error"]["message"].as_str().unwrap().contains(needle),
            "{v}"
        );
    }
    // Not JSON at all.
    let (status, body) = c.send(Method::POST, "/api/runs", None).await.unwrap();
    assert_eq!(
        status,
        StatusCode::BAD_REQUEST,
        "{}",
        String::from_utf8_lossy(&body)
    );
    // Wrong JSON types: the message says what JSON was expected, never a Rust type name.
    let wrong_types = [
        json!({"policy": "age", "budget": "many"}),
        json!({"policy": "age", "budget": -3}),
        json!({"policy": "age", "budget": 1.5}),
        json!([1, 2]),
        json!({"policies": "sbr", "budgets": [1]}),
    ];
    for (i, body) in wrong_types.iter().enumerate() {
        let path = if i < 4 { "/api/runs" } else { "/api/compare" };
        let (status, v) = c.send_json(Method::POST, path, body).await.unwrap();
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {v}");
        let message = v["error"]["message"].as_str().unwrap();
        for rust in [
            "u64",
            "usize",
            "u32",
            "f64",
            "i64",
            "struct ",
            "RunSpec",
            "SweepSpec",
            "Vec<",
            "deserialize",
        ] {
            assert!(!message.contains(rust), "{body}: {message}");
        }
    }
    let (status, v) = c.get_json("/api/search?q=a&limit=abc").await.unwrap();
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        !v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("deserialize"),
        "{v}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_streams_every_unit_once_then_ends_and_can_be_cancelled() {
    let server = start(80, 8, Duration::from_millis(60)).await;
    let mut c = HttpClient::new(&server.url()).unwrap();
    let units_total = (server.corpus.units() - 1) as usize;

    // Subscribe right after starting: the backlog and the live tail together give every unit.
    let (status, run) = c
        .send_json(
            Method::POST,
            "/api/runs",
            &json!({"policy": "test-slow", "budget": 8, "mode": "online"}),
        )
        .await
        .unwrap();
    assert_eq!(status, StatusCode::ACCEPTED, "{run}");
    let id = run["id"].as_u64().unwrap();
    assert_eq!(run["status"], "queued");
    tokio::time::sleep(Duration::from_millis(150)).await;
    let (status, body) = c.get(&format!("/api/runs/{id}/events")).await.unwrap();
    assert_eq!(status, StatusCode::OK);
    let events = sse_events(&body);
    let units: Vec<Value> = events
        .iter()
        .filter(|(e, _)| e == "unit")
        .map(|(_, d)| serde_json::from_str(d).unwrap())
        .collect();
    assert_eq!(units.len(), units_total);
    for (i, u) in units.iter().enumerate() {
        assert_eq!(u["unit"], i + 1);
        assert_eq!(u["refreshed"], 8);
    }
    let (last_event, last_data) = events.last().unwrap();
    assert_eq!(last_event, "end");
    let end: Value = serde_json::from_str(last_data).unwrap();
    assert_eq!(end["status"], "done");
    assert_eq!(end["units_done"], units_total);

    // The stored history equals the stream; a finished run cannot be cancelled.
    let stored = wait_for_status(&mut c, id, &["done"]).await;
    assert_eq!(stored["history"].as_array().unwrap(), &units);
    let (status, _) = c
        .send(Method::POST, &format!("/api/runs/{id}/cancel"), None)
        .await
        .unwrap();
    assert_eq!(status, StatusCode::CONFLICT);
    // Replaying the events of a finished run gives the same units and the end.
    let (_, again) = c.get(&format!("/api/runs/{id}/events")).await.unwrap();
    assert_eq!(sse_events(&again), events);

    // Cancel a run midway: it stops after its current unit.
    let (_, slow) = c
        .send_json(
            Method::POST,
            "/api/runs",
            &json!({"policy": "test-slow", "budget": 2}),
        )
        .await
        .unwrap();
    let slow_id = slow["id"].as_u64().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (_, v) = c.get_json(&format!("/api/runs/{slow_id}")).await.unwrap();
        if v["run"]["units_done"].as_u64().unwrap() >= 1 {
            break;
        }
        assert!(Instant::now() < deadline);
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let (status, _) = c
        .send(Method::DELETE, &format!("/api/runs/{slow_id}"), None)
        .await
        .unwrap();
    assert_eq!(status, StatusCode::OK);
    let cancelled = wait_for_status(&mut c, slow_id, &["cancelled", "done"]).await;
    assert_eq!(cancelled["run"]["status"], "cancelled");
    let done = cancelled["run"]["units_done"].as_u64().unwrap() as usize;
    assert!(done >= 1 && done < units_total, "{done} of {units_total}");
    let (_, tail) = c.get(&format!("/api/runs/{slow_id}/events")).await.unwrap();
    let tail = sse_events(&tail);
    assert_eq!(tail.len(), done + 1);
    assert!(tail.last().unwrap().1.contains("\"cancelled\""));

    // Both runs are listed, and /api/quality carries their histories.
    let (_, list) = c.get_json("/api/runs").await.unwrap();
    assert_eq!(list.as_array().unwrap().len(), 2);
    let (_, quality) = c.get_json("/api/quality").await.unwrap();
    assert_eq!(quality["runs"].as_array().unwrap().len(), 2);
    assert_eq!(
        quality["serving"].as_array().unwrap().len(),
        server.corpus.units() as usize
    );
    let q0 = quality["serving"][0]["quality"].as_f64().unwrap();
    assert!(
        (q0 - 1.0).abs() < 1e-9,
        "the served repository is in sync at its own unit: {q0}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sweep_fills_the_fig4_table_and_replayed_queries_feed_the_live_workload() {
    let server = start(80, 6, Duration::ZERO).await;
    let mut c = HttpClient::new(&server.url()).unwrap();
    let all = server.corpus.page_count();
    let (status, sweep) = c
        .send_json(
            Method::POST,
            "/api/compare",
            &json!({"policies": ["round-robin", "user-centric"], "budgets": [0, 4, all]}),
        )
        .await
        .unwrap();
    assert_eq!(status, StatusCode::ACCEPTED, "{sweep}");
    assert_eq!(sweep["runs"].as_array().unwrap().len(), 6);
    let deadline = Instant::now() + Duration::from_secs(300);
    let comparison = loop {
        let (status, v) = c.get_json("/api/compare").await.unwrap();
        assert_eq!(status, StatusCode::OK);
        if v["runs_finished"] == 6 {
            break v;
        }
        assert!(Instant::now() < deadline, "{v}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let curves = comparison["curves"].as_array().unwrap();
    assert_eq!(curves.len(), 6);
    // The sweep ran in the default oracle mode: the page is told to label it a bound.
    assert_eq!(comparison["oracle_bound"], true, "{comparison}");
    let rows = comparison["rows"].as_array().unwrap();
    // Six absolute targets and five shares of the staleness gap, per policy.
    assert_eq!(rows.len(), 2 * (6 + 5));
    for row in rows {
        // budget_needed is the smallest grid budget whose curve point reaches the target.
        let policy = row["policy"].as_str().unwrap();
        let target = row["target_quality"].as_f64().unwrap();
        let expect = curves
            .iter()
            .filter(|p| p["policy"] == policy && p["mean_quality"].as_f64().unwrap() >= target)
            .map(|p| p["budget"].as_u64().unwrap())
            .min();
        assert_eq!(row["budget_needed"].as_u64(), expect, "{row}");
        // Read between grid points, it is at most the grid budget (and above the one before).
        match (
            row["budget_needed"].as_u64(),
            row["budget_interpolated"].as_f64(),
        ) {
            (Some(grid), Some(between)) => assert!(between <= grid as f64 + 1e-9, "{row}"),
            (None, None) => {}
            other => panic!("{other:?}: {row}"),
        }
    }
    // No parameter swept: every run is at parameters fixed before the run.
    assert_eq!(comparison["fixed_rows"], comparison["rows"]);
    the_intervals_are_the_command_lines(&server, &comparison, all);
    // Refreshing every page every unit keeps the repository in sync.
    for p in curves.iter().filter(|p| p["budget"] == all) {
        assert!(
            (p["mean_quality"].as_f64().unwrap() - 1.0).abs() < 1e-9,
            "{p}"
        );
    }

    // Replay part of the log; every query is answered and counted into the live workload.
    let queries = ReplayQuery::from_submissions(&server.log.submissions);
    let queries: Vec<ReplayQuery> = queries.into_iter().take(300).collect();
    let before = server.state.live.submissions();
    let report = replay(
        &server.url(),
        std::sync::Arc::new(queries),
        &ReplayOptions {
            concurrency: 4,
            speed: None,
            limit: 10,
            ..ReplayOptions::default()
        },
        std::sync::Arc::new(|| {}),
    )
    .await
    .unwrap();
    assert_eq!(report.queries, 300);
    assert_eq!(report.errors, 0, "{:?}", report.error_samples);
    assert!(report.p50_ms > 0.0 && report.p99_ms >= report.p50_ms && report.qps > 0.0);
    assert_eq!(server.state.live.submissions() - before, 300);

    // A run over log + served queries uses the merged workload.
    let (status, run) = c
        .send_json(
            Method::POST,
            "/api/runs",
            &json!({"policy": "user-centric", "budget": 4, "workload": "log+live"}),
        )
        .await
        .unwrap();
    assert_eq!(status, StatusCode::ACCEPTED, "{run}");
    let done = wait_for_status(&mut c, run["id"].as_u64().unwrap(), &["done", "failed"]).await;
    assert_eq!(done["run"]["status"], "done", "{done}");
    assert_eq!(done["run"]["workload"], "log+live");
}

/// With a `B = 0` run in the sweep, every row of `comparison` (round-robin and user-centric at
/// budgets 0, 4 and `all`) carries its 95 % interval, ordered where both ends are reached; and
/// `refresher compare` over the same site and log (the server's workload: the whole log, no
/// relevance filter) reads the same budgets and intervals: the same runs judged under the same
/// resamples.
fn the_intervals_are_the_command_lines(server: &TestServer, comparison: &Value, all: usize) {
    let rows = comparison["rows"].as_array().unwrap();
    let mut spread = 0;
    for row in rows {
        let interval = &row["budget_interval"];
        assert!(interval.is_object(), "no interval: {row}");
        let (low, high) = (interval["low"].as_f64(), interval["high"].as_f64());
        if let (Some(low), Some(high)) = (low, high) {
            assert!(low <= high, "{row}");
            spread += usize::from(low < high);
        }
        // An end not reached is the upper one (or both).
        assert!(low.is_some() || high.is_none(), "{row}");
    }
    assert!(spread > 0, "every interval a single point: {rows:?}");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_refresher"))
        .args(["compare", "--corpus"])
        .arg(&server.corpus_dir)
        .arg("--log")
        .arg(&server.query_log)
        .args(["--filter", "none", "--policies", "round-robin,user-centric"])
        .args([
            "--budgets",
            &format!("0,4,{all}"),
            "--mode",
            "oracle",
            "--json",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "refresher compare: {stderr}");
    let cli: Value = serde_json::from_slice(&output.stdout).unwrap();
    let cli_rows = cli["rows"].as_array().unwrap();
    assert_eq!(cli_rows.len(), rows.len(), "{cli}");
    let close = |a: &Value, b: &Value| match (a.as_f64(), b.as_f64()) {
        (Some(a), Some(b)) => (a - b).abs() <= 1e-9 * a.abs().max(1.0),
        _ => a == b,
    };
    for row in rows {
        let same = |r: &&Value| {
            r["policy"] == row["policy"]
                && r["gap_share"] == row["gap_share"]
                && close(&r["target_quality"], &row["target_quality"])
        };
        let theirs = cli_rows
            .iter()
            .find(same)
            .unwrap_or_else(|| panic!("{row}"));
        assert_eq!(
            theirs["budget_needed"], row["budget_needed"],
            "{row} vs {theirs}"
        );
        for (a, b) in [
            (&theirs["budget_interpolated"], &row["budget_interpolated"]),
            (
                &theirs["budget_interval"]["low"],
                &row["budget_interval"]["low"],
            ),
            (
                &theirs["budget_interval"]["high"],
                &row["budget_interval"]["high"],
            ),
        ] {
            assert!(close(a, b), "server {row} vs command line {theirs}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sweep_over_thresholds_keeps_the_best_theta_per_budget() {
    let server = start(60, 5, Duration::ZERO).await;
    let mut c = HttpClient::new(&server.url()).unwrap();
    let (status, sweep) = c
        .send_json(
            Method::POST,
            "/api/compare",
            &json!({"policies": ["sbr", "round-robin"], "budgets": [2, 8], "thetas": [0.9, 0.1]}),
        )
        .await
        .unwrap();
    assert_eq!(status, StatusCode::ACCEPTED, "{sweep}");
    // sbr: 2 budgets × 2 thresholds; round-robin takes none: 2 budgets.
    assert_eq!(sweep["runs"].as_array().unwrap().len(), 6, "{sweep}");
    let deadline = Instant::now() + Duration::from_secs(300);
    let comparison = loop {
        let (_, v) = c.get_json("/api/compare").await.unwrap();
        if v["runs_finished"] == 6 {
            break v;
        }
        assert!(Instant::now() < deadline, "{v}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let (status, runs) = c.get_json("/api/runs").await.unwrap();
    assert_eq!(status, StatusCode::OK);
    let runs = runs.as_array().unwrap().clone();
    let curves = comparison["curves"].as_array().unwrap();
    assert_eq!(curves.len(), 4, "{comparison}");
    // No sbr run at its default θ (0): only round-robin has a fixed-parameter row.
    let fixed = comparison["fixed_rows"].as_array().unwrap();
    // No B = 0 run: no unrefreshed quality per resample, so no row has an interval.
    for row in comparison["rows"].as_array().unwrap().iter().chain(fixed) {
        assert!(row.get("budget_interval").is_none(), "{row}");
    }
    assert!(!fixed.is_empty() && fixed.iter().all(|r| r["policy"] == "round-robin"));
    for budget in [2u64, 8] {
        let sbr_runs: Vec<&Value> = runs
            .iter()
            .filter(|r| r["policy"] == "sbr" && r["budget"] == budget)
            .collect();
        assert_eq!(sbr_runs.len(), 2, "{runs:?}");
        let mut thetas: Vec<f64> = sbr_runs
            .iter()
            .map(|r| r["theta"].as_f64().unwrap())
            .collect();
        thetas.sort_by(f64::total_cmp);
        assert_eq!(thetas, vec![0.1, 0.9]);
        let best = sbr_runs
            .iter()
            .map(|r| r["mean_quality"].as_f64().unwrap())
            .fold(f64::MIN, f64::max);
        let point = curves
            .iter()
            .find(|p| p["policy"] == "sbr" && p["budget"] == budget)
            .unwrap();
        assert_eq!(point["mean_quality"].as_f64().unwrap(), best, "{point}");
        let theta = point["theta"].as_f64().unwrap();
        let of_theta = sbr_runs
            .iter()
            .find(|r| r["theta"].as_f64() == Some(theta))
            .unwrap();
        assert_eq!(of_theta["mean_quality"].as_f64().unwrap(), best);
        let rr = curves
            .iter()
            .find(|p| p["policy"] == "round-robin" && p["budget"] == budget)
            .unwrap();
        assert!(rr["theta"].is_null(), "{rr}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_and_sweeps_take_the_policy_tables_parameters() {
    let server = start(60, 5, Duration::ZERO).await;
    let mut c = HttpClient::new(&server.url()).unwrap();
    let (status, listed) = c.get_json("/api/policies").await.unwrap();
    assert_eq!(status, StatusCode::OK);
    let families = listed["families"].as_array().unwrap();
    let uc = families
        .iter()
        .find(|f| f["name"] == "user-centric")
        .unwrap();
    assert!(uc["params"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["key"] == "window"));
    // One run with parameters: they are validated, shown and applied.
    let (status, run) = c
        .send_json(
            Method::POST,
            "/api/runs",
            &json!({"policy": "user-centric", "budget": 3, "mode": "online",
                    "params": {"estimator": "pooled", "window": 2}}),
        )
        .await
        .unwrap();
    assert_eq!(status, StatusCode::ACCEPTED, "{run}");
    assert_eq!(run["params"]["estimator"], "pooled");
    let id = run["id"].as_u64().unwrap();
    let done = wait_for_status(&mut c, id, &["done"]).await;
    assert_eq!(done["run"]["params"]["window"], 2.0);
    // Oracle mode told only the change rates (the gains learned as online).
    let (status, told) = c
        .send_json(
            Method::POST,
            "/api/runs",
            &json!({"policy": "user-centric", "budget": 3, "mode": "oracle",
                    "params": {"knows": "rates"}}),
        )
        .await
        .unwrap();
    assert_eq!(status, StatusCode::ACCEPTED, "{told}");
    let done = wait_for_status(&mut c, told["id"].as_u64().unwrap(), &["done"]).await;
    assert_eq!(done["run"]["params"]["knows"], "rates", "{done}");
    // The online planner with its learned carry-over.
    let (status, carried) = c
        .send_json(
            Method::POST,
            "/api/runs",
            &json!({"policy": "user-centric", "budget": 3, "mode": "online",
                    "params": {"carryover": "learned"}}),
        )
        .await
        .unwrap();
    assert_eq!(status, StatusCode::ACCEPTED, "{carried}");
    let done = wait_for_status(&mut c, carried["id"].as_u64().unwrap(), &["done"]).await;
    assert_eq!(done["run"]["params"]["carryover"], "learned", "{done}");
    // A sweep over a parameter other than θ: user-centric's window, each budget twice.
    let (status, sweep) = c
        .send_json(
            Method::POST,
            "/api/compare",
            &json!({"policies": ["user-centric", "age"], "budgets": [2],
                    "params": {"estimator": "pooled"}, "sweep": {"window": [1, 3]}}),
        )
        .await
        .unwrap();
    assert_eq!(status, StatusCode::ACCEPTED, "{sweep}");
    assert_eq!(sweep["runs"].as_array().unwrap().len(), 3, "{sweep}");
    let (_, runs) = c.get_json("/api/runs").await.unwrap();
    let windows: Vec<i64> = runs
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["sweep"].is_number() && r["policy"] == "user-centric")
        .map(|r| {
            assert_eq!(r["params"]["estimator"], "pooled", "{r}");
            r["params"]["window"].as_f64().unwrap() as i64
        })
        .collect();
    let mut sorted = windows.clone();
    sorted.sort();
    assert_eq!(sorted, vec![1, 3]);

    // The exact ΔQ measurement, per run and per sweep; unknown methods are refused.
    let (status, run) = c
        .send_json(
            Method::POST,
            "/api/runs",
            &json!({"policy": "user-centric", "budget": 3, "delta_q": "exact"}),
        )
        .await
        .unwrap();
    assert_eq!(status, StatusCode::ACCEPTED, "{run}");
    assert_eq!(run["delta_q"], "exact");
    let done = wait_for_status(&mut c, run["id"].as_u64().unwrap(), &["done"]).await;
    assert!(
        done["run"]["mean_quality"].as_f64().unwrap() > 0.0,
        "{done}"
    );
    let (status, sweep) = c
        .send_json(
            Method::POST,
            "/api/compare",
            &json!({"policies": ["age"], "budgets": [2], "delta_q": "exact"}),
        )
        .await
        .unwrap();
    assert_eq!(status, StatusCode::ACCEPTED, "{sweep}");
    let (_, runs) = c.get_json("/api/runs").await.unwrap();
    assert!(runs
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["sweep"] == sweep["sweep"] && r["delta_q"] == "exact"));
    let (status, _) = c
        .send_json(
            Method::POST,
            "/api/runs",
            &json!({"policy": "age", "budget": 3, "delta_q": "perfect"}),
        )
        .await
        .unwrap();
    assert!(status.is_client_error(), "{status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_pages_and_the_openapi_description_are_served() {
    let server = start(60, 4, Duration::ZERO).await;
    let mut c = HttpClient::new(&server.url()).unwrap();
    let q = busy_query(&server, 1);
    for _ in 0..3 {
        let (s, _) = c
            .get(&format!("/api/search?q={}", encode(&q)))
            .await
            .unwrap();
        assert_eq!(s, StatusCode::OK);
    }
    let (s, _) = c.get("/api/search?limit=0").await.unwrap();
    assert_eq!(s, StatusCode::BAD_REQUEST);
    let (_, run) = c
        .send_json(
            Method::POST,
            "/api/runs",
            &json!({"policy": "round-robin", "budget": 3}),
        )
        .await
        .unwrap();
    wait_for_status(&mut c, run["id"].as_u64().unwrap(), &["done"]).await;

    let (status, body) = c.get("/metrics").await.unwrap();
    assert_eq!(status, StatusCode::OK);
    let text = String::from_utf8(body.to_vec()).unwrap();
    let value = |prefix: &str| -> f64 {
        text.lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("{prefix} missing in\n{text}"))
            .rsplit(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    assert_eq!(
        value("refresher_http_requests_total{method=\"GET\",route=\"/api/search\",status=\"200\"}"),
        3.0
    );
    assert_eq!(
        value("refresher_http_requests_total{method=\"GET\",route=\"/api/search\",status=\"400\"}"),
        1.0
    );
    assert_eq!(
        value("refresher_http_request_duration_seconds_count{route=\"/api/search\"}"),
        4.0
    );
    assert_eq!(
        value("refresher_http_request_duration_seconds_bucket{route=\"/api/search\",le=\"+Inf\"}"),
        4.0
    );
    assert_eq!(
        value("refresher_index_documents"),
        server.state.search.num_docs() as f64
    );
    assert_eq!(
        value("refresher_refreshes_done"),
        (3 * (server.corpus.units() - 1)) as f64
    );
    let serving = value("refresher_serving_quality");
    assert!((0.0..=1.0).contains(&serving));
    assert_eq!(value("refresher_live_workload_submissions_total"), 3.0);
    assert_eq!(value("refresher_live_workload_submissions "), 3.0);
    assert_eq!(
        value("refresher_refreshes_total"),
        (3 * (server.corpus.units() - 1)) as f64
    );
    assert!(text.contains("refresher_run_quality{policy=\"round-robin\",run=\"1\"}"));
    // Prometheus conventions: counts are counters named `_total`; process metrics and build
    // info are there; every sample line belongs to a family declared with HELP and TYPE.
    for counter in [
        "refresher_http_requests_total",
        "refresher_refreshes_total",
        "refresher_live_workload_submissions_total",
    ] {
        assert!(
            text.contains(&format!("# TYPE {counter} counter")),
            "{counter}"
        );
    }
    assert!(value("process_resident_memory_bytes") > 0.0);
    assert!(value("process_open_fds") > 0.0);
    assert_eq!(value("refresher_build_info"), 1.0);
    let declared: std::collections::HashSet<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split(' ').next())
        .collect();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let name = line.split(['{', ' ']).next().unwrap();
        let family = ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|suffix| name.strip_suffix(suffix).filter(|f| declared.contains(f)))
            .unwrap_or(name);
        assert!(declared.contains(family), "undeclared sample: {line}");
        let value = line.rsplit(' ').next().unwrap();
        assert!(value.parse::<f64>().is_ok() || value == "+Inf", "{line}");
    }

    for page in [
        "/",
        "/dashboard",
        "/compare",
        "/static/charts.js",
        "/static/meanings.js",
        "/static/uPlot.iife.min.js",
        "/static/uPlot.min.css",
        "/static/uPlot.LICENSE.txt",
        "/static/style.css",
    ] {
        let (status, body) = c.get(page).await.unwrap();
        assert_eq!(status, StatusCode::OK, "{page}");
        assert!(!body.is_empty());
    }
    let (status, doc) = c.get_json("/api/openapi.json").await.unwrap();
    assert_eq!(status, StatusCode::OK);
    assert!(doc["paths"]["/api/search"]["get"].is_object());
    // Every refusal the guards and queues give is documented where it can happen.
    let responses = |path: &str, method: &str| doc["paths"][path][method]["responses"].clone();
    for (path, method, codes) in [
        ("/api/search", "get", &["400", "403", "503"][..]),
        (
            "/api/runs",
            "post",
            &["400", "403", "413", "415", "429"][..],
        ),
        (
            "/api/compare",
            "post",
            &["400", "403", "413", "415", "429"][..],
        ),
        ("/api/runs/{id}", "delete", &["403", "404", "413"][..]),
    ] {
        for code in codes {
            assert!(
                responses(path, method)[*code].is_object(),
                "{method} {path}: no {code} documented"
            );
        }
    }
    for name in [
        "Forbidden",
        "PayloadTooLarge",
        "UnsupportedMediaType",
        "TooManyRequests",
        "Overloaded",
    ] {
        assert!(doc["components"]["responses"][name].is_object(), "{name}");
    }
}

/// Issue 13: a sweep is validated as a whole before anything is queued (a 400 leaves no run
/// and takes no sweep id), and the run queue is bounded (429 with `Retry-After`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sweeps_are_all_or_nothing_and_the_run_queue_is_bounded() {
    let server = start(60, 4, Duration::from_millis(200)).await;
    let mut c = HttpClient::new(&server.url()).unwrap();
    let huge = json!({"policies": ["round-robin"], "budgets": [1, 2, 18446744073709551615u64]});
    let (status, v) = c
        .send_json(Method::POST, "/api/compare", &huge)
        .await
        .unwrap();
    assert_eq!(status, StatusCode::BAD_REQUEST, "{v}");
    assert!(
        v["error"]["message"].as_str().unwrap().contains("exceeds"),
        "{v}"
    );
    let (_, runs) = c.get_json("/api/runs").await.unwrap();
    assert_eq!(runs.as_array().unwrap().len(), 0, "{runs}");
    let (status, _) = c.get_json("/api/compare?sweep=1").await.unwrap();
    assert_eq!(status, StatusCode::NOT_FOUND, "a refused sweep takes no id");

    let max = refresher::server::runs::MAX_PENDING_RUNS;
    let sweep = json!({"policies": ["test-slow"], "budgets": (0..=60).collect::<Vec<_>>()});
    let mut accepted = 0;
    let mut refused = None;
    for _ in 0..(max / 61 + 2) {
        let (status, v) = c
            .send_json(Method::POST, "/api/compare", &sweep)
            .await
            .unwrap();
        if status == StatusCode::ACCEPTED {
            accepted += v["runs"].as_array().unwrap().len();
        } else {
            refused = Some((status, v));
            break;
        }
    }
    let (status, v) = refused.expect("the queue filled up");
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{v}");
    assert_eq!(v["error"]["code"], "too_many_requests");
    assert!(accepted <= max && accepted + 61 > max - 1, "{accepted}");
    // Single runs fill what room the sweeps left (runs finish one at a time, in well over a
    // second each, so the room is small); the queue must refuse one before `max` more: it
    // has taken at least `max` runs by then.
    let mut singles = 0;
    let refused_single = loop {
        let (status, v) = c
            .send_json(
                Method::POST,
                "/api/runs",
                &json!({"policy": "test-slow", "budget": 1}),
            )
            .await
            .unwrap();
        if status == StatusCode::ACCEPTED {
            singles += 1;
            assert!(
                singles <= max,
                "{singles} single runs accepted beyond the sweeps"
            );
        } else {
            break (status, v);
        }
    };
    let (status, v) = refused_single;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{v}");
    assert_eq!(v["error"]["code"], "too_many_requests");
    assert!(
        accepted + singles >= max,
        "refused after {accepted} + {singles} runs, below the cap of {max}"
    );
    if accepted + 1 > max {
        assert_eq!(singles, 0, "the sweeps had filled the queue");
    }
    // The refused requests queued nothing.
    let (_, runs) = c.get_json("/api/runs").await.unwrap();
    let listed = runs.as_array().unwrap();
    assert_eq!(listed.len(), accepted + singles);
    for r in listed {
        let id = r["id"].as_u64().unwrap();
        c.send(Method::POST, &format!("/api/runs/{id}/cancel"), None)
            .await
            .unwrap();
    }
}

/// One raw HTTP/1.1 exchange (`Connection: close`), for headers the client does not send.
async fn raw(addr: std::net::SocketAddr, request: String) -> String {
    tokio::task::spawn_blocking(move || {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        s.write_all(request.as_bytes()).unwrap();
        let mut out = Vec::new();
        let _ = s.read_to_end(&mut out);
        String::from_utf8_lossy(&out).into_owned()
    })
    .await
    .unwrap()
}

/// Issue 13: Host allow list, CSRF, security headers, 413, cross-site searches not feeding
/// the live workload.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn browser_facing_requests_are_guarded() {
    let server = start(60, 4, Duration::ZERO).await;
    let addr = server.addr;
    let host = addr.to_string();
    let get = |path: &str, extra: &str| {
        format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n{extra}Connection: close\r\n\r\n")
    };
    let ok = raw(addr, get("/", "")).await;
    assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
    let lower = ok.to_ascii_lowercase();
    for h in [
        "content-security-policy: default-src 'self'",
        "x-frame-options: deny",
        "x-content-type-options: nosniff",
    ] {
        assert!(lower.contains(h), "{h} missing in {ok}");
    }
    // DNS rebinding: another Host is refused (headers too).
    let evil = raw(
        addr,
        "GET /api/policies HTTP/1.1\r\nHost: evil.example:8080\r\nConnection: close\r\n\r\n".into(),
    )
    .await;
    assert!(evil.starts_with("HTTP/1.1 403"), "{evil}");
    assert!(evil.to_ascii_lowercase().contains("x-frame-options: deny"));
    let local = raw(
        addr,
        format!(
            "GET /api/policies HTTP/1.1\r\nHost: localhost:{}\r\nConnection: close\r\n\r\n",
            addr.port()
        ),
    )
    .await;
    assert!(local.starts_with("HTTP/1.1 200"), "{local}");
    // CSRF: a cross-site form POST is refused before it reaches the handler.
    let body = r#"{"policy":"round-robin","budget":1}"#;
    let post = |origin: &str, ctype: &str| {
        format!(
            "POST /api/runs HTTP/1.1\r\nHost: {host}\r\nOrigin: {origin}\r\nContent-Type: {ctype}\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
    };
    let csrf = raw(addr, post("http://evil.example", "text/plain")).await;
    assert!(csrf.starts_with("HTTP/1.1 403"), "{csrf}");
    let form = raw(addr, post(&format!("http://{host}"), "text/plain")).await;
    assert!(form.starts_with("HTTP/1.1 400"), "not JSON: {form}");
    let same = raw(addr, post(&format!("http://{host}"), "application/json")).await;
    assert!(same.starts_with("HTTP/1.1 202"), "{same}");
    let cancel = raw(
        addr,
        format!(
            "POST /api/runs/1/cancel HTTP/1.1\r\nHost: {host}\r\nSec-Fetch-Site: cross-site\r\n\
             Content-Length: 0\r\nConnection: close\r\n\r\n"
        ),
    )
    .await;
    assert!(cancel.starts_with("HTTP/1.1 403"), "{cancel}");
    // An oversized body: 413.
    let big = json!({"policy": "round-robin", "budget": 1, "pad": "x".repeat(200_000)});
    let mut c = HttpClient::new(&server.url()).unwrap();
    let (status, body) = c.send(Method::POST, "/api/runs", Some(&big)).await.unwrap();
    assert_eq!(
        status,
        StatusCode::PAYLOAD_TOO_LARGE,
        "{}",
        String::from_utf8_lossy(&body)
    );
    // Cross-site searches are answered but do not feed the live workload.
    let q = busy_query(&server, 1);
    let before = server.state.live.submissions();
    let cross = raw(
        addr,
        get(
            &format!("/api/search?q={}", encode(&q)),
            "Origin: http://evil.example\r\n",
        ),
    )
    .await;
    assert!(cross.starts_with("HTTP/1.1 200"), "{cross}");
    assert_eq!(server.state.live.submissions(), before);
    let own = raw(addr, get(&format!("/api/search?q={}", encode(&q)), "")).await;
    assert!(own.starts_with("HTTP/1.1 200"), "{own}");
    assert_eq!(server.state.live.submissions(), before + 1);
}

/// Issue 13: searches beyond the pool and its queue answer 503 with `Retry-After` (the queue
/// is filled by hand here: a real flood needs thousands of clients).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_search_queue_answers_503_with_retry_after() {
    use std::sync::atomic::Ordering;
    let server = start(60, 4, Duration::ZERO).await;
    let q = busy_query(&server, 1);
    let path = format!("/api/search?q={}", encode(&q));
    let full = server.state.options.search_threads + refresher::server::SEARCH_QUEUE;
    server.state.search_pending.store(full, Ordering::SeqCst);
    let busy = raw(
        server.addr,
        format!(
            "GET {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
            server.addr
        ),
    )
    .await;
    assert!(busy.starts_with("HTTP/1.1 503"), "{busy}");
    assert!(
        busy.to_ascii_lowercase().contains("retry-after: 1"),
        "{busy}"
    );
    assert!(busy.contains("\"overloaded\""), "{busy}");
    server.state.search_pending.store(0, Ordering::SeqCst);
    let mut c = HttpClient::new(&server.url()).unwrap();
    let (status, _) = c.get(&path).await.unwrap();
    assert_eq!(status, StatusCode::OK);
    assert_eq!(server.state.search_pending.load(Ordering::SeqCst), 0);
}

/// Issue 14: runs of different fit modes (or scorings, ΔQ measurements, workloads) are never
/// mixed into one curve of `/compare`: each setting is its own series, labelled by what
/// differs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compare_keeps_oracle_and_online_runs_apart() {
    let server = start(50, 4, Duration::ZERO).await;
    let mut c = HttpClient::new(&server.url()).unwrap();
    for mode in ["oracle", "online"] {
        let (status, v) = c
            .send_json(
                Method::POST,
                "/api/compare",
                &json!({"policies": ["user-centric"], "budgets": [0, 3, 50], "mode": mode}),
            )
            .await
            .unwrap();
        assert_eq!(status, StatusCode::ACCEPTED, "{v}");
    }
    let deadline = Instant::now() + Duration::from_secs(300);
    let all = loop {
        let (_, v) = c.get_json("/api/compare?sweep=all").await.unwrap();
        if v["runs_finished"] == 6 {
            break v;
        }
        assert!(Instant::now() < deadline, "{v}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let mut names: Vec<String> = all["curves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["policy"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "user-centric (online)",
            "user-centric (online)",
            "user-centric (online)",
            "user-centric (oracle)",
            "user-centric (oracle)",
            "user-centric (oracle)"
        ],
        "{all}"
    );
    // Both modes shown: each online row over the full oracle's (the oracle series) for the
    // same target, read here from the fixed rows themselves.
    let fixed = all["fixed_rows"].as_array().unwrap();
    let ratios = all["oracle_ratios"].as_array().unwrap();
    let online: Vec<&serde_json::Value> = fixed
        .iter()
        .filter(|r| r["policy"] == "user-centric (online)")
        .collect();
    assert_eq!(ratios.len(), online.len(), "{all}");
    let mut compared = 0;
    for (ratio, row) in ratios.iter().zip(&online) {
        assert_eq!(ratio["policy"], "user-centric (online)");
        let bound = fixed
            .iter()
            .find(|o| {
                o["policy"] == "user-centric (oracle)"
                    && o["target_quality"] == row["target_quality"]
                    && o["gap_share"] == row["gap_share"]
            })
            .unwrap();
        match (
            row["budget_interpolated"].as_f64(),
            bound["budget_interpolated"].as_f64(),
        ) {
            (Some(a), Some(b)) if b > 0.0 => {
                let r = ratio["ratio"].as_f64().unwrap();
                assert!((r - a / b).abs() < 1e-12, "{ratio} {row} {bound}");
                compared += 1;
            }
            _ => assert!(ratio["ratio"].is_null(), "{ratio}"),
        }
    }
    assert!(compared > 0, "{ratios:?}");
    // One sweep alone has one setting: the plain policy name.
    for sweep in ["1", "2", ""] {
        let (status, one) = c
            .get_json(&format!("/api/compare?sweep={sweep}"))
            .await
            .unwrap();
        assert_eq!(status, StatusCode::OK, "{one}");
        assert_eq!(one["curves"].as_array().unwrap().len(), 3, "{one}");
        for p in one["curves"].as_array().unwrap() {
            assert_eq!(p["policy"], "user-centric", "{one}");
        }
        // One mode alone: no ratio to the oracle.
        assert_eq!(one["oracle_ratios"].as_array().unwrap().len(), 0, "{one}");
    }
    let (status, v) = c.get_json("/api/compare?sweep=3").await.unwrap();
    assert_eq!(status, StatusCode::NOT_FOUND, "{v}");
    let (status, v) = c.get_json("/api/compare?sweep=newest").await.unwrap();
    assert_eq!(status, StatusCode::BAD_REQUEST, "{v}");
    assert!(
        v["error"]["message"].as_str().unwrap().contains("`all`"),
        "{v}"
    );
}

/// `GET /api/engine` once the served engine has replayed its last unit (at most 2 minutes).
async fn engine_when_finished(c: &mut HttpClient) -> serde_json::Value {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let (_, v) = c.get_json("/api/engine").await.unwrap();
        if v["finished"] == true {
            return v;
        }
        assert!(Instant::now() < deadline, "{v}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Issue 12: `serve --refresh` — the index users search refreshes itself. The served engine
/// makes the simulator's decisions (its per-unit quality is `simulate --mode online`'s), and a
/// search finds a page by a word only its refreshed copy holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_served_engine_refreshes_the_index_users_search() {
    use refresher::corpus::{LiveWeb, PageId};
    use refresher::server::engine::RefreshSpec;
    let server = start(80, 8, Duration::ZERO).await;
    let mut c = HttpClient::new(&server.url()).unwrap();
    let (_, off) = c.get_json("/api/engine").await.unwrap();
    assert_eq!(off["enabled"], false);
    let state = server.state.clone();
    tokio::task::spawn_blocking(move || {
        state.start_engine(&RefreshSpec {
            policy: "round-robin".into(),
            params: Vec::new(),
            budget: 12,
            unit_seconds: 0.05,
            seed: 1,
            warmup_units: 0,
            crawl: None,
            signals: Default::default(),
        })
    })
    .await
    .unwrap()
    .unwrap();
    let engine = engine_when_finished(&mut c).await;
    let units = server.corpus.units();
    assert_eq!(engine["unit"], units - 1, "{engine}");
    assert_eq!(engine["refreshes"], 12 * (units as u64 - 1), "{engine}");
    assert!(engine["error"].is_null(), "{engine}");

    // The same decisions as the online simulation: equal quality, fresh@10, MAP@10 per unit.
    let env = server
        .state
        .runs
        .environments
        .get(
            refresher::index::ScoringKind::Bm25,
            refresher::server::WorkloadSource::Log,
            refresher::quality::measure::DeltaQMethod::Estimate,
        )
        .unwrap();
    let policy = refresher::policy::registry::family("round-robin")
        .unwrap()
        .make([])
        .unwrap();
    let simulated = refresher::sim::run(
        &env,
        policy,
        &refresher::sim::RunConfig::new(12, refresher::policy::FitMode::Online),
    )
    .unwrap();
    let per_unit = engine["per_unit"].as_array().unwrap();
    assert_eq!(per_unit.len(), simulated.per_unit.len());
    for (e, s) in per_unit.iter().zip(&simulated.per_unit) {
        for (key, want) in [
            ("quality", s.search.quality),
            ("fresh_at_10", s.search.fresh_at_10),
            ("map_at_10", s.search.map_at_10),
        ] {
            let got = e[key].as_f64().unwrap();
            assert!(
                (got - want).abs() < 1e-12,
                "unit {}: {key} {got} vs {want}",
                s.unit
            );
        }
    }

    // A word only a refreshed copy holds now finds that page, marked fresh at the last unit.
    let corpus = &server.corpus;
    let last = units - 1;
    let mut checked = 0;
    for e in per_unit {
        for url in e["refreshed_urls"].as_array().unwrap() {
            let p: PageId = corpus.page_id(url.as_str().unwrap()).unwrap();
            let (Some(now), old) = (
                corpus.page_at(p, last).present(),
                corpus.page_at(p, 0).present(),
            ) else {
                continue;
            };
            if now.unit == old.map_or(u32::MAX, |o| o.unit) {
                continue;
            }
            let Some(word) = now.text.split_whitespace().find(|w| {
                w.len() > 4
                    && w.chars().all(|c| c.is_ascii_lowercase())
                    && old.is_none_or(|o| !o.text.split_whitespace().any(|x| x == *w))
            }) else {
                continue;
            };
            let (status, v) = c
                .get_json(&format!("/api/search?q={word}&limit=100"))
                .await
                .unwrap();
            assert_eq!(status, StatusCode::OK, "{v}");
            assert_eq!(v["served_unit"], last, "{v}");
            let hit = v["results"]
                .as_array()
                .unwrap()
                .iter()
                .find(|h| h["url"] == *url);
            // Refreshed at an earlier unit and changed again since: present, maybe stale.
            if now.unit <= e["unit"].as_u64().unwrap() as u32 {
                let hit = hit.unwrap_or_else(|| panic!("{url} for {word}: {v}"));
                assert_eq!(hit["stale"], false, "{hit}");
                checked += 1;
            }
        }
    }
    assert!(checked > 0, "no refreshed page brought a new word");
}

/// Issue 12: queries the server answers join the workload the served engine steers by, from
/// the next unit on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn served_queries_join_the_engines_workload() {
    use refresher::server::engine::RefreshSpec;
    let server = start(60, 6, Duration::ZERO).await;
    let mut c = HttpClient::new(&server.url()).unwrap();
    let query = server.log.submissions[0].query.clone();
    let (status, _) = c
        .get_json(&format!("/api/search?q={}", query.replace(' ', "+")))
        .await
        .unwrap();
    assert_eq!(status, StatusCode::OK);
    let (status, _) = c.get_json("/api/search?q=zzzunseenword").await.unwrap();
    assert_eq!(status, StatusCode::OK);
    let state = server.state.clone();
    tokio::task::spawn_blocking(move || {
        state.start_engine(&RefreshSpec {
            policy: "user-centric".into(),
            params: Vec::new(),
            budget: 5,
            unit_seconds: 0.05,
            seed: 1,
            warmup_units: 0,
            crawl: None,
            signals: Default::default(),
        })
    })
    .await
    .unwrap()
    .unwrap();
    let engine = engine_when_finished(&mut c).await;
    assert_eq!(engine["served_queries"], 2, "{engine}");
    assert!(engine["error"].is_null(), "{engine}");
}

/// A `web-replay` of `corpus` on loopback with a manual clock, and the spec of a crawling
/// served engine over it (user-centric at `budget`, units of `unit_seconds`, the clock
/// advanced by the engine, pages found from the sitemap).
async fn replayed_crawl(
    corpus: &refresher::corpus::Corpus,
    budget: usize,
    unit_seconds: f64,
) -> (
    std::sync::Arc<refresher::web_replay::ReplaySite>,
    refresher::server::engine::RefreshSpec,
) {
    use refresher::crawl::http::{Discovery, HttpOptions};
    use refresher::server::engine::{CrawlSource, RefreshSpec};
    use refresher::web_replay::{ReplayClock, ReplayOptions, ReplaySite};
    let site = std::sync::Arc::new(ReplaySite::new(
        std::sync::Arc::new(corpus.clone()),
        ReplayOptions {
            clock: ReplayClock::Manual,
            ..ReplayOptions::manual()
        },
    ));
    let (replay, _) = refresher::web_replay::spawn(site.clone(), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let host = refresher::crawl::http::host_of(corpus.url(0)).unwrap();
    let spec = RefreshSpec {
        policy: "user-centric".into(),
        params: Vec::new(),
        budget,
        unit_seconds,
        seed: 1,
        warmup_units: 0,
        crawl: Some(CrawlSource {
            options: HttpOptions {
                min_host_delay: Duration::ZERO,
                resolve: [(host.clone(), replay)].into_iter().collect(),
                discovery: Discovery::Sitemaps(vec![format!("https://{host}/sitemap.xml")]),
                ..HttpOptions::default()
            },
            urls: Vec::new(),
            max_pages: 10_000,
            advance_clock: Some(format!("http://{replay}/_clock/advance")),
        }),
        signals: Default::default(),
    };
    (site, spec)
}

/// Issue 12: `serve --refresh … --crawl` — the served engine refreshes by crawling
/// `web-replay` (the same collection, manual clock advanced by the engine) over HTTP, is judged
/// against the collection, and serves what it fetched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_served_engine_crawls_web_replay() {
    let server = start(80, 6, Duration::ZERO).await;
    let (site, spec) = replayed_crawl(&server.corpus, 8, 0.3).await;
    let host = refresher::crawl::http::host_of(server.corpus.url(0)).unwrap();
    let state = server.state.clone();
    tokio::task::spawn_blocking(move || state.start_engine(&spec))
        .await
        .unwrap()
        .unwrap();
    let mut c = HttpClient::new(&server.url()).unwrap();
    let engine = engine_when_finished(&mut c).await;
    let units = server.corpus.units();
    assert!(engine["error"].is_null(), "{engine}");
    assert_eq!(
        site.unit(),
        units - 1,
        "the engine advanced the site's clock"
    );
    assert_eq!(engine["refreshes"], 8 * (units as u64 - 1), "{engine}");
    assert_eq!(engine["errors"], 0, "{engine}");
    assert!(
        engine["hosts"][&host]["fetches"].as_u64().unwrap() > 0,
        "{engine}"
    );
    for u in engine["per_unit"].as_array().unwrap() {
        let q = u["quality"].as_f64().unwrap();
        assert!(q > 0.5 && q <= 1.0, "{u}");
    }
    let query = server.log.submissions[0].query.replace(' ', "+");
    let (status, v) = c.get_json(&format!("/api/search?q={query}")).await.unwrap();
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["served_unit"], units - 1, "{v}");
}

/// Issue 51: the crawling engine over a served index split by host (`serve --policy --crawl
/// --workers 2`) answers every search as the one-repository engine does after the same crawl:
/// each unit's fetched copies, and the words the crawl added, reach the shards.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_crawling_engine_over_shards_answers_as_over_one_index() {
    use refresher::mesh::{Greeting, MeshConfig};
    use refresher::querylog::workload::{RelevanceFilter, Workload, WorkloadOptions};
    use refresher::server::search::SearchRequest;
    use refresher::server::{AppState, Policies, ServerOptions};
    let server = start(80, 5, Duration::ZERO).await;
    let corpus = server.corpus.clone();
    let workload = Workload::build(
        &server.log,
        &corpus,
        &WorkloadOptions {
            top_n: None,
            filter: RelevanceFilter::None,
        },
    );
    let sharded = tokio::task::spawn_blocking(move || {
        let mut options = ServerOptions::new(Policies::registry());
        options.shards = Some((
            MeshConfig {
                workers: 2,
                ..MeshConfig::single()
            },
            Greeting {
                process: 0,
                version: "test".into(),
                configuration: "c".into(),
                corpus: "x".into(),
            },
        ));
        AppState::build(corpus, Some(workload), options)
    })
    .await
    .unwrap()
    .unwrap();
    assert!(sharded.search.shards().is_some());
    // One replayed site per engine: each advances its own site's clock.
    for state in [server.state.clone(), sharded.clone()] {
        // Units of 1 s: two engines side by side on a loaded machine still finish each unit's
        // fetches before its deadline (a deadline cuts the two differently).
        let (_, spec) = replayed_crawl(&server.corpus, 10, 1.0).await;
        tokio::task::spawn_blocking(move || state.start_engine(&spec))
            .await
            .unwrap()
            .unwrap();
    }
    let finished = |state: &AppState| {
        let status = serde_json::to_value(state.engine.get().unwrap().status()).unwrap();
        assert!(status["error"].is_null(), "{status}");
        (status["finished"] == true).then(|| status["per_unit"].clone())
    };
    let deadline = Instant::now() + Duration::from_secs(120);
    let (one_units, shard_units) = loop {
        if let (Some(a), Some(b)) = (finished(&server.state), finished(&sharded)) {
            break (a, b);
        }
        assert!(Instant::now() < deadline, "the engines did not finish");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(
        one_units, shard_units,
        "the two engines crawled differently"
    );
    let mut compared = 0;
    for submission in server.log.submissions.iter().take(40) {
        let request = SearchRequest {
            text: submission.query.clone(),
            offset: 0,
            limit: 20,
        };
        let answer = |state: &AppState| {
            state.search.search(&request).ok().map(|r| {
                let mut v = serde_json::to_value(&r).unwrap();
                v.as_object_mut().unwrap().remove("took_ms");
                v
            })
        };
        let expected = answer(&server.state);
        assert_eq!(answer(&sharded), expected, "{}", request.text);
        compared += usize::from(expected.is_some_and(|v| v["total_hits"] != 0));
    }
    assert!(compared > 10, "only {compared} searches found anything");
    let units = server.corpus.units();
    assert_eq!(sharded.search.units().0, units - 1);
    sharded.search.shards().unwrap().stop().unwrap();
}

/// Issue 14: with `--index DIR` (built, then reopened) and `--unit U`, stale markers compare
/// the copy of unit U against the live unit, as without an index directory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stale_markers_with_an_index_directory_compare_the_served_unit() {
    use refresher::corpus::{is_fresh, LiveWeb};
    use refresher::server::{AppState, ServerOptions};
    let server = start(80, 6, Duration::ZERO).await;
    let dir = tempfile::tempdir().unwrap();
    let served_unit = 2;
    for round in ["build", "reopen"] {
        let corpus = server.corpus.clone();
        let index = dir.path().join("index");
        let state = tokio::task::spawn_blocking(move || {
            let mut options = ServerOptions::new(refresher::server::Policies::registry());
            options.index_dir = Some(index);
            options.served_unit = served_unit;
            AppState::build(corpus, None, options)
        })
        .await
        .unwrap()
        .unwrap();
        let live = state.options.live_unit.unwrap();
        assert_eq!(live, server.corpus.units() - 1);
        let mut checked = (0, 0);
        for s in server.log.submissions.iter().take(200) {
            let request = refresher::server::search::SearchRequest {
                text: s.query.clone(),
                offset: 0,
                limit: 10,
            };
            let Ok(response) = state.search.search(&request) else {
                continue;
            };
            assert_eq!(response.served_unit, served_unit, "{round}");
            for hit in &response.results {
                let p = server.corpus.page_id(&hit.url).unwrap();
                let held = server
                    .corpus
                    .page_at(p, served_unit)
                    .present()
                    .map(|v| v.unit);
                let stale = !is_fresh(&server.corpus, p, held, live);
                assert_eq!(hit.stale, stale, "{round}: {}", hit.url);
                // Expected independently of `is_fresh` (the marker's own code): by content.
                assert_eq!(
                    hit.stale,
                    stale_by_content(&server.corpus, p, served_unit, live),
                    "{round}: {}",
                    hit.url
                );
                if stale {
                    checked.0 += 1;
                } else {
                    checked.1 += 1;
                }
            }
        }
        assert!(checked.0 > 0 && checked.1 > 0, "{round}: {checked:?}");
    }
}

/// Issue 16: `POST /api/webfountain` solves a paper 004 instance as the CLI does, and names
/// what is wrong with a bad request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_webfountain_model_is_solved_over_http() {
    let server = start(40, 3, Duration::ZERO).await;
    let mut c = HttpClient::new(&server.url()).unwrap();
    let instance: Value =
        serde_json::from_str(include_str!("fixtures/webfountain-small.json")).unwrap();
    for (strategy, want) in [(1, 284.8680), (2, 196.4532), (3, 232.1556)] {
        let (s, plan) = c
            .send_json(
                Method::POST,
                "/api/webfountain",
                &json!({"instance": instance, "strategy": strategy}),
            )
            .await
            .unwrap();
        assert_eq!(s, StatusCode::OK, "{plan}");
        let objective = plan["objective"].as_f64().unwrap();
        assert!(((objective - want) / want).abs() < 1e-4, "{plan}");
        assert_eq!(plan["crawls"].as_array().unwrap().len(), 12);
        assert_eq!(plan["obsolete_per_period"].as_array().unwrap().len(), 6);
        assert!(plan["optimality"]["relative_gap"].as_f64().unwrap() < 1e-4);
    }
    for (body, names) in [
        (json!({"instance": instance, "strategy": 4}), "strategy"),
        (
            json!({"instance": instance, "strategy": 3, "eps": 0.5}),
            "eps",
        ),
        (
            json!({"instance": instance, "strategy": 1, "max_iterations": 0}),
            "max_iterations",
        ),
        (json!({"instance": "small", "strategy": 1}), "instance"),
        (
            json!({"instance": {"periods": 2, "capacity_per_period": [1], "buckets": []}, "strategy": 1}),
            "capacity_per_period",
        ),
        (
            json!({"instance": instance, "strategy": 1, "colour": 1}),
            "colour",
        ),
    ] {
        let (s, e) = c
            .send_json(Method::POST, "/api/webfountain", &body)
            .await
            .unwrap();
        assert_eq!(s, StatusCode::BAD_REQUEST, "{body}: {e}");
        let message = e["error"]["message"].as_str().unwrap();
        assert!(message.contains(names), "{names}: {message}");
    }
    let (s, page) = c.get("/webfountain").await.unwrap();
    assert_eq!(s, StatusCode::OK);
    assert!(String::from_utf8_lossy(&page).contains("/static/webfountain.js"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_and_sweeps_take_the_new_page_mode() {
    let server = start(60, 6, Duration::ZERO).await;
    let mut c = HttpClient::new(&server.url()).unwrap();
    let info = &run_to_done(
        &mut c,
        &json!({"policy": "sbr", "budget": 4, "mode": "online", "new_pages": "frontier"}),
    )
    .await;
    assert_eq!(info["new_pages"], "frontier", "{info}");
    let split = info["mean_new_page_fetches"].as_f64().unwrap()
        + info["mean_refresh_fetches"].as_f64().unwrap();
    assert!(split <= 4.0 + 1e-9, "{info}");
    assert!(info["mean_discovery_delay_weighted"].is_number(), "{info}");
    assert!(info["latest"]["frontier_pages"].is_u64(), "{info}");
    // Papers 000 and 002's measures, per unit and over the units done.
    for key in [
        "mean_change_ratio",
        "mean_weighted_change_ratio",
        "mean_pagerank_weighted_change_ratio",
        "mean_fresh_at_10_fixed_k",
        "mean_map_at_10_retrieved",
        "mean_map_at_10_tau0",
    ] {
        assert!(info[key].is_number(), "run info lacks {key}: {info}");
    }
    for key in [
        "pagerank_weighted_change_ratio",
        "fresh_at_10_fixed_k",
        "map_at_10_retrieved",
        "map_at_10_tau0",
    ] {
        assert!(
            info["latest"][key].is_number(),
            "unit record lacks {key}: {info}"
        );
    }
    // The default: outside the budget.
    let (_, plain) = c
        .send_json(
            Method::POST,
            "/api/runs",
            &json!({"policy": "sbr", "budget": 4}),
        )
        .await
        .unwrap();
    assert_eq!(plain["new_pages"], "outside-budget", "{plain}");
    // A bad value is a 400 naming the field.
    let (status, err) = c
        .send_json(
            Method::POST,
            "/api/runs",
            &json!({"policy": "sbr", "budget": 4, "new_pages": "sideways"}),
        )
        .await
        .unwrap();
    assert_eq!(status, StatusCode::BAD_REQUEST, "{err}");
    assert!(
        err.to_string().contains("new_pages") || err.to_string().contains("sideways"),
        "{err}"
    );
    // Sweeps pass it to every run.
    let (status, sweep) = c
        .send_json(
            Method::POST,
            "/api/compare",
            &json!({"policies": ["round-robin"], "budgets": [2], "new_pages": "frontier"}),
        )
        .await
        .unwrap();
    assert_eq!(status, StatusCode::ACCEPTED, "{sweep}");
    let sweep_run = sweep["runs"][0].as_u64().unwrap();
    let body = wait_for_status(&mut c, sweep_run, &["done"]).await;
    assert_eq!(body["run"]["new_pages"], "frontier");
}

/// Papers 000 and 002's sampling policies run from the API as every family does: listed with
/// their parameters, refreshing within the budget, reporting the papers' measures.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sampling_policies_run_from_the_api() {
    let server = start(60, 6, Duration::ZERO).await;
    let mut c = HttpClient::new(&server.url()).unwrap();
    let (_, listed) = c.get_json("/api/policies").await.unwrap();
    let names: Vec<&str> = listed["families"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["name"].as_str())
        .collect();
    for name in ["cls", "sample-lb", "sample-db", "sample-cb", "gsb", "rns"] {
        assert!(names.contains(&name), "{name} not in {names:?}");
    }
    for (policy, params) in [
        ("cls", json!({})),
        ("sample-db", json!({"phi": "wha"})),
        ("gsb", json!({})),
    ] {
        let info = &run_to_done(
            &mut c,
            &json!({"policy": policy, "budget": 6, "mode": "online", "params": params}),
        )
        .await;
        assert_eq!(info["units_done"], 5, "{info}");
        assert!(info["latest"]["refreshed"].as_u64().unwrap() <= 6, "{info}");
        let ratio = info["mean_change_ratio"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&ratio), "{info}");
    }
    // A bad parameter is refused by name before anything runs.
    let (status, err) = c
        .send_json(
            Method::POST,
            "/api/runs",
            &json!({"policy": "sample-db", "budget": 6, "params": {"phi": "sideways"}}),
        )
        .await
        .unwrap();
    assert_eq!(status, StatusCode::BAD_REQUEST, "{err}");
    assert!(err.to_string().contains("phi"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oracle_run_can_be_told_the_warm_up_only() {
    let server = start(60, 6, Duration::ZERO).await;
    let mut c = HttpClient::new(&server.url()).unwrap();
    let (status, run) = c
        .send_json(
            Method::POST,
            "/api/runs",
            &json!({"policy": "nad", "budget": 3, "mode": "oracle", "warmup_units": 2,
                    "oracle_history": "warm-up"}),
        )
        .await
        .unwrap();
    assert_eq!(status, StatusCode::ACCEPTED, "{run}");
    assert_eq!(run["oracle_history"], "warm-up", "{run}");
    let id = run["id"].as_u64().unwrap();
    let body = wait_for_status(&mut c, id, &["done"]).await;
    assert_eq!(body["run"]["units_done"], 3, "{body}");
    // Where the cut means nothing, a 400 naming the field.
    for (spec, names) in [
        (
            json!({"policy": "nad", "budget": 3, "mode": "online", "warmup_units": 2,
                   "oracle_history": "warm-up"}),
            "only oracle mode",
        ),
        (
            json!({"policy": "nad", "budget": 3, "mode": "oracle", "oracle_history": "warm-up"}),
            "`warmup_units`",
        ),
    ] {
        let (status, err) = c.send_json(Method::POST, "/api/runs", &spec).await.unwrap();
        assert_eq!(status, StatusCode::BAD_REQUEST, "{err}");
        let message = err["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("`oracle_history`") && message.contains(names),
            "{message}"
        );
    }
    // Unknown values are refused by the schema.
    let (status, err) = c
        .send_json(
            Method::POST,
            "/api/runs",
            &json!({"policy": "nad", "budget": 3, "oracle_history": "future"}),
        )
        .await
        .unwrap();
    assert!(status.is_client_error(), "{status} {err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_and_sweeps_take_a_warm_up() {
    // 6 units: unit 0 is the initial crawl, units 1..=2 warm up, units 3..=5 are judged.
    let server = start(60, 6, Duration::ZERO).await;
    let mut c = HttpClient::new(&server.url()).unwrap();
    let (status, run) = c
        .send_json(
            Method::POST,
            "/api/runs",
            &json!({"policy": "nad", "budget": 3, "mode": "online", "warmup_units": 2}),
        )
        .await
        .unwrap();
    assert_eq!(status, StatusCode::ACCEPTED, "{run}");
    assert_eq!(run["warmup_units"], 2, "{run}");
    let id = run["id"].as_u64().unwrap();
    let body = wait_for_status(&mut c, id, &["done"]).await;
    let info = &body["run"];
    assert_eq!(info["units_total"], 3, "{info}");
    assert_eq!(info["units_done"], 3, "{info}");
    assert_eq!(info["latest"]["unit"], 5, "{info}");
    // A warm-up that leaves nothing to judge is a 400 naming the field and the limit.
    let (status, err) = c
        .send_json(
            Method::POST,
            "/api/runs",
            &json!({"policy": "nad", "budget": 3, "warmup_units": 5}),
        )
        .await
        .unwrap();
    assert_eq!(status, StatusCode::BAD_REQUEST, "{err}");
    let message = err["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("warmup_units") && message.contains("at most 4"),
        "{message}"
    );
    // Sweeps pass it to every run, and runs that differ in it are different series.
    let (status, sweep) = c
        .send_json(
            Method::POST,
            "/api/compare",
            &json!({"policies": ["nad"], "budgets": [3], "mode": "online", "warmup_units": 2}),
        )
        .await
        .unwrap();
    assert_eq!(status, StatusCode::ACCEPTED, "{sweep}");
    let sweep_id = sweep["sweep"].as_u64().unwrap();
    let sweep_run = sweep["runs"][0].as_u64().unwrap();
    let body = wait_for_status(&mut c, sweep_run, &["done"]).await;
    assert_eq!(body["run"]["warmup_units"], 2);
    let (status, cold) = c
        .send_json(
            Method::POST,
            "/api/runs",
            &json!({"policy": "nad", "budget": 3, "mode": "online"}),
        )
        .await
        .unwrap();
    assert_eq!(status, StatusCode::ACCEPTED, "{cold}");
    wait_for_status(&mut c, cold["id"].as_u64().unwrap(), &["done"]).await;
    let (_, all) = c.get_json("/api/compare?sweep=all").await.unwrap();
    let series: Vec<&str> = all["curves"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["policy"].as_str())
        .filter(|p| p.starts_with("nad"))
        .collect();
    assert!(
        series.iter().any(|p| p.contains("warm-up 2"))
            && series.iter().any(|p| p.contains("warm-up 0")),
        "{series:?} (sweep {sweep_id})"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_learned_function_comes_inline_never_from_a_path_the_request_names() {
    let server = start(60, 6, Duration::ZERO).await;
    let mut c = HttpClient::new(&server.url()).unwrap();
    for (path, body) in [
        (
            "/api/runs",
            json!({"policy": "gp4c", "budget": 4, "params": {"function": "/etc/passwd"}}),
        ),
        (
            "/api/compare",
            json!({"policies": ["gp4c"], "budgets": [2], "params": {"function": "/etc/passwd"}}),
        ),
    ] {
        let (status, err) = c.send_json(Method::POST, path, &body).await.unwrap();
        assert_eq!(status, StatusCode::BAD_REQUEST, "{path}: {err}");
        assert!(err.to_string().contains("`function`"), "{path}: {err}");
    }
    let (status, run) = c
        .send_json(
            Method::POST,
            "/api/runs",
            &json!({"policy": "gp4c", "budget": 4, "params": {"expr": "t * X"}}),
        )
        .await
        .unwrap();
    assert_eq!(status, StatusCode::ACCEPTED, "{run}");
    let id = run["id"].as_u64().unwrap();
    wait_for_status(&mut c, id, &["done"]).await;
}

/// `GET /api/quality` describes the simulated Web: pages, units and, for a corpus read from
/// several collections, each one's capture period and sites (aligned at its own first unit);
/// the sampling policies run over HTTP on such a corpus.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quality_describes_a_multi_collection_corpus() {
    use refresher::corpus::generate::{generate_site, GeneratorConfig};
    use refresher::corpus::ingest::{load_collections, IngestOptions};

    let dir = tempfile::tempdir().unwrap();
    let site = |name: &str, host: &str, sites: usize, origin: i64| {
        generate_site(
            &GeneratorConfig {
                pages: 40,
                weeks: 4,
                queries: 400,
                host: host.to_string(),
                sites,
                origin,
                ..GeneratorConfig::default()
            },
            &dir.path().join(name),
        )
        .unwrap()
    };
    let wiki_site = site("wiki", "wiki.example", 1, GeneratorConfig::default().origin);
    // 2013-03-03T00:00:00Z
    let old = site("old", "old.example", 2, 1_362_268_800).corpus_dir;
    let wiki = wiki_site.corpus_dir.clone();
    let sources = [
        (wiki.clone(), IngestOptions::default()),
        (old.clone(), IngestOptions::default()),
    ];
    let (corpus, _) = load_collections(&sources).unwrap();
    let pages = corpus.page_count();
    let log = refresher::querylog::layouts::read_log(
        &wiki_site.query_log,
        &refresher::querylog::layouts::ReadOptions::default(),
    )
    .unwrap();
    let workload = refresher::querylog::workload::Workload::build(
        &log,
        &corpus,
        &refresher::querylog::workload::WorkloadOptions {
            top_n: None,
            filter: refresher::querylog::workload::RelevanceFilter::None,
        },
    );
    let state = tokio::task::spawn_blocking(move || {
        refresher::server::AppState::build(
            corpus,
            Some(workload),
            refresher::server::ServerOptions::new(refresher::server::Policies::registry()),
        )
    })
    .await
    .unwrap()
    .unwrap();
    let (addr, _handle) = refresher::server::spawn(state, "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let mut client = HttpClient::new(&format!("http://{addr}")).unwrap();
    let (status, body) = client.get_json("/api/quality").await.unwrap();
    assert_eq!(status, StatusCode::OK);
    let described = &body["corpus"];
    assert_eq!(described["pages"], pages);
    assert_eq!(described["units"], 4);
    assert_eq!(described["collections"]["alignment"], "first-unit");
    let list = described["collections"]["list"].as_array().unwrap();
    assert_eq!(list.len(), 2);
    assert_eq!(list[1]["path"], old.display().to_string());
    assert_eq!(list[1]["first_capture_date"], "2013-03-03T00:00:00Z");
    assert_eq!(list[1]["sites"].as_array().unwrap().len(), 2);
    let site_pages: u64 = list
        .iter()
        .flat_map(|c| c["sites"].as_array().unwrap())
        .map(|s| s["pages"].as_u64().unwrap())
        .sum();
    assert_eq!(site_pages, pages as u64);

    // Site-level and cluster sampling over the three sites, from the API.
    for policy in ["gsb", "cls", "sample-db"] {
        let info = &run_to_done(
            &mut client,
            &json!({"policy": policy, "budget": 8, "mode": "online"}),
        )
        .await;
        assert_eq!(info["units_done"], 3, "{policy}: {info}");
        assert!(info["latest"]["refreshed"].as_u64().unwrap() <= 8, "{info}");
        let quality = info["mean_quality"].as_f64().unwrap();
        assert!(quality > 0.0 && quality <= 1.0, "{policy}: {info}");
    }
}

/// Change signals reach a run and a sweep from the API: the run reports them and the trust
/// its policy learned; a spec that does not parse is a 400 naming `signals`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_and_sweeps_take_change_signals() {
    let server = start(60, 6, Duration::ZERO).await;
    let mut c = HttpClient::new(&server.url()).unwrap();
    let info = &run_to_done(
        &mut c,
        &json!({"policy": "ebr", "budget": 4, "mode": "online", "signals": ["lastmod", "feed:items=5"]}),
    )
    .await;
    assert_eq!(
        info["signals"],
        json!([
            "lastmod:coverage=1,recall=1,false-positive=0,delay=0",
            "feed:items=5,delay=0"
        ]),
        "{info}"
    );
    let (_, plain) = c
        .send_json(
            Method::POST,
            "/api/runs",
            &json!({"policy": "sbr", "budget": 4}),
        )
        .await
        .unwrap();
    assert_eq!(plain["signals"], json!(["none"]), "{plain}");
    let (status, err) = c
        .send_json(
            Method::POST,
            "/api/runs",
            &json!({"policy": "sbr", "budget": 4, "signals": ["lastmod:recall=2"]}),
        )
        .await
        .unwrap();
    assert_eq!(status, StatusCode::BAD_REQUEST, "{err}");
    assert!(err.to_string().contains("signals"), "{err}");
    let (status, sweep) = c
        .send_json(
            Method::POST,
            "/api/compare",
            &json!({"policies": ["sbr"], "budgets": [2], "mode": "online", "signals": ["feed"]}),
        )
        .await
        .unwrap();
    assert_eq!(status, StatusCode::ACCEPTED, "{sweep}");
    let sweep_run = sweep["runs"][0].as_u64().unwrap();
    let body = wait_for_status(&mut c, sweep_run, &["done"]).await;
    assert_eq!(body["run"]["signals"], json!(["feed:items=50,delay=0"]));
    let (_, comparison) = c.get_json("/api/compare").await.unwrap();
    assert_eq!(
        comparison["signals"],
        json!(["feed:items=50,delay=0"]),
        "{comparison}"
    );
}

/// `serve --policy … --signals`: the served engine's policy reads the replayed site's signals
/// and `GET /api/engine` reports them; a crawling engine refuses modelled signals (it reads the
/// crawled site's own).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_served_engine_reads_modelled_change_signals() {
    use refresher::server::engine::RefreshSpec;
    let server = start(80, 8, Duration::ZERO).await;
    let mut c = HttpClient::new(&server.url()).unwrap();
    let signals = refresher::signal::SignalSettings::parse(&["lastmod"]).unwrap();
    let spec = RefreshSpec {
        policy: "ebr".into(),
        params: Vec::new(),
        budget: 8,
        unit_seconds: 0.05,
        seed: 1,
        warmup_units: 0,
        crawl: None,
        signals: signals.clone(),
    };
    let refused = RefreshSpec {
        crawl: Some(refresher::server::engine::CrawlSource {
            options: refresher::fetch::http::HttpOptions::default(),
            urls: vec!["http://127.0.0.1:9/".into()],
            max_pages: 10,
            advance_clock: None,
        }),
        ..spec.clone()
    };
    let state = server.state.clone();
    let err = tokio::task::spawn_blocking(move || state.start_engine(&refused))
        .await
        .unwrap()
        .unwrap_err();
    assert!(err.to_string().contains("--signals"), "{err}");
    let state = server.state.clone();
    tokio::task::spawn_blocking(move || state.start_engine(&spec))
        .await
        .unwrap()
        .unwrap();
    let engine = engine_when_finished(&mut c).await;
    assert_eq!(engine["signals"], json!(signals.labels()), "{engine}");
    assert!(engine["error"].is_null(), "{engine}");
    assert!(engine["refreshes"].as_u64().unwrap() > 0, "{engine}");
}

//! Browser tests in real headless Chromium, driven through ChromeDriver's WebDriver HTTP API
//! (with the crate's own small HTTP client, so no WebDriver crate is needed): search and page
//! through results, watch the dashboard chart grow while a run is going, and read the compare
//! page's Fig. 4 table. Screenshots go to `$CARGO_TARGET_TMPDIR/browser-screenshots/`.
//!
//! Needs Debian's `chromium` and `chromium-driver` (installed by `.ci/run`). Without them the
//! test fails under CI (`CI` set) and is skipped with a printed reason elsewhere.

mod server_support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;
use hyper::Method;
use refresher::client::http::HttpClient;
use refresher::corpus::LiveWeb;
use serde_json::{json, Value};

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// A ChromeDriver process and one browser session; both end on drop.
struct Browser {
    driver: Child,
    client: HttpClient,
    session: String,
    shots: PathBuf,
    _profile: tempfile::TempDir,
}

impl Drop for Browser {
    fn drop(&mut self) {
        // Ending chromedriver ends the browsers it started.
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

impl Browser {
    async fn start() -> Option<Browser> {
        if !Path::new(CHROMIUM).exists() || !Path::new(CHROMEDRIVER).exists() {
            let why = format!(
                "{CHROMIUM} or {CHROMEDRIVER} missing (apt-get install chromium chromium-driver)"
            );
            if std::env::var_os("CI").is_some() {
                panic!("browser tests need Chromium under CI: {why}");
            }
            eprintln!("SKIPPED: {why}");
            return None;
        }
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let driver = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting chromedriver");
        let mut client = HttpClient::new(&format!("http://127.0.0.1:{port}")).unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Ok((_, v)) = client.get_json("/status").await {
                if v["value"]["ready"] == true {
                    break;
                }
            }
            assert!(
                Instant::now() < deadline,
                "chromedriver did not become ready"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let profile = tempfile::tempdir().unwrap();
        let args = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--window-size=1280,900",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain([format!("--user-data-dir={}", profile.path().display())])
        .collect::<Vec<_>>();
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": CHROMIUM, "args": args}
        }}});
        let (status, v) = client
            .send_json(Method::POST, "/session", &caps)
            .await
            .unwrap();
        assert!(status.is_success(), "new session: {v}");
        let session = v["value"]["sessionId"].as_str().unwrap().to_string();
        let shots = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("browser-screenshots");
        std::fs::create_dir_all(&shots).unwrap();
        Some(Browser {
            driver,
            client,
            session,
            shots,
            _profile: profile,
        })
    }

    async fn call(&mut self, method: Method, path: &str, body: Value) -> Value {
        let path = format!("/session/{}{path}", self.session);
        let (status, v) = if method == Method::GET {
            self.client.get_json(&path).await.unwrap()
        } else {
            self.client.send_json(method, &path, &body).await.unwrap()
        };
        assert!(status.is_success(), "{path}: {v}");
        v["value"].clone()
    }

    async fn goto(&mut self, url: &str) {
        self.call(Method::POST, "/url", json!({"url": url})).await;
    }

    async fn find(&mut self, css: &str) -> String {
        let v = self
            .call(
                Method::POST,
                "/element",
                json!({"using": "css selector", "value": css}),
            )
            .await;
        v.as_object()
            .and_then(|o| o.values().next())
            .and_then(|e| e.as_str())
            .expect("element id")
            .to_string()
    }

    async fn type_into(&mut self, css: &str, text: &str) {
        let id = self.find(css).await;
        self.call(
            Method::POST,
            &format!("/element/{id}/value"),
            json!({"text": text}),
        )
        .await;
    }

    async fn click(&mut self, css: &str) {
        let id = self.find(css).await;
        self.call(Method::POST, &format!("/element/{id}/click"), json!({}))
            .await;
    }

    /// Runs `script` (a function body; `return` a value) in the page.
    async fn eval(&mut self, script: &str) -> Value {
        self.call(
            Method::POST,
            "/execute/sync",
            json!({"script": script, "args": []}),
        )
        .await
    }

    /// Polls `script` until it returns a truthy value; returns it.
    async fn wait_for(&mut self, script: &str, what: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let v = self.eval(script).await;
            let truthy = match &v {
                Value::Null => false,
                Value::Bool(b) => *b,
                Value::Number(n) => n.as_f64() != Some(0.0),
                Value::String(s) => !s.is_empty(),
                _ => true,
            };
            if truthy {
                return v;
            }
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn screenshot(&mut self, name: &str) {
        let v = self.call(Method::GET, "/screenshot", Value::Null).await;
        let png = base64::engine::general_purpose::STANDARD
            .decode(v.as_str().unwrap())
            .unwrap();
        assert!(png.starts_with(b"\x89PNG"));
        let path = self.shots.join(name);
        std::fs::write(&path, png).unwrap();
        eprintln!("screenshot: {}", path.display());
    }

    async fn quit(&mut self) {
        let path = format!("/session/{}", self.session);
        let _ = self.client.send(Method::DELETE, &path, None).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_dashboard_and_compare_pages_work_in_chromium() {
    let Some(mut browser) = Browser::start().await else {
        return;
    };
    let server = server_support::start(150, 14, Duration::from_millis(300)).await;
    let base = server.url();

    // Search: type a query, see ranked results with highlighted terms and stale markers, page on.
    let (query, expected) = {
        let repo = server.state.search.repo();
        let query = server
            .log
            .submissions
            .iter()
            .map(|s| s.query.clone())
            .find(|q| {
                repo.search(q, 0, 1)
                    .map(|r| r.total_hits > 10)
                    .unwrap_or(false)
            })
            .expect("a logged query with more than 10 hits");
        let expected = repo.search(&query, 0, 20).unwrap();
        (query, expected)
    };
    browser.goto(&format!("{base}/")).await;
    browser.type_into("#q", &query).await;
    browser.click("#go").await;
    let n = browser
        .wait_for(
            "return document.querySelectorAll('#results li').length",
            "search results",
        )
        .await;
    assert_eq!(n, 10);
    let shown = browser
        .eval(
            "return [...document.querySelectorAll('#results .result-url')].map(e => e.textContent)",
        )
        .await;
    let urls: Vec<&str> = expected.hits.iter().map(|h| h.url.as_str()).collect();
    assert_eq!(shown, json!(urls[..10]));
    let marks = browser
        .eval("return document.querySelectorAll('#results .snippet b').length")
        .await;
    assert!(marks.as_u64().unwrap() >= 1);
    let badges = browser
        .eval("return document.querySelectorAll('#results .badge.stale, #results .badge.fresh').length")
        .await;
    assert_eq!(badges, 10);
    browser.screenshot("search.png").await;
    // The pager shows when there is more than a page, and `hidden` really hides it (a CSS
    // `display` rule once overrode the attribute).
    let pager_display = "return getComputedStyle(document.getElementById('pager')).display";
    assert_ne!(browser.eval(pager_display).await, json!("none"));
    browser
        .eval("document.getElementById('pager').hidden = true; return true")
        .await;
    assert_eq!(browser.eval(pager_display).await, json!("none"));
    browser
        .eval("document.getElementById('pager').hidden = false; return true")
        .await;
    browser.click("#next").await;
    browser
        .wait_for(
            "return document.querySelector('#results .rank')?.textContent.startsWith('11.')",
            "the second page",
        )
        .await;
    let second = browser
        .eval("return document.querySelector('#results .result-url').textContent")
        .await;
    assert_eq!(second, json!(urls[10]));
    // A page past the end says so in words (not an API error) and offers the way back.
    let far = format!("{base}/?q={}&offset=9990&limit=10", query.replace(' ', "+"));
    browser.goto(&far).await;
    browser
        .wait_for(
            "return document.getElementById('summary').textContent.startsWith('no results on this page')",
            "the past-the-end message",
        )
        .await;
    let prev_enabled = browser
        .eval("return !document.getElementById('pager').hidden && !document.getElementById('prev').disabled")
        .await;
    assert_eq!(prev_enabled, json!(true));

    // Dashboard: start a slow run from the form and watch the quality chart grow.
    browser.goto(&format!("{base}/dashboard")).await;
    browser
        .wait_for(
            "return document.querySelectorAll('#policy option').length",
            "policies",
        )
        .await;
    browser
        .eval("document.getElementById('policy').value = 'test-slow'; document.getElementById('budget').value = '5'; return true")
        .await;
    browser.click("#start").await;
    let points =
        "const l = document.querySelector('#chart-quality polyline[data-series^=\"#1 \"]'); \
                  return l ? Number(l.dataset.points) : 0";
    let first = browser
        .wait_for(points, "the first unit on the chart")
        .await;
    let first = first.as_u64().unwrap();
    let later = browser
        .wait_for(
            &format!("const l = document.querySelector('#chart-quality polyline[data-series^=\"#1 \"]'); \
                      return l && Number(l.dataset.points) > {first} ? Number(l.dataset.points) : 0"),
            "the chart to update",
        )
        .await;
    assert!(later.as_u64().unwrap() > first);
    browser.screenshot("dashboard-running.png").await;
    browser
        .wait_for(
            "return document.querySelector('#runs tr[data-run=\"1\"]')?.dataset.status === 'done'",
            "the run to finish",
        )
        .await;
    let final_points = browser.eval(points).await;
    assert_eq!(final_points, json!(server.corpus.units() - 1));
    browser.screenshot("dashboard-done.png").await;

    // Compare: a sweep started from the form (two policies, SBR over two thresholds), then
    // its Fig. 4 curves, table and best θ per budget.
    browser.goto(&format!("{base}/compare")).await;
    browser
        .wait_for(
            "return document.querySelectorAll('#policies input').length > 0",
            "the policy checkboxes",
        )
        .await;
    // Checked at first: what a comparison runs by default (paper 003's schemes, baselines).
    let checked = browser
        .eval("return [...document.querySelectorAll('#policies input:checked')].map(i => i.value)")
        .await;
    assert_eq!(
        checked,
        json!(refresher::policy::registry::DEFAULT_COMPARISON),
        "{checked}"
    );
    browser
        .eval(
            "for (const i of document.querySelectorAll('#policies input')) \
               i.checked = i.value === 'round-robin' || i.value === 'sbr'; \
             document.getElementById('budgets').value = '0, 3, 10'; \
             document.getElementById('thetas').value = '0.1, 0.9'; \
             document.getElementById('start-sweep').click(); return true",
        )
        .await;
    // round-robin: 3 runs; sbr: 1 at B = 0 plus 2 thresholds × 2 budgets.
    browser
        .wait_for(
            "return document.getElementById('message').textContent.includes('8/8 runs finished')",
            "the sweep to finish",
        )
        .await;
    let curves = browser
        .eval("return document.querySelectorAll('#chart-fig4 polyline').length")
        .await;
    assert_eq!(curves, 2);
    let rows = browser
        .eval("return document.querySelectorAll('#fig4-table tbody tr').length")
        .await;
    assert_eq!(rows, 2);
    let cells = browser
        .eval("return document.querySelectorAll('#fig4-table tbody td').length")
        .await;
    // Per policy: its name, six absolute targets and five shares of the staleness gap.
    assert_eq!(cells, 2 * (1 + 6 + 5));
    let best_thetas = browser
        .eval(
            "return [...document.querySelectorAll('#curves tbody tr')] \
               .filter(r => r.cells[0].textContent === 'sbr' && r.cells[1].textContent !== '0') \
               .map(r => r.cells[2].textContent)",
        )
        .await;
    let best_thetas = best_thetas.as_array().expect("an array of θ cells").clone();
    assert_eq!(best_thetas.len(), 2, "{best_thetas:?}");
    for t in &best_thetas {
        assert!(t == "0.1" || t == "0.9", "{best_thetas:?}");
    }
    browser.screenshot("compare.png").await;
    // Issue 14: Fig. 4 reads like a plotting tool's: B on a log axis with round ticks, B = 0 a
    // labelled reference line (not a point at the axis end), quality never past 1.
    let y_ticks = browser
        .eval("return [...document.querySelectorAll('#chart-fig4 .y-tick')].map(t => Number(t.textContent))")
        .await;
    let y_ticks: Vec<f64> = serde_json::from_value(y_ticks).unwrap();
    assert!(!y_ticks.is_empty());
    for t in &y_ticks {
        let norm = t / 10f64.powf(t.log10().floor());
        assert!(
            [1.0, 2.0, 5.0].iter().any(|m| (norm - m).abs() < 1e-9),
            "{y_ticks:?}"
        );
    }
    let x_ticks = browser
        .eval("return [...document.querySelectorAll('#chart-fig4 .x-tick')].map(t => Number(t.textContent))")
        .await;
    let x_ticks: Vec<f64> = serde_json::from_value(x_ticks).unwrap();
    assert!(x_ticks.iter().all(|&x| x <= 1.0), "{x_ticks:?}");
    let zero = browser
        .eval("return document.querySelector('#chart-fig4 .zero-ref-label')?.textContent")
        .await;
    assert!(zero.as_str().unwrap().starts_with("B = 0: "), "{zero}");
    let tip = browser
        .eval("return document.querySelector('#chart-fig4 circle title')?.textContent")
        .await;
    assert!(tip.as_str().unwrap().contains("budget B"), "{tip}");
    let dash_ticks = browser
        .eval("return [...document.querySelectorAll('#chart-fresh .y-tick')].map(t => Number(t.textContent))")
        .await;
    let dash_ticks: Vec<f64> = serde_json::from_value(dash_ticks).unwrap();
    assert!(dash_ticks.iter().all(|&y| y <= 1.0), "{dash_ticks:?}");
    // The "show" list offers the sweep just run and every run (the sweep's 8 and the
    // dashboard's run).
    browser
        .eval(
            "const v = document.getElementById('view'); v.value = 'all'; \
             v.dispatchEvent(new Event('change')); return true",
        )
        .await;
    browser
        .wait_for(
            "return document.getElementById('message').textContent.startsWith('All runs: 9/9 runs finished')",
            "the all-runs view",
        )
        .await;
    let offered = browser
        .eval("return [...document.querySelectorAll('#view option')].map(o => o.value)")
        .await;
    assert_eq!(offered, json!(["", "all", "1"]));
    browser.quit().await;
}

/// Issue 12: the dashboard shows the served engine's quality moving unit by unit, and a search
/// in the UI returns a page's new content after the engine refreshed it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_served_engine_moves_on_the_dashboard_and_search_finds_new_content() {
    use refresher::corpus::PageId;
    use refresher::server::engine::RefreshSpec;
    let Some(mut browser) = Browser::start().await else {
        return;
    };
    let server = server_support::start(80, 8, Duration::ZERO).await;
    let base = server.url();
    let state = server.state.clone();
    tokio::task::spawn_blocking(move || {
        state.start_engine(&RefreshSpec {
            policy: "round-robin".into(),
            params: Vec::new(),
            budget: 12,
            // Slow enough that the dashboard (polling each second) sees a unit before the last
            // even on a busy 2-core machine; 7 units take ~10 s.
            unit_seconds: 1.5,
            seed: 1,
            crawl: None,
        })
    })
    .await
    .unwrap()
    .unwrap();
    browser.goto(&format!("{base}/dashboard")).await;
    let first = browser
        .wait_for(
            "const p = document.getElementById('engine'); \
             return p && !p.hidden && Number(p.dataset.unit) >= 1 ? Number(p.dataset.unit) : 0",
            "the engine panel",
        )
        .await;
    browser
        .wait_for(
            &format!("return Number(document.getElementById('engine').dataset.unit) > {first}"),
            "the engine to move on",
        )
        .await;
    let rows = browser
        .eval("return document.querySelectorAll('#engine-units tbody tr').length")
        .await;
    assert!(rows.as_u64().unwrap() >= 2, "{rows}");
    browser.screenshot("dashboard-engine.png").await;
    let last = server.corpus.units() - 1;
    browser
        .wait_for(
            &format!("return Number(document.getElementById('engine').dataset.unit) === {last}"),
            "the engine to reach the last unit",
        )
        .await;
    let qualities = browser
        .eval("return [...document.querySelectorAll('#engine-units td.quality')].map(t => t.textContent)")
        .await;
    let mut distinct: Vec<String> = serde_json::from_value(qualities).unwrap();
    distinct.dedup();
    assert!(distinct.len() > 1, "quality never moved: {distinct:?}");

    // A word only a refreshed copy holds, searched in the UI, finds that page.
    let status = server.state.engine.get().unwrap().status();
    let corpus = &server.corpus;
    let found = status.per_unit.iter().find_map(|u| {
        u.refreshed_urls.iter().find_map(|url| {
            let p: PageId = corpus.page_id(url)?;
            let now = corpus.page_at(p, last).present()?;
            let old = corpus.page_at(p, 0).present();
            if now.unit > u.unit || old.is_some_and(|o| o.unit == now.unit) {
                return None;
            }
            let word = now.text.split_whitespace().find(|w| {
                w.len() > 4
                    && w.chars().all(|c| c.is_ascii_lowercase())
                    && old.is_none_or(|o| !o.text.split_whitespace().any(|x| x == *w))
            })?;
            Some((url.clone(), word.to_string()))
        })
    });
    let (url, word) = found.expect("a refreshed page with a new word");
    browser.goto(&format!("{base}/?q={word}&limit=50")).await;
    let shown = browser
        .wait_for(
            &format!(
                "const urls = [...document.querySelectorAll('#results .result-url')].map(e => e.textContent); \
                 return urls.includes({}) ? urls.length : 0",
                serde_json::to_string(&url).unwrap()
            ),
            "the refreshed page in the results",
        )
        .await;
    assert!(shown.as_u64().unwrap() >= 1);
    browser.screenshot("search-after-refresh.png").await;
    browser.quit().await;
}

/// Issue 16: the WebFountain page solves the example instance and draws the plan.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_webfountain_page_solves_the_example_instance() {
    let Some(mut browser) = Browser::start().await else {
        return;
    };
    let server = server_support::start(40, 3, Duration::ZERO).await;
    browser.goto(&format!("{}/webfountain", server.url())).await;
    browser
        .eval("document.getElementById('wf-strategy').value = '2'; document.getElementById('wf-solve').click(); return 0")
        .await;
    let objective = browser
        .wait_for(
            "const s = document.getElementById('wf-summary'); \
             return s && s.dataset.objective ? Number(s.dataset.objective) : 0",
            "the plan",
        )
        .await;
    let objective = objective.as_f64().unwrap();
    assert!(
        (objective - 196.4532).abs() / 196.4532 < 1e-4,
        "{objective}"
    );
    let drawn = browser
        .eval("return [...document.querySelectorAll('#wf-chart polyline')].map(p => Number(p.dataset.points))")
        .await;
    assert_eq!(drawn, serde_json::json!([6]));
    let rows = browser
        .eval("return document.querySelectorAll('#wf-crawls tbody tr').length")
        .await;
    assert_eq!(rows, serde_json::json!(12));
    // A broken instance is reported, not thrown.
    browser
        .eval("document.getElementById('wf-instance').value = '{\"periods\": 0}'; document.getElementById('wf-solve').click(); return 0")
        .await;
    browser
        .wait_for(
            "const e = document.querySelector('#wf-message .error'); return e ? e.textContent.length : 0",
            "the error message",
        )
        .await;
    browser.screenshot("webfountain.png").await;
    browser.quit().await;
}

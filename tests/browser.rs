//! Browser tests in real headless Chromium, driven through ChromeDriver's WebDriver HTTP API
//! (with the crate's own small HTTP client, so no WebDriver crate is needed): search and page
//! through results, watch the dashboard chart grow while a run is going, and read the compare
//! page's Fig. 4 table. Charts are read from their uPlot instances (`window.refresherCharts`):
//! scales, tick values, data, the B = 0 reference labels, and the tooltip and legend after a
//! mousemove over a point; every number on a page must carry a hover title. Screenshots (whole
//! pages and the chart panels) go to `$CARGO_TARGET_TMPDIR/browser-screenshots/`.
//!
//! Needs Debian's `chromium` and `chromium-driver` (installed by `.ci/run`). Without them the
//! test fails under CI (`CI` set) and is skipped with a printed reason elsewhere.

mod common;
mod server_support;

use std::path::PathBuf;
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
        if !common::tools_present(
            &[CHROMIUM, CHROMEDRIVER],
            "apt-get install chromium chromium-driver, as .ci/run does",
        ) {
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
        self.save_screenshot("/screenshot", name).await;
    }

    /// A screenshot of the element `css` picks, whole (scrolled into view).
    async fn screenshot_of(&mut self, css: &str, name: &str) {
        let id = self.find(css).await;
        self.save_screenshot(&format!("/element/{id}/screenshot"), name)
            .await;
    }

    async fn save_screenshot(&mut self, endpoint: &str, name: &str) {
        let v = self.call(Method::GET, endpoint, Value::Null).await;
        let png = base64::engine::general_purpose::STANDARD
            .decode(v.as_str().unwrap())
            .unwrap();
        assert!(png.starts_with(b"\x89PNG"));
        let path = self.shots.join(name);
        std::fs::write(&path, png).unwrap();
        eprintln!("screenshot: {}", path.display());
    }

    /// Text pieces with a digit, inside the elements `selectors` picks, that no element around
    /// them explains with a `title` (issue 14: every number says what it means on hover).
    async fn unexplained_numbers(&mut self, selectors: &str) -> Vec<String> {
        let script = format!(
            "const out = []; \
             for (const root of document.querySelectorAll({sel})) {{ \
               const walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT); \
               for (let t = walk.nextNode(); t; t = walk.nextNode()) {{ \
                 if (!/[0-9]/.test(t.textContent)) continue; \
                 let e = t.parentElement; \
                 while (e && !(e.title && e.title.trim())) e = e === root ? null : e.parentElement; \
                 if (!e) out.push(t.textContent); \
               }} \
             }} return out",
            sel = serde_json::to_string(selectors).unwrap()
        );
        serde_json::from_value(self.eval(&script).await).unwrap()
    }

    /// Asserts that `selectors` pick at least one element holding a number, and that every
    /// number in them carries a hover title.
    async fn assert_numbers_explained(&mut self, selectors: &str) {
        let numbers = self
            .eval(&format!(
                "return [...document.querySelectorAll({})].filter(e => /[0-9]/.test(e.textContent)).length",
                serde_json::to_string(selectors).unwrap()
            ))
            .await;
        assert!(numbers.as_u64().unwrap() > 0, "no numbers in {selectors}");
        let bare = self.unexplained_numbers(selectors).await;
        assert!(
            bare.is_empty(),
            "numbers without a title in {selectors}: {bare:?}"
        );
    }

    /// What uPlot drew for the chart in `#id`: the scales, each axis' tick values, the series
    /// and their points, the B = 0 reference labels.
    async fn chart(&mut self, id: &str) -> Chart {
        let v = self
            .eval(&format!(
                "const u = window.refresherCharts[{id:?}]; if (!u) return null; \
                 return {{ x: {{ min: u.scales.x.min, max: u.scales.x.max, distr: u.scales.x.distr, ori: u.scales.x.ori }}, \
                   y: {{ min: u.scales.y.min, max: u.scales.y.max, distr: u.scales.y.distr, ori: u.scales.y.ori }}, \
                   x_ticks: u.axes[0]._splits, y_ticks: u.axes[1]._splits, \
                   series: u.series.slice(1).map(s => s.label), data: u.data, \
                   refs: [...u.root.querySelectorAll('.zero-ref-label')].map(e => e.textContent) }}"
            ))
            .await;
        serde_json::from_value(v).unwrap_or_else(|e| panic!("chart {id}: {e}"))
    }

    /// Moves the pointer over point `idx` of series `series` (1-based, as uPlot counts) of the
    /// chart in `#id` and returns the tooltip's text and the legend's value for that series.
    async fn hover(&mut self, id: &str, series: usize, idx: usize) -> (String, String) {
        self.eval(&format!(
            "const u = window.refresherCharts[{id:?}]; \
             const x = u.data[0][{idx}], y = u.data[{series}][{idx}]; \
             const flip = u.scales.x.ori === 1; \
             const left = u.valToPos(flip ? y : x, flip ? 'y' : 'x'), top = u.valToPos(flip ? x : y, flip ? 'x' : 'y'); \
             const r = u.over.getBoundingClientRect(); \
             u.over.dispatchEvent(new MouseEvent('mouseenter', {{ clientX: r.left + left, clientY: r.top + top }})); \
             u.over.dispatchEvent(new MouseEvent('mousemove', {{ clientX: r.left + left, clientY: r.top + top, bubbles: true }})); \
             return true"
        ))
        .await;
        let v = self
            .wait_for(
                &format!(
                    "const u = window.refresherCharts[{id:?}]; const tip = u.over.querySelector('.chart-tip'); \
                     return tip && !tip.hidden ? [tip.textContent, u.root.querySelectorAll('.u-legend .u-series')[{series}].querySelector('.u-value').textContent] : null"
                ),
                "the chart's tooltip",
            )
            .await;
        serde_json::from_value(v).unwrap()
    }

    async fn quit(&mut self) {
        let path = format!("/session/{}", self.session);
        let _ = self.client.send(Method::DELETE, &path, None).await;
    }
}

/// A uPlot chart as the page holds it (see `Browser::chart`).
#[derive(Debug, serde::Deserialize)]
struct Chart {
    x: ChartScale,
    y: ChartScale,
    x_ticks: Vec<f64>,
    y_ticks: Vec<f64>,
    series: Vec<String>,
    data: Vec<Vec<Option<f64>>>,
    refs: Vec<String>,
}

#[derive(Debug, serde::Deserialize)]
struct ChartScale {
    min: f64,
    max: f64,
    /// uPlot's distribution: 1 linear, 3 logarithmic.
    distr: u8,
    /// 0 horizontal, 1 vertical.
    ori: u8,
}

/// Whether `v` is 1, 2 or 5 × 10^k.
fn is_round(v: f64) -> bool {
    if v == 0.0 {
        return true;
    }
    let a = v.abs();
    let norm = a / 10f64.powf(a.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .any(|m| (norm - m).abs() < 1e-6)
}

/// Whether the linear ticks are evenly spaced multiples of one round step.
fn is_round_grid(ticks: &[f64]) -> bool {
    let step = match ticks {
        [a, b, ..] => b - a,
        _ => return !ticks.is_empty(),
    };
    is_round(step)
        && ticks.iter().all(|t| {
            let k = t / step;
            (k - k.round()).abs() < 1e-6
        })
        && ticks
            .windows(2)
            .all(|w| ((w[1] - w[0]) - step).abs() < 1e-9)
}

/// Checks a tooltip read `<series>: <x label> <x>, <y label> <y>` for the point at `idx` of a
/// series holding the hovered value `hovered_y` (two curves may share a point; either may be
/// named), and that the legend shows that series' value.
fn assert_tip(c: &Chart, idx: usize, x_label: &str, y_label: &str, hovered_y: f64, tip: &str) {
    let (name, rest) = tip.split_once(": ").unwrap_or_else(|| panic!("{tip}"));
    let s = 1 + c
        .series
        .iter()
        .position(|n| n == name)
        .unwrap_or_else(|| panic!("{tip}"));
    let x = c.data[0][idx].unwrap();
    let y = c.data[s][idx].unwrap();
    assert!((y - hovered_y).abs() < 1e-9, "{tip}: not the hovered point");
    let (xs, ys) = rest
        .strip_prefix(&format!("{x_label} "))
        .and_then(|r| r.split_once(&format!(", {y_label} ")))
        .unwrap_or_else(|| panic!("{tip}"));
    assert!(close(xs.parse().unwrap(), x), "{tip} vs x {x}");
    assert!(close(ys.parse().unwrap(), y), "{tip} vs y {y}");
}

/// Equal to the digits a chart label shows (six significant digits).
fn close(shown: f64, exact: f64) -> bool {
    (shown - exact).abs() <= 1e-5 * exact.abs().max(1e-3)
}

/// A share's chart: y never past 1, round ticks on both axes.
fn assert_share_chart(name: &str, c: &Chart) {
    assert!(c.y.max <= 1.0 + 1e-12, "{name}: y up to {}", c.y.max);
    assert!(
        c.y_ticks.iter().all(|&t| t <= 1.0 + 1e-12),
        "{name}: {:?}",
        c.y_ticks
    );
    assert!(is_round_grid(&c.y_ticks), "{name}: y ticks {:?}", c.y_ticks);
    if c.x.distr == 3 {
        assert!(
            c.x_ticks.iter().all(|&t| is_round(t)),
            "{name}: x ticks {:?}",
            c.x_ticks
        );
    } else {
        assert!(is_round_grid(&c.x_ticks), "{name}: x ticks {:?}", c.x_ticks);
    }
}

/// Issue 50 item 3 on the compare page: each policy drawn in the style the server's table
/// (src/report/chart_style.rs) gives its family, the legend showing line samples, axis titles
/// with unit and scale, Fig. 4 as a monotone staircase, the B = 0 label above the plot (never
/// over data), and the toggle to the share of the staleness gap recovered.
async fn assert_charts_read_without_a_legend_hunt(browser: &mut Browser) {
    let drawn = browser
        .eval(
            "const u = window.refresherCharts['chart-fig4']; \
             const box = r => [r.left, r.top, r.right, r.bottom]; \
             return { styles: u.series.slice(1).map((s, i) => [s.label, s.stroke(u, i + 1), s.dash || [], s._style.marker]), \
               steps: u.series.slice(1).map(s => s._steps), \
               axes: u.axes.map(a => a.label), \
               samples: u.root.querySelectorAll('.u-legend svg.legend-sample').length, \
               plot: box(u.over.getBoundingClientRect()), \
               labels: [...u.root.querySelectorAll('.zero-ref-label')].map(e => box(e.getBoundingClientRect())) }",
        )
        .await;
    let styles = drawn["styles"].as_array().unwrap();
    assert_eq!(styles.len(), 2, "{drawn}");
    for s in styles {
        let name = s[0].as_str().unwrap();
        let want = refresher::report::chart_style::family_style(name).unwrap();
        assert_eq!(s[1], json!(want.colour), "{name}: {drawn}");
        let dash: Vec<f64> = serde_json::from_value(s[2].clone()).unwrap();
        assert_eq!(dash, want.dash, "{name}: {drawn}");
        assert_eq!(s[3], json!(want.marker), "{name}: {drawn}");
    }
    assert_ne!(styles[0][1], styles[1][1]);
    assert_eq!(drawn["samples"], 2, "a line sample per legend row");
    let axes: Vec<String> = serde_json::from_value(drawn["axes"].clone()).unwrap();
    assert_eq!(axes[0], "budget B, per unit (log scale)", "{axes:?}");
    assert!(axes[1].contains("linear scale"), "{axes:?}");
    // Each staircase: B and quality never fall along it.
    for steps in drawn["steps"].as_array().unwrap() {
        let corners: Vec<(f64, f64)> = serde_json::from_value(steps.clone()).unwrap();
        assert!(corners.len() >= 2, "{steps}");
        for w in corners.windows(2) {
            assert!(w[1].0 >= w[0].0 && w[1].1 >= w[0].1, "{corners:?}");
        }
    }
    let plot: [f64; 4] = serde_json::from_value(drawn["plot"].clone()).unwrap();
    let labels: Vec<[f64; 4]> = serde_json::from_value(drawn["labels"].clone()).unwrap();
    assert_eq!(labels.len(), 1);
    for l in labels {
        let apart = l[2] <= plot[0] || plot[2] <= l[0] || l[3] <= plot[1] || plot[3] <= l[1];
        assert!(apart, "the B = 0 label {l:?} is over the plot {plot:?}");
    }
    // Across: the share of the staleness gap recovered, on an axis of its nines.
    browser.click("#gap-axis").await;
    let gap = browser
        .wait_for(
            "const u = window.refresherCharts['chart-fig4']; \
             return u.axes[1].label.includes('staleness gap') ? \
               { ticks: u.axes[1]._values, refs: [...u.root.querySelectorAll('.zero-ref-label')].map(e => e.textContent) } : null",
            "the gap-share axis",
        )
        .await;
    let ticks: Vec<String> = serde_json::from_value(gap["ticks"].clone()).unwrap();
    assert!(
        !ticks.is_empty() && ticks.iter().all(|t| t.ends_with(" %")),
        "{gap}"
    );
    assert_eq!(gap["refs"], json!(["B = 0: 0 %"]), "{gap}");
    browser
        .screenshot_of(".charts", "compare-charts-gap-share.png")
        .await;
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
        let repo = server.state.search.repo().expect("one repository");
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
    browser
        .assert_numbers_explained("#summary, #page-info, #results .rank, #results .score")
        .await;
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
    // The simulated Web is described above the charts.
    let corpus = browser
        .wait_for(
            "const t = document.getElementById('corpus').textContent; return t.startsWith('Corpus:') ? t : null",
            "the corpus description",
        )
        .await;
    assert!(
        corpus
            .as_str()
            .unwrap()
            .contains(&format!("{} pages", server.corpus.page_count())),
        "{corpus}"
    );
    browser
        .eval("document.getElementById('policy').value = 'test-slow'; document.getElementById('budget').value = '5'; return true")
        .await;
    browser.click("#start").await;
    // Points of run #1's curve on the quality chart.
    let points = "const u = window.refresherCharts['chart-quality']; \
                  const s = u ? u.series.findIndex(s => String(s.label).startsWith('#1 ')) : -1; \
                  return s > 0 ? u.data[s].filter(v => v != null).length : 0";
    let first = browser
        .wait_for(points, "the first unit on the chart")
        .await;
    let first = first.as_u64().unwrap();
    let later = browser
        .wait_for(
            &format!("const n = (() => {{ {points} }})(); return n > {first} ? n : 0"),
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
    // The parameters field reaches the server: a file parameter is refused in words.
    browser
        .eval("document.getElementById('params').value = 'function=/etc/passwd; theta=0.5'; return true")
        .await;
    browser.click("#start").await;
    browser
        .wait_for(
            "return document.getElementById('message').textContent.includes('`function`')",
            "the refusal of a file parameter",
        )
        .await;
    browser
        .eval("document.getElementById('params').value = ''; return true")
        .await;
    // So does the warm-up field: one that leaves no unit to judge is refused in words.
    browser
        .eval("document.getElementById('warmup').value = '99'; return true")
        .await;
    browser.click("#start").await;
    browser
        .wait_for(
            "return document.getElementById('message').textContent.includes('`warmup_units` 99')",
            "the refusal of an absurd warm-up",
        )
        .await;
    browser
        .eval("document.getElementById('warmup').value = '0'; return true")
        .await;
    // And the oracle-history select: the warm-up's history with no warm-up is refused in words.
    browser
        .eval("document.getElementById('oracle-history').value = 'warm-up'; return true")
        .await;
    browser.click("#start").await;
    browser
        .wait_for(
            "return document.getElementById('message').textContent.includes('`oracle_history` warm-up')",
            "the refusal of an oracle history with no warm-up",
        )
        .await;
    browser
        .eval("document.getElementById('oracle-history').value = 'all'; return true")
        .await;
    // The three charts: shares never past 1, round ticks, time units on a linear axis, the
    // run and the served repository's no-refresh curve in the legend.
    for id in ["chart-quality", "chart-fresh", "chart-map"] {
        let c = browser.chart(id).await;
        assert_share_chart(id, &c);
        assert_eq!((c.x.distr, c.x.ori), (1, 0), "{id}");
        assert!(
            c.series.iter().any(|s| s.starts_with("#1 ")),
            "{id}: {:?}",
            c.series
        );
    }
    let (tip, legend) = browser.hover("chart-quality", 1, 2).await;
    let c = browser.chart("chart-quality").await;
    let y = c.data[1][2].unwrap();
    assert_tip(&c, 2, "time unit", "quality", y, &tip);
    assert!(close(legend.parse().unwrap(), y), "{legend} vs {y}");
    browser
        .screenshot_of(".charts", "dashboard-charts-hover.png")
        .await;
    browser
        .assert_numbers_explained("#runs, .charts .u-legend, .charts .u-axis")
        .await;

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
    let fig4 = browser.chart("chart-fig4").await;
    assert_eq!(fig4.series, ["round-robin", "sbr"]);
    let rows = browser
        .eval("return document.querySelectorAll('#fig4-table tbody tr').length")
        .await;
    assert_eq!(rows, 2);
    let cells = browser
        .eval("return document.querySelectorAll('#fig4-table tbody td').length")
        .await;
    // Per policy: its name, six absolute targets and five shares of the staleness gap.
    assert_eq!(cells, 2 * (1 + 6 + 5));
    // The sweep has a B = 0 run: every reached budget shows its 95 % interval, `87 (82–92)`
    // (an end not reached on the grid left open), and the caption says what it is.
    let budget_cells = browser
        .eval(
            "return [...document.querySelectorAll('#fig4-table tbody td.num')]                .map(td => td.textContent).filter(t => t !== '—')",
        )
        .await;
    let budget_cells: Vec<String> = serde_json::from_value(budget_cells).unwrap();
    assert!(!budget_cells.is_empty());
    let number = r"[0-9]+(\.[0-9])?";
    let shape = regex::Regex::new(&format!("^{number} \\(({number})?–({number})?\\)$")).unwrap();
    for cell in &budget_cells {
        assert!(shape.is_match(cell), "{cell:?} in {budget_cells:?}");
    }
    let caption = browser
        .eval("return document.getElementById('interval-caption').textContent")
        .await;
    let caption = caption.as_str().unwrap();
    assert!(
        caption.contains("95 %") && caption.contains("200 resamples"),
        "{caption}"
    );
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
    // Issue 14: Fig. 4 as paper 003 draws it, read like a plotting tool's: quality across (never
    // past 1), B up on a log axis with round ticks, each curve joined in budget order, B = 0 a
    // labelled reference line at the unrefreshed repository's quality (not a point at the axis
    // end).
    assert_share_chart("fig4", &fig4);
    assert_eq!(
        (fig4.x.distr, fig4.x.ori, fig4.y.ori),
        (3, 1, 0),
        "{fig4:?}"
    );
    let budgets: Vec<f64> = fig4.data[0].iter().map(|b| b.unwrap()).collect();
    assert_eq!(budgets, [3.0, 10.0], "B = 0 is no point of a curve");
    assert!(
        fig4.x.min > 0.0 && fig4.x.min <= 3.0 && fig4.x.max >= 10.0,
        "{fig4:?}"
    );
    assert!(fig4.x_ticks.contains(&10.0), "{:?}", fig4.x_ticks);
    let unrefreshed = browser
        .eval(
            "return [...document.querySelectorAll('#curves tbody tr')] \
               .filter(r => r.cells[1].textContent === '0').map(r => r.cells[3].textContent)",
        )
        .await;
    let unrefreshed: Vec<String> = serde_json::from_value(unrefreshed).unwrap();
    assert_eq!(unrefreshed.len(), 2, "{unrefreshed:?}");
    assert_eq!(fig4.refs.len(), 1, "{:?}", fig4.refs);
    let q0: f64 = fig4.refs[0]
        .strip_prefix("B = 0: ")
        .expect("the B = 0 label")
        .parse()
        .unwrap();
    assert!(
        (q0 - unrefreshed[0].parse::<f64>().unwrap()).abs() < 1e-4,
        "{q0} vs {unrefreshed:?}"
    );
    assert!(
        fig4.y.min <= q0 && q0 <= fig4.y.max,
        "the B = 0 line is inside the plot"
    );
    let fresh = browser.chart("chart-fresh").await;
    assert_share_chart("fresh", &fresh);
    assert_eq!((fresh.x.distr, fresh.x.ori), (3, 0));
    assert!(fresh.refs.iter().all(|r| r.starts_with("B = 0: ")) && !fresh.refs.is_empty());
    // Hovering a point names the series, its budget and its quality; the legend shows it too.
    let (tip, legend) = browser.hover("chart-fig4", 2, 1).await;
    let q = fig4.data[2][1].unwrap();
    assert_tip(&fig4, 1, "budget B", "mean repository quality", q, &tip);
    assert!(close(legend.parse().unwrap(), q), "{legend} vs {q}");
    browser
        .screenshot_of(".charts", "compare-charts-hover.png")
        .await;
    browser.screenshot_of("main", "compare-all.png").await;
    browser
        .assert_numbers_explained(
            "#message, #fig4-table, #curves, .charts .u-legend, .charts .u-axis, .charts .zero-refs",
        )
        .await;
    assert_charts_read_without_a_legend_hunt(&mut browser).await;
    // One mode shown: no ratio to the full oracle, the section hidden. Handed the ratios
    // `/api/compare` gives when both modes are shown (tests/server_api.rs checks those), the
    // page draws a row per online series, a cell per share of the gap.
    let hidden = browser
        .eval("return document.getElementById('oracle-ratios-section').hidden")
        .await;
    assert_eq!(hidden, json!(true));
    let drawn = browser
        .eval(
            "render(Object.assign({}, shown, {oracle_ratios: [ \
               {policy: 'ebr (online)', target_quality: 0.99, gap_share: 0.5, \
                online_budget: 6, oracle_budget: 2, ratio: 3}, \
               {policy: 'ebr (online)', target_quality: 0.995, gap_share: 0.75, \
                online_budget: null, oracle_budget: 4, ratio: null}]})); \
             const t = document.getElementById('oracle-ratios'); \
             return [document.getElementById('oracle-ratios-section').hidden, \
               [...t.querySelectorAll('th')].map(th => th.textContent), \
               [...t.querySelectorAll('tbody td')].map(td => td.textContent)]",
        )
        .await;
    assert_eq!(
        drawn,
        json!([
            false,
            ["online policy", "50 % of gap", "75 % of gap"],
            ["ebr (online)", "3.00×", "—"]
        ])
    );
    browser.assert_numbers_explained("#oracle-ratios").await;
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
            warmup_units: 0,
            crawl: None,
            signals: Default::default(),
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
    browser
        .assert_numbers_explained("#engine-summary, #engine-now, #engine-units")
        .await;
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
    let chart = browser.chart("wf-chart").await;
    assert_eq!(chart.series, ["strategy 2"]);
    let periods: Vec<f64> = chart.data[0].iter().map(|p| p.unwrap()).collect();
    assert_eq!(periods, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    assert!(chart.data[1].iter().all(|y| y.is_some()));
    assert!(
        is_round_grid(&chart.x_ticks) && is_round_grid(&chart.y_ticks),
        "{chart:?}"
    );
    let (tip, _) = browser.hover("wf-chart", 1, 5).await;
    assert_tip(
        &chart,
        5,
        "period",
        "obsolete pages",
        chart.data[1][5].unwrap(),
        &tip,
    );
    browser.screenshot("webfountain-plan.png").await;
    browser
        .screenshot_of("#wf-result", "webfountain-result.png")
        .await;
    browser
        .assert_numbers_explained(
            "#wf-summary, #wf-periods, #wf-crawls, #wf-result .u-legend, #wf-result .u-axis",
        )
        .await;
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

//! A small generated site served on loopback, shared by the API and browser tests.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use refresher::corpus::generate::{generate_site, GeneratorConfig};
use refresher::corpus::ingest::{load_corpus, IngestOptions};
use refresher::corpus::{Corpus, PageId, Unit};
use refresher::crawl::CrawlState;
use refresher::policy::{ParamValue, PolicyContext, RefreshOutcome, RefreshPolicy};
use refresher::querylog::layouts::{read_log, ReadOptions};
use refresher::querylog::workload::{RelevanceFilter, Workload, WorkloadOptions};
use refresher::querylog::QueryLog;
use refresher::server::{AppState, Policies, ServerOptions};

/// Refreshes pages in id order and sleeps `delay` per unit, so a test (or a browser) can watch
/// a run while it is going and cancel it midway.
pub struct SlowCycle {
    pub delay: Duration,
    next: u32,
    pages: u32,
}

impl RefreshPolicy for SlowCycle {
    fn name(&self) -> String {
        "test-slow".into()
    }
    fn prepare(&mut self, context: &PolicyContext<'_>) {
        self.pages = context.page_count.max(1) as u32;
    }
    fn choose(&mut self, _unit: Unit, budget: usize, _crawl: &CrawlState) -> Vec<PageId> {
        std::thread::sleep(self.delay);
        (0..budget.min(self.pages as usize))
            .map(|_| {
                let p = self.next;
                self.next = (self.next + 1) % self.pages;
                p
            })
            .collect()
    }
    fn observe(&mut self, _outcomes: &[RefreshOutcome]) {}
}

/// The registry's policies plus `test-slow` ([`SlowCycle`] with `delay`).
pub fn policies(delay: Duration) -> Policies {
    let registry = Policies::registry();
    let mut names = registry.names.clone();
    names.push("test-slow".into());
    let make = registry.make.clone();
    Policies {
        names,
        make: Arc::new(move |name: &str, params: &[(String, ParamValue)]| {
            if name == "test-slow" {
                Ok(Box::new(SlowCycle {
                    delay,
                    next: 0,
                    pages: 0,
                }))
            } else {
                make(name, params)
            }
        }),
    }
}

/// A served test site.
pub struct TestServer {
    pub addr: SocketAddr,
    pub state: Arc<AppState>,
    pub log: QueryLog,
    /// A copy of the corpus the server serves (the server leaks its own).
    pub corpus: Corpus,
    /// The generated site's files (inside `_dir`), for the command line to read the same.
    pub corpus_dir: std::path::PathBuf,
    pub query_log: std::path::PathBuf,
    pub _dir: tempfile::TempDir,
}

impl TestServer {
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

/// Generates a small site (pages × weeks), builds the server with the log's workload and
/// starts it on a free loopback port. Call inside a multi-threaded tokio runtime.
pub async fn start(pages: usize, weeks: u32, slow_delay: Duration) -> TestServer {
    let dir = tempfile::tempdir().unwrap();
    let site = generate_site(
        &GeneratorConfig {
            pages,
            weeks,
            queries: 1500,
            ..GeneratorConfig::default()
        },
        dir.path(),
    )
    .unwrap();
    let (corpus, _) = load_corpus(&site.corpus_dir, &IngestOptions::default()).unwrap();
    let log = read_log(&site.query_log, &ReadOptions::default()).unwrap();
    let workload = Workload::build(
        &log,
        &corpus,
        &WorkloadOptions {
            top_n: None,
            filter: RelevanceFilter::None,
        },
    );
    let copy = corpus.clone();
    let state = tokio::task::spawn_blocking(move || {
        AppState::build(
            corpus,
            Some(workload),
            ServerOptions::new(policies(slow_delay)),
        )
    })
    .await
    .unwrap()
    .unwrap();
    let (addr, _handle) = refresher::server::spawn(state.clone(), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    TestServer {
        addr,
        state,
        log,
        corpus: copy,
        corpus_dir: site.corpus_dir,
        query_log: site.query_log,
        _dir: dir,
    }
}

//! Fuzz targets, run on stable Rust with proptest (cargo-fuzz and libFuzzer need a nightly
//! toolchain, which CI does not have): the WARC reader, every query-log layout, the search
//! query parser and the HTTP API's request parameters get random and structure-aware inputs,
//! and must answer each with a value or an error, never a panic (nor, for HTTP, a 500).
//!
//! `cargo test --test fuzz` runs a short pass (`PROPTEST_CASES`, default 256 per target);
//! `scripts/fuzz_long.sh` runs 10^6 per target. Inputs that once broke a parser are kept as
//! regressions in `tests/bad_warc.rs` and `tests/bad_logs.rs`.

use std::io::Write;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use proptest::prelude::*;
use refresher::corpus::warc_reader::{decode_http_block, WarcFile};
use refresher::querylog::layouts::{read_log_from, ReadOptions};
use refresher::querylog::LogLayout;

fn cases() -> ProptestConfig {
    ProptestConfig {
        // Shrinking a failure is welcome; a failure persists its seed in tests/fuzz.proptest-regressions.
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|c| c.parse().ok())
            .unwrap_or(256),
        ..ProptestConfig::default()
    }
}

fn gzip(content: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(content).unwrap();
    enc.finish().unwrap()
}

/// A WARC header value: plausible, absurd or hostile.
fn header_value() -> impl Strategy<Value = String> {
    prop_oneof![
        "[ -~]{0,40}",
        Just("18446744073709551615".to_string()),
        Just("18446744073709551612".to_string()),
        Just("-1".to_string()),
        (0u64..5000).prop_map(|n| n.to_string()),
        ".{0,20}",
    ]
}

/// Structure-aware WARC input: records with random headers, lengths that may lie, bodies that
/// may be HTTP (chunked, gzip, truncated), optionally gzip-compressed and truncated.
fn warc_bytes() -> impl Strategy<Value = Vec<u8>> {
    let record = (
        prop::sample::select(vec!["response", "revisit", "request", "warcinfo", "bogus"]),
        header_value(),
        proptest::option::of(header_value()),
        prop::collection::vec((("[A-Za-z-]{1,12}"), header_value()), 0..4),
        prop_oneof![
            prop::collection::vec(any::<u8>(), 0..300),
            ("[ -~]{0,60}", any::<bool>()).prop_map(|(text, chunked)| {
                let mut http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n".to_vec();
                if chunked {
                    http.extend_from_slice(b"Transfer-Encoding: chunked\r\n\r\n");
                    http.extend_from_slice(format!("{:x}\r\n{text}\r\n0\r\n\r\n", text.len()).as_bytes());
                } else {
                    http.extend_from_slice(b"Content-Encoding: gzip\r\n\r\n");
                    http.extend_from_slice(&gzip(text.as_bytes()));
                }
                http
            }),
        ],
    )
        .prop_map(|(kind, uri, length, extra, body)| {
            let mut r = format!("WARC/1.0\r\nWARC-Type: {kind}\r\nWARC-Target-URI: {uri}\r\nWARC-Date: 2020-01-01T00:00:00Z\r\n").into_bytes();
            let length = length.unwrap_or_else(|| body.len().to_string());
            r.extend_from_slice(format!("Content-Length: {length}\r\n").as_bytes());
            for (k, v) in extra {
                r.extend_from_slice(format!("{k}: {v}\r\n").as_bytes());
            }
            r.extend_from_slice(b"\r\n");
            r.extend_from_slice(&body);
            r.extend_from_slice(b"\r\n\r\n");
            r
        });
    (
        prop::collection::vec(record, 1..4),
        any::<bool>(),
        proptest::option::of(0usize..2000),
    )
        .prop_map(|(records, compress, cut)| {
            let plain: Vec<u8> = records.concat();
            let mut bytes = if compress { gzip(&plain) } else { plain };
            if let Some(cut) = cut {
                bytes.truncate(cut.min(bytes.len()));
            }
            bytes
        })
}

/// Reads every record; each is a value or an error naming the input.
fn read_all(bytes: Vec<u8>) {
    let label = Path::new("fuzz.warc");
    let Ok(file) = WarcFile::from_bytes(label, bytes) else {
        return;
    };
    for item in file.take(64) {
        if let Err(e) = item {
            assert!(e.to_string().contains("fuzz.warc"), "{e}");
        }
    }
}

proptest! {
    #![proptest_config(cases())]

    #[test]
    fn warc_reader_random_bytes(bytes in prop::collection::vec(any::<u8>(), 1..600)) {
        read_all(bytes);
    }

    #[test]
    fn warc_reader_structured(bytes in warc_bytes()) {
        read_all(bytes);
    }

    #[test]
    fn http_payload_decoding(
        head in "[ -~\r\n]{0,200}",
        body in prop::collection::vec(any::<u8>(), 0..200),
    ) {
        let mut block = head.into_bytes();
        block.extend_from_slice(&body);
        let _ = decode_http_block(&block);
    }
}

/// A log line's field: words, empty, absurdly long, controls, invalid UTF-8 (as bytes).
fn field() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        "[a-z ]{0,30}".prop_map(String::into_bytes),
        Just(Vec::new()),
        Just(b"2006-03-01 07:17:12".to_vec()),
        Just(b"970916012345".to_vec()),
        prop::collection::vec(any::<u8>(), 0..40),
        "[0-9]{0,25}".prop_map(String::into_bytes),
    ]
}

fn log_text() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop::collection::vec(field(), 0..6), 0..20).prop_map(|lines| {
        let mut out = Vec::new();
        for fields in lines {
            out.extend_from_slice(&fields.join(&b'\t'));
            out.push(b'\n');
        }
        out
    })
}

fn tar_of(members: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for (name, content) in members {
        let mut h = tar::Header::new_ustar();
        h.set_size(content.len() as u64);
        h.set_mode(0o644);
        h.set_cksum();
        let _ = b.append_data(&mut h, name, content.as_slice());
    }
    b.into_inner().unwrap()
}

fn read_log_bytes(bytes: Vec<u8>, layout: Option<LogLayout>) {
    let options = ReadOptions {
        layout,
        max_skipped_share: 1.0,
        ..ReadOptions::default()
    };
    if let Err(e) = read_log_from(
        Path::new("fuzz.log"),
        Box::new(std::io::Cursor::new(bytes)),
        &options,
    ) {
        assert!(e.to_string().contains("fuzz.log"), "{e}");
    }
}

proptest! {
    #![proptest_config(cases())]

    #[test]
    fn every_log_layout(
        text in log_text(),
        layout in prop::sample::select(vec![None, Some(LogLayout::Aol), Some(LogLayout::Excite), Some(LogLayout::Plain)]),
        compress in any::<bool>(),
        cut in proptest::option::of(0usize..400),
    ) {
        let mut bytes = if compress { gzip(&text) } else { text };
        if let Some(cut) = cut {
            bytes.truncate(cut.min(bytes.len()));
        }
        read_log_bytes(bytes, layout);
    }

    #[test]
    fn aol_per_user_archives(
        members in prop::collection::vec(("[0-9a-z./]{0,12}", log_text()), 0..4),
        cut in proptest::option::of(0usize..3000),
    ) {
        let mut bytes = tar_of(&members);
        if let Some(cut) = cut {
            bytes.truncate(cut.min(bytes.len()));
        }
        read_log_bytes(bytes, Some(LogLayout::AolPerUser));
    }
}

/// One small served engine shared by the query and HTTP targets.
fn state() -> Arc<refresher::server::AppState> {
    static STATE: OnceLock<(Arc<refresher::server::AppState>, tempfile::TempDir)> = OnceLock::new();
    let (state, _) = STATE.get_or_init(|| {
        use refresher::corpus::generate::{generate_site, GeneratorConfig};
        use refresher::corpus::ingest::{load_corpus, IngestOptions};
        use refresher::querylog::layouts::read_log;
        use refresher::querylog::workload::{RelevanceFilter, Workload, WorkloadOptions};
        let dir = tempfile::tempdir().unwrap();
        let site = generate_site(
            &GeneratorConfig {
                pages: 60,
                weeks: 3,
                queries: 400,
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
        let state = refresher::server::AppState::build(
            corpus,
            Some(workload),
            refresher::server::ServerOptions::new(refresher::server::Policies::registry()),
        )
        .unwrap();
        (state, dir)
    });
    Arc::clone(state)
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap()
    })
}

/// A query string value: words, operators, controls, very long, percent-escapes.
fn query_value() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z ]{0,40}",
        ".{0,60}",
        "[\"'+\\-*:()~^ a-z]{0,30}",
        Just("a ".repeat(1100)),
        "(%[0-9A-Fa-f]{2}){0,20}",
        (0i64..100_000).prop_map(|n| n.to_string()),
        Just("-1".to_string()),
        Just("18446744073709551616".to_string()),
    ]
}

fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                (b as char).to_string()
            } else if b == b'%' {
                // Keep escapes the strategy wrote as they are: they test the decoder.
                "%".to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// Sends one request through the router in-process; returns its status.
fn send(method: &str, uri: &str, content_type: Option<&str>, body: Vec<u8>) -> u16 {
    use tower::ServiceExt;
    let mut request = axum::http::Request::builder()
        .method(method)
        .uri(uri)
        .header("host", "127.0.0.1");
    if let Some(ct) = content_type {
        request = request.header("content-type", ct);
    }
    let Ok(request) = request.body(axum::body::Body::from(body)) else {
        return 400; // Not a request at all (invalid URI): the server never sees it.
    };
    let app = refresher::server::router(state());
    runtime().block_on(async move {
        let response = app.oneshot(request).await.unwrap();
        response.status().as_u16()
    })
}

proptest! {
    #![proptest_config(cases())]

    #[test]
    fn search_queries(
        q in proptest::option::of(query_value()),
        offset in proptest::option::of(query_value()),
        limit in proptest::option::of(query_value()),
        unit in proptest::option::of(query_value()),
    ) {
        let mut params = Vec::new();
        for (k, v) in [("q", q), ("offset", offset), ("limit", limit), ("unit", unit)] {
            if let Some(v) = v {
                params.push(format!("{k}={}", encode(&v)));
            }
        }
        let status = send("GET", &format!("/api/search?{}", params.join("&")), None, Vec::new());
        prop_assert!(status == 200 || (400..500).contains(&status), "status {}", status);
    }

    #[test]
    fn api_requests(
        method in prop::sample::select(vec!["GET", "POST", "DELETE", "PUT"]),
        path in prop::sample::select(vec![
            "/api/runs", "/api/compare", "/api/runs/1", "/api/runs/1/cancel", "/api/runs/abc",
            "/api/runs/18446744073709551616", "/api/compare/0", "/api/policies", "/api/stats",
            "/api/quality", "/api/openapi.json", "/metrics", "/api/nope",
        ]),
        query in proptest::option::of(query_value()),
        content_type in proptest::option::of(prop::sample::select(vec!["application/json", "text/plain", "application/x-www-form-urlencoded"])),
        body in prop_oneof![
            prop::collection::vec(any::<u8>(), 0..200),
            r#"\{"policy": ?"[a-z\-]{0,14}", ?"budget": ?-?[0-9]{0,22}(\.[0-9])?\}"#.prop_map(String::into_bytes),
            r#"\{"policies": ?\["[a-z\-]{0,12}"\], ?"budgets": ?\[[0-9,\- ]{0,20}\], ?"thetas": ?\[[0-9.,\-]{0,12}\]\}"#.prop_map(String::into_bytes),
            r#"\{"policy": ?"sbr", ?"budget": ?[0-9]{1,3}, ?"params": ?\{"[a-z_]{0,8}": ?"?[0-9a-z.\-]{0,8}"?\}\}"#.prop_map(String::into_bytes),
        ],
    ) {
        // Accepted run requests start real runs on a bounded queue; once it is full they are
        // answered 429, which is a fine answer too.
        let uri = match query {
            Some(q) => format!("{path}?x={}", encode(&q)),
            None => path.to_string(),
        };
        let status = send(method, &uri, content_type, body);
        prop_assert!(status != 500 && status < 600, "{method} {uri}: status {}", status);
    }
}

/// The harness itself reaches the handlers (a fuzz target that only ever met a router error
/// would prove nothing).
#[test]
fn the_http_harness_reaches_the_handlers() {
    assert_eq!(send("GET", "/api/policies", None, Vec::new()), 200);
    assert_eq!(send("GET", "/api/search?q=wiki", None, Vec::new()), 200);
    assert_eq!(
        send("GET", "/api/search?q=wiki&limit=abc", None, Vec::new()),
        400
    );
    assert_eq!(
        send(
            "POST",
            "/api/runs",
            Some("application/json"),
            br#"{"policy": "age", "budget": 2}"#.to_vec()
        ),
        202
    );
    let not_json = send("POST", "/api/runs", Some("text/plain"), b"{}".to_vec());
    assert!((400..500).contains(&not_json), "{not_json}");
}

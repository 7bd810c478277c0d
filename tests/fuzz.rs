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
use refresher::corpus::warc_reader::{decode_http_block, WarcFile, WarcItem};
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

/// Reads every record; each is a value or an error naming the input. Records are numbered
/// 1, 2, … in file order (a damaged record, reported as an error, takes its number too;
/// reading may resume after it), responses carry a valid status and a skip names the input.
/// Returns the items read (at most 64).
fn read_all(bytes: Vec<u8>) -> Vec<WarcItem> {
    let label = Path::new("fuzz.warc");
    let empty = bytes.is_empty();
    let file = match WarcFile::from_bytes(label, bytes) {
        Ok(file) => file,
        Err(e) => {
            // Only an empty input is refused before reading.
            assert!(empty, "{e}");
            assert!(e.to_string().contains("fuzz.warc"), "{e}");
            return Vec::new();
        }
    };
    let results: Vec<_> = file.take(65).collect();
    let mut items = Vec::new();
    for (i, result) in results.iter().enumerate() {
        match result {
            Ok(item) => {
                let record = match item {
                    WarcItem::Response(r) => {
                        assert!((100..=599).contains(&r.status), "status {}", r.status);
                        r.record
                    }
                    WarcItem::Revisit(r) => r.record,
                    WarcItem::Other { record, .. } => *record,
                    WarcItem::Skipped(skip) => {
                        assert_eq!(skip.path, label, "{skip}");
                        i as u64 + 1
                    }
                };
                assert_eq!(record, i as u64 + 1, "records out of order");
                items.push(item.clone());
            }
            Err(e) => {
                assert!(e.to_string().contains("fuzz.warc"), "{e}");
                let text = e.to_string();
                assert!(
                    text.contains(&format!("record {}", i + 1))
                        || text.contains(&format!("record {i}"))
                        || (i == 0 && matches!(e, refresher::error::InputError::Empty { .. })),
                    "{e}"
                );
            }
        }
    }
    items.truncate(64);
    items
}

/// An HTTP response with `body` sent under `coding` (one of `identity`, `chunked` in chunks
/// of `chunk` bytes, `gzip`, `deflate`, `br`, or `chunked` over `gzip`), with a
/// `Content-Type` header.
fn http_response(status: u16, coding: &str, chunk: usize, body: &[u8]) -> Vec<u8> {
    let deflate = |body: &[u8]| {
        let mut enc = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(body).unwrap();
        enc.finish().unwrap()
    };
    let brotli = |body: &[u8]| {
        let mut out = Vec::new();
        {
            let mut enc = brotli::CompressorWriter::new(&mut out, 4096, 5, 22);
            enc.write_all(body).unwrap();
        }
        out
    };
    let chunked = |body: &[u8]| {
        let mut out = Vec::new();
        for piece in body.chunks(chunk.max(1)) {
            out.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
            out.extend_from_slice(piece);
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"0\r\n\r\n");
        out
    };
    let (headers, payload) = match coding {
        "identity" => (String::new(), body.to_vec()),
        "chunked" => ("Transfer-Encoding: chunked\r\n".to_string(), chunked(body)),
        "gzip" => ("Content-Encoding: gzip\r\n".to_string(), gzip(body)),
        "deflate" => ("Content-Encoding: deflate\r\n".to_string(), deflate(body)),
        "br" => ("Content-Encoding: br\r\n".to_string(), brotli(body)),
        "chunked-gzip" => (
            "Content-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n".to_string(),
            chunked(&gzip(body)),
        ),
        other => panic!("no coding {other}"),
    };
    let mut out =
        format!("HTTP/1.1 {status} X\r\nContent-Type: Text/HTML; charset=utf-8\r\n{headers}\r\n")
            .into_bytes();
    out.extend_from_slice(&payload);
    out
}

const CODINGS: [&str; 6] = [
    "identity",
    "chunked",
    "gzip",
    "deflate",
    "br",
    "chunked-gzip",
];

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

    /// Well-formed records (true lengths, HTTP responses under every coding) read back as
    /// written: every record, its URI, status and decoded body.
    #[test]
    fn warc_reader_round_trip(
        records in prop::collection::vec(
            (
                "[a-z0-9]{1,12}",
                100u16..=599,
                prop::sample::select(CODINGS.to_vec()),
                1usize..40,
                prop::collection::vec(any::<u8>(), 0..300),
            ),
            1..5,
        ),
        compress in any::<bool>(),
    ) {
        let mut plain = Vec::new();
        for (path, status, coding, chunk, body) in &records {
            let block = http_response(*status, coding, *chunk, body);
            plain.extend_from_slice(
                format!(
                    "WARC/1.1\r\nWARC-Type: response\r\nWARC-Date: 2020-01-01T00:00:00Z\r\n\
                     WARC-Target-URI: http://a.test/{path}\r\n\
                     Content-Type: application/http; msgtype=response\r\n\
                     Content-Length: {}\r\n\r\n",
                    block.len()
                )
                .as_bytes(),
            );
            plain.extend_from_slice(&block);
            plain.extend_from_slice(b"\r\n\r\n");
        }
        let bytes = if compress { gzip(&plain) } else { plain };
        let items = read_all(bytes);
        prop_assert_eq!(items.len(), records.len());
        for (item, (path, status, coding, _, body)) in items.iter().zip(&records) {
            let WarcItem::Response(r) = item else {
                panic!("{coding}: not read as a response: {item:?}");
            };
            prop_assert_eq!(&r.target_uri, &format!("http://a.test/{path}"));
            prop_assert_eq!(r.status, *status);
            prop_assert_eq!(&r.body, body, "{}", coding);
            prop_assert_eq!(r.content_type.as_deref(), Some("text/html"));
        }
    }

    /// Any block: a decoded response or an error saying why. A block without the blank line
    /// ending an HTTP header, or whose first line is not a status line, is always an error; a
    /// decoded response has a valid status, undid only codings its header names, and without
    /// any coding its body is the bytes after the header.
    #[test]
    fn http_payload_decoding(
        head in prop_oneof![
            "[ -~\r\n]{0,200}",
            "[ -~\r\n]{0,200}".prop_map(|h| format!("HTTP/1.1 200 OK\r\n{h}")),
            // A whole header: status, then coding and type fields, some bogus.
            (
                "[0-9]{1,4}",
                prop::collection::vec(
                    prop::sample::select(vec![
                        "Content-Type: text/html; charset=utf-8",
                        "content-type: APPLICATION/XHTML+XML",
                        "Content-Type:",
                        "Transfer-Encoding: chunked",
                        "Content-Encoding: gzip",
                        "Content-Encoding: x-gzip, br",
                        "Content-Encoding: deflate",
                        "Content-Encoding: identity",
                        "Content-Encoding: compress",
                        "Transfer-Encoding: gzip, chunked",
                        "X-Other: chunked",
                    ]),
                    0..4,
                ),
                any::<bool>(),
            )
                .prop_map(|(code, fields, crlf)| {
                    let eol = if crlf { "\r\n" } else { "\n" };
                    let mut h = format!("HTTP/1.1 {code} Something{eol}");
                    for f in fields {
                        h.push_str(f);
                        h.push_str(eol);
                    }
                    h.push_str(eol);
                    h
                }),
        ],
        body in prop::collection::vec(any::<u8>(), 0..200),
    ) {
        let mut block = head.into_bytes();
        block.extend_from_slice(&body);
        let has_end = |sep: &[u8]| block.windows(sep.len()).any(|w| w == sep);
        // A status line: the first line, after any leading white space, names the version.
        let first_line = block.split(|&b| b == b'\n').next().unwrap();
        let status_line = String::from_utf8_lossy(first_line)
            .trim_start()
            .starts_with("HTTP/");
        match decode_http_block(&block) {
            Ok(r) => {
                prop_assert!(has_end(b"\r\n\r\n") || has_end(b"\n\n"));
                prop_assert!(status_line);
                prop_assert!((100..=599).contains(&r.status), "status {}", r.status);
                // The header ends at the first CRLF CRLF, else (bare LF line ends) at the
                // first LF LF.
                let find = |sep: &[u8]| block.windows(sep.len()).position(|w| w == sep);
                let (head_end, body_start) = match find(b"\r\n\r\n") {
                    Some(i) => (i, i + 4),
                    None => {
                        let i = find(b"\n\n").unwrap();
                        (i, i + 2)
                    }
                };
                let header = String::from_utf8_lossy(&block[..head_end]).to_ascii_lowercase();
                for coding in &r.decoded {
                    prop_assert!(header.contains(coding), "{} undone, not in {}", coding, header);
                }
                if r.decoded.is_empty()
                    && !header.contains("transfer-encoding")
                    && !header.contains("content-encoding")
                {
                    prop_assert_eq!(&r.body[..], &block[body_start..]);
                }
                if let Some(media) = &r.content_type {
                    prop_assert_eq!(media, &media.to_ascii_lowercase());
                }
            }
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
        if !has_end(b"\r\n\r\n") && !has_end(b"\n\n") {
            let e = decode_http_block(&block).unwrap_err();
            prop_assert!(e.to_string().contains("blank line"), "{}", e);
        } else if !status_line {
            let e = decode_http_block(&block).unwrap_err();
            prop_assert!(e.to_string().contains("status line"), "{}", e);
        }
    }

    /// Every coding the reader undoes round-trips: the decoded body is the one sent.
    #[test]
    fn http_payload_round_trip(
        status in 100u16..=599,
        coding in prop::sample::select(CODINGS.to_vec()),
        chunk in 1usize..64,
        body in prop::collection::vec(any::<u8>(), 0..2000),
    ) {
        let r = decode_http_block(&http_response(status, coding, chunk, &body))
            .unwrap_or_else(|e| panic!("{coding}: {e}"));
        prop_assert_eq!(r.status, status);
        prop_assert_eq!(&r.body, &body);
        let expected: &[&str] = match coding {
            "identity" => &[],
            "chunked-gzip" => &["chunked", "gzip"],
            other => &[other],
        };
        // A chunked body is taken as it is when it does not start with a chunk size line,
        // never the case for one this writes.
        prop_assert_eq!(&r.decoded[..], expected);
        prop_assert_eq!(r.content_type.as_deref(), Some("text/html"));
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
        // Answered, or refused as a bad parameter (one search at a time never fills the
        // queue, so no 503).
        prop_assert!(status == 200 || status == 400, "status {}", status);
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
        // The answers these routes give (see the OpenAPI description): a value, an accepted
        // run, a bad request, no such run or route, a method the route lacks, a conflict
        // (cancelling a finished run), a body too large, not JSON, or a full queue. Never a
        // 5xx: no 500, and no 503 (no timeout is near).
        prop_assert!(
            [200, 202, 400, 404, 405, 409, 413, 415, 429].contains(&status),
            "{method} {uri}: status {}",
            status
        );
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

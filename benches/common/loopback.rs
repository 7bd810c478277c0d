//! Processes on loopback for the benches and tests that start several `refresher`s: a host
//! file of free ports, and a plain HTTP/1.1 GET.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;

/// Writes to `path` a host file of `n` loopback addresses whose ports were free a moment ago.
pub fn write_peers_file(path: &Path, n: usize) {
    let listeners: Vec<TcpListener> = (0..n)
        .map(|_| TcpListener::bind("127.0.0.1:0").unwrap())
        .collect();
    let lines: Vec<String> = listeners
        .iter()
        .map(|l| l.local_addr().unwrap().to_string())
        .collect();
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

/// Makes `command` process `process` of `processes` over the host file `peers` (nothing for
/// one process).
pub fn add_mesh_flags(
    command: &mut std::process::Command,
    process: usize,
    processes: usize,
    peers: &Path,
) {
    if processes > 1 {
        command
            .args(["--processes", &processes.to_string()])
            .args(["--process", &process.to_string()])
            .arg("--peers")
            .arg(peers);
    }
}

/// `GET path` from `addr` over plain HTTP/1.1: the status line and the body.
pub fn http_get(addr: &str, path: &str) -> (String, String) {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    s.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    (
        head.lines().next().unwrap_or("").to_string(),
        body.to_string(),
    )
}

/// `text` percent-encoded for a query string (everything but ASCII letters and digits).
pub fn percent_encoded(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The first `n` queries of an AOL-layout log (header skipped, consecutive repeats once): what
/// the loopback clients ask a server.
pub fn first_queries(log: &Path, n: usize) -> Vec<String> {
    let mut queries: Vec<String> = std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .skip(1)
        .filter_map(|l| l.split('\t').nth(1).map(str::to_string))
        .collect();
    queries.dedup();
    queries.truncate(n);
    queries
}

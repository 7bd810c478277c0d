//! URL parts the corpus, the crawler and the replayed Web agree on.

/// `(lowercase host[:port], path?query)` of an absolute http(s) URL.
pub fn host_and_path(url: &str) -> Option<(String, String)> {
    let u = url::Url::parse(url).ok()?;
    let mut host = u.host_str()?.to_ascii_lowercase();
    if let Some(port) = u.port() {
        host = format!("{host}:{port}");
    }
    let mut path = u.path().to_string();
    if let Some(q) = u.query() {
        path.push('?');
        path.push_str(q);
    }
    Some((host, path))
}

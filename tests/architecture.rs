//! The layout's two rules, checked on the source: no file imports another that imports it back
//! (directly or through others), and no stage imports a stage above it in the data flow.
//!
//! Imports are read from the text of the three crates' sources (`crates/core/src`,
//! `crates/judge/src`, `src`) as `crate::…`, `super::…` and `self::…` paths
//! (brace groups expanded), each resolved to the longest module path that is a file; tests
//! (`#[cfg(test)] mod … { … }` blocks) and comments are left out. A module and its own
//! `mod.rs` may name each other (that is how a folder re-exports); nothing else may circle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The stages, lowest first: a file may import its own stage or a lower one. (`cli` is the
/// binary's front end; `lib`/`main` the roots.)
const STAGES: &[&str] = &[
    "error",
    "terminal",
    "progress",
    "mesh",
    "text",
    "corpus",
    "cache",
    "optimise",
    "change",
    "cluster",
    "learn",
    "index",
    "querylog",
    "quality",
    "signal",
    "fetch",
    "crawl",
    "policy",
    "refresh",
    "judge",
    "sim",
    "web_replay",
    "live",
    "report",
    "server",
    "client",
    "cli",
    "lib",
    "main",
];

struct Source {
    root: PathBuf,
    /// Relative path (`quality/exact/mod.rs`) → text without tests and comments.
    files: BTreeMap<String, String>,
}

impl Source {
    /// The three crates' sources in one namespace, as the drivers' crate sees it: the core's
    /// modules at the root (the drivers' crate re-exports them), the judge's under `judge/`.
    fn read() -> Self {
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files = BTreeMap::new();
        for (dir, prefix) in [
            ("crates/core/src", ""),
            ("crates/judge/src", "judge/"),
            ("src", ""),
        ] {
            let root = workspace.join(dir);
            let mut stack = vec![root.clone()];
            while let Some(dir) = stack.pop() {
                for entry in std::fs::read_dir(&dir).unwrap() {
                    let path = entry.unwrap().path();
                    if path.is_dir() {
                        stack.push(path);
                    } else if path.extension().is_some_and(|e| e == "rs") {
                        let rel = path
                            .strip_prefix(&root)
                            .unwrap()
                            .to_string_lossy()
                            .replace('\\', "/");
                        // The core's root only declares its modules; the drivers' root
                        // re-exports them.
                        if prefix.is_empty() && rel == "lib.rs" && dir.ends_with("crates/core/src")
                        {
                            continue;
                        }
                        let text = std::fs::read_to_string(&path).unwrap();
                        files.insert(
                            format!("{prefix}{rel}"),
                            strip_comments(&strip_tests(&text)),
                        );
                    }
                }
            }
        }
        Source {
            root: workspace.to_path_buf(),
            files,
        }
    }

    /// The module path of a file: `quality/exact/mod.rs` → `[quality, exact]`.
    fn module_of(file: &str) -> Vec<String> {
        let mut parts: Vec<String> = file
            .trim_end_matches(".rs")
            .split('/')
            .map(String::from)
            .collect();
        if matches!(
            parts.last().map(String::as_str),
            Some("mod" | "lib" | "main")
        ) {
            parts.pop();
        }
        parts
    }

    /// The file of the longest prefix of `parts` that is a module file.
    fn file_of(&self, parts: &[String]) -> Option<String> {
        (1..=parts.len()).rev().find_map(|k| {
            let base = parts[..k].join("/");
            [format!("{base}.rs"), format!("{base}/mod.rs")]
                .into_iter()
                .find(|f| self.files.contains_key(f))
        })
    }

    fn resolve(&self, file: &str, path: &str) -> Option<String> {
        let mut segments: Vec<&str> = path.split("::").collect();
        let mut base = Vec::new();
        match segments[0] {
            "crate" => {
                segments.remove(0);
                // The judge's `crate::` is its own root first, then the core's modules it
                // imports at its root.
                if file.starts_with("judge/") {
                    let mut own = vec!["judge".to_string()];
                    own.extend(segments.iter().map(|s| s.to_string()));
                    if let Some(found) = self.file_of(&own).filter(|f| f != "judge/lib.rs") {
                        return Some(found).filter(|f| f != file);
                    }
                }
            }
            "super" | "self" => {
                base = Self::module_of(file);
                while let Some(&s) = segments.first() {
                    match s {
                        "super" => {
                            base.pop();
                        }
                        "self" => {}
                        _ => break,
                    }
                    segments.remove(0);
                }
            }
            _ => return None,
        }
        base.extend(
            segments
                .iter()
                .filter(|s| !s.is_empty())
                .map(|s| s.to_string()),
        );
        self.file_of(&base).filter(|f| f != file)
    }

    /// File → the files it imports.
    fn graph(&self) -> BTreeMap<String, BTreeSet<String>> {
        let group = regex::Regex::new(
            r"\b((?:crate|super|self)(?:::\w+)*)::\{([^{}]*(?:\{[^{}]*\}[^{}]*)*)\}",
        )
        .unwrap();
        let path = regex::Regex::new(r"\b((?:crate|super|self)(?:::\w+)+)").unwrap();
        let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (file, text) in &self.files {
            let edges = graph.entry(file.clone()).or_default();
            for m in group.captures_iter(text) {
                for item in split_top_level(&m[2]) {
                    let head = item
                        .trim()
                        .split(" as ")
                        .next()
                        .unwrap()
                        .split("::{")
                        .next()
                        .unwrap();
                    let full = if head.is_empty() || head == "self" {
                        m[1].to_string()
                    } else {
                        format!("{}::{head}", &m[1])
                    };
                    edges.extend(self.resolve(file, &full));
                }
            }
            for m in path.captures_iter(text) {
                edges.extend(self.resolve(file, &m[1]));
            }
        }
        graph
    }
}

/// `text` without `#[cfg(test)] mod name { … }` blocks.
fn strip_tests(text: &str) -> String {
    let start = regex::Regex::new(r"#\[cfg\(test\)\]\s*(pub\s+)?mod\s+\w+\s*\{").unwrap();
    let mut out = String::new();
    let mut at = 0;
    for m in start.find_iter(text) {
        if m.start() < at {
            continue;
        }
        out.push_str(&text[at..m.start()]);
        let mut depth = 1;
        let mut end = m.end();
        for (i, c) in text[m.end()..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                _ => {}
            }
            if depth == 0 {
                end = m.end() + i + 1;
                break;
            }
        }
        at = end;
    }
    out.push_str(&text[at..]);
    out
}

fn strip_comments(text: &str) -> String {
    text.lines()
        .map(|l| {
            if l.trim_start().starts_with("//") {
                ""
            } else {
                l.split(" // ").next().unwrap()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The items of a brace group, split at commas outside nested braces.
fn split_top_level(items: &str) -> Vec<&str> {
    let (mut out, mut depth, mut from) = (Vec::new(), 0, 0);
    for (i, c) in items.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&items[from..i]);
                from = i + 1;
            }
            _ => {}
        }
    }
    out.push(&items[from..]);
    out
}

/// Strongly connected components with more than one file (Tarjan, iterative).
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let names: Vec<&String> = graph.keys().collect();
    let id: BTreeMap<&String, usize> = names.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let edges: Vec<Vec<usize>> = names
        .iter()
        .map(|n| {
            graph[*n]
                .iter()
                .filter_map(|m| id.get(m).copied())
                .collect()
        })
        .collect();
    let n = names.len();
    let (mut index, mut low, mut on) = (vec![usize::MAX; n], vec![0; n], vec![false; n]);
    let (mut stack, mut out, mut counter) = (Vec::new(), Vec::new(), 0);
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        let mut work = vec![(root, 0usize)];
        while let Some((v, next)) = work.pop() {
            if next == 0 {
                index[v] = counter;
                low[v] = counter;
                counter += 1;
                stack.push(v);
                on[v] = true;
            }
            if let Some(&w) = edges[v].get(next) {
                work.push((v, next + 1));
                if index[w] == usize::MAX {
                    work.push((w, 0));
                } else if on[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            if low[v] == index[v] {
                let mut component = Vec::new();
                loop {
                    let w = stack.pop().unwrap();
                    on[w] = false;
                    component.push(names[w].clone());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    out.push(component);
                }
            }
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
        }
    }
    out
}

/// A folder's `mod.rs` and one of its own files naming each other: how a folder re-exports.
fn is_folder_and_child(component: &[String]) -> bool {
    component.len() == 2
        && component.iter().any(|m| {
            m.ends_with("mod.rs") && {
                let dir = m.trim_end_matches("mod.rs");
                component.iter().all(|f| f.starts_with(dir))
            }
        })
}

#[test]
fn the_core_does_not_depend_on_the_judge_or_the_drivers() {
    // The compiler keeps the core from naming what it does not depend on: this keeps the
    // dependency from being added.
    let manifest = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/core/Cargo.toml"),
    )
    .unwrap();
    assert!(manifest.contains("name = \"refresher-core\""));
    for line in manifest.lines() {
        assert!(
            !line.trim_start().starts_with("refresher"),
            "crates/core/Cargo.toml depends on a crate of the workspace: {line}"
        );
    }
}

fn stage_of(file: &str) -> &str {
    file.split('/').next().unwrap().trim_end_matches(".rs")
}

#[test]
fn no_file_imports_a_file_that_imports_it_back() {
    let source = Source::read();
    let graph = source.graph();
    assert!(
        graph.len() > 100,
        "read only {} files under {}",
        graph.len(),
        source.root.display()
    );
    assert!(
        graph.values().map(BTreeSet::len).sum::<usize>() > 500,
        "too few imports found: the reader is broken"
    );
    let found: Vec<_> = circles(&graph)
        .into_iter()
        .filter(|c| !is_folder_and_child(c))
        .collect();
    assert!(
        found.is_empty(),
        "import circles (break each at its misplaced name): {found:#?}"
    );
}

#[test]
fn no_stage_imports_a_stage_above_it() {
    let source = Source::read();
    let graph = source.graph();
    let mut upward = Vec::new();
    let mut checked = 0;
    for (from, targets) in &graph {
        let rank = |f: &str| STAGES.iter().position(|s| *s == stage_of(f));
        let from_rank = rank(from).unwrap_or_else(|| {
            panic!("{from}: its stage is not in STAGES; add it where it belongs")
        });
        for to in targets {
            let to_rank = rank(to).unwrap_or_else(|| panic!("{to}: its stage is not in STAGES"));
            checked += 1;
            if to_rank > from_rank {
                upward.push(format!("{from} -> {to}"));
            }
        }
    }
    assert!(checked > 500, "only {checked} imports checked");
    assert!(upward.is_empty(), "imports of a higher stage: {upward:#?}");
}

#[test]
fn the_checks_see_a_planted_circle() {
    // The reader on a made-up pair of files: `a` imports `b` through a brace group, `b` imports
    // `a` through `super::`; a test block's import is ignored.
    let mut files = BTreeMap::new();
    files.insert(
        "x/a.rs".to_string(),
        strip_tests("use crate::x::{b::Thing, c};\n#[cfg(test)]\nmod tests { use crate::y::Z; }"),
    );
    files.insert(
        "x/b.rs".to_string(),
        "pub fn f() { super::a::g() }".to_string(),
    );
    files.insert("x/c.rs".to_string(), String::new());
    files.insert("x/mod.rs".to_string(), String::new());
    files.insert("y.rs".to_string(), String::new());
    let source = Source {
        root: PathBuf::new(),
        files,
    };
    let graph = source.graph();
    // (`crate::x` itself names the folder's `mod.rs`.)
    let expected = ["x/b.rs", "x/c.rs", "x/mod.rs"].map(String::from);
    assert_eq!(graph["x/a.rs"], BTreeSet::from(expected));
    assert_eq!(
        circles(&graph),
        vec![vec!["x/a.rs".to_string(), "x/b.rs".to_string()]]
    );
    assert!(!is_folder_and_child(&circles(&graph)[0]));
    assert!(is_folder_and_child(&[
        "x/mod.rs".to_string(),
        "x/b.rs".to_string()
    ]));
}

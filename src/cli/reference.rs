//! `refresher help-reference` (hidden): the flag reference under `docs/cli/`, one Markdown page
//! per command, written from the clap definitions so that it cannot drift from `--help`. The
//! test `the_cli_reference_pages_match_the_code` fails when the committed pages differ.
//!
//! Written by hand rather than with `clap-markdown`: that crate puts every command on one page
//! and does not group flags by their help heading, which is how `--help` reads.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::Context;
use clap::{Arg, Command};

#[derive(clap::Args)]
pub struct Args {
    /// Directory the pages are written into (e.g. docs/cli).
    #[arg(long)]
    pub(crate) out: PathBuf,
}

pub fn run(args: Args, cli: Command) -> anyhow::Result<()> {
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    for (name, text) in pages(cli) {
        let path = args.out.join(&name);
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// Every page: `README.md` (the index), then one `<command>.md` per command that runs
/// (`gp4c-train.md` for `gp4c train`); hidden commands are left out.
pub fn pages(mut cli: Command) -> Vec<(String, String)> {
    cli.build();
    let mut commands = Vec::new();
    leaves(&cli, &mut Vec::new(), &mut commands);
    let mut index = format!(
        "# Command-line reference\n\n{GENERATED}\n\nOne page per command: every flag with its \
         aliases, values and default, grouped as `--help` groups them.\n\n"
    );
    let mut out = Vec::new();
    for (path, command) in commands {
        let file = format!("{}.md", path.join("-"));
        let about = plain(
            command
                .get_about()
                .map(|a| a.to_string())
                .unwrap_or_default(),
        );
        writeln!(index, "- [`refresher {}`]({file}): {about}", path.join(" ")).unwrap();
        out.push((file, page(&path, command)));
    }
    out.insert(0, ("README.md".to_string(), index));
    out
}

const GENERATED: &str = "Generated from the command definitions (`src/cli/`) by \
                         `cargo run -- help-reference --out docs/cli`; do not edit by hand.";

/// The commands that run, with their path of subcommand names.
fn leaves<'a>(
    command: &'a Command,
    path: &mut Vec<String>,
    out: &mut Vec<(Vec<String>, &'a Command)>,
) {
    for sub in command.get_subcommands() {
        if sub.is_hide_set() || sub.get_name() == "help" {
            continue;
        }
        path.push(sub.get_name().to_string());
        if sub.has_subcommands() {
            leaves(sub, path, out);
        } else {
            out.push((path.clone(), sub));
        }
        path.pop();
    }
}

/// One command's page: its purpose, usage, flags by heading, and the former spellings kept.
fn page(path: &[String], command: &Command) -> String {
    let mut text = format!("# `refresher {}`\n\n{GENERATED}\n\n", path.join(" "));
    let about = command
        .get_long_about()
        .or(command.get_about())
        .map(|a| a.to_string())
        .unwrap_or_default();
    writeln!(text, "{}\n", plain(about)).unwrap();
    // The usage line as `--help` prints it (its styles dropped).
    let usage = command.clone().render_usage().to_string();
    let usage = usage.trim().trim_start_matches("Usage:").trim();
    writeln!(text, "```text\n{usage}\n```\n").unwrap();
    let shown: Vec<&Arg> = command
        .get_arguments()
        .filter(|a| !a.is_hide_set() && !matches!(a.get_id().as_str(), "help" | "version"))
        .collect();
    let mut headings: Vec<&str> = Vec::new();
    for arg in &shown {
        let heading = heading_of(arg);
        if !headings.contains(&heading) {
            headings.push(heading);
        }
    }
    for heading in headings {
        writeln!(text, "## {heading}\n").unwrap();
        for arg in shown.iter().filter(|a| heading_of(a) == heading) {
            text.push_str(&flag(arg));
        }
    }
    let former: Vec<&Arg> = command
        .get_arguments()
        .filter(|a| a.is_hide_set())
        .collect();
    if !former.is_empty() {
        text.push_str("## Former spellings\n\nStill accepted, each printing a note naming the spelling to write.\n\n");
        for arg in former {
            let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
            writeln!(text, "- `{}`: {}", signature(arg), plain(help)).unwrap();
        }
        text.push('\n');
    }
    text
}

fn heading_of(arg: &Arg) -> &str {
    arg.get_help_heading().unwrap_or(if arg.is_positional() {
        "Arguments"
    } else {
        "Options"
    })
}

/// `--flag <VALUE>`, `-s, --flag`, or `<NAME>` for a positional argument.
fn signature(arg: &Arg) -> String {
    let value = arg
        .get_value_names()
        .map(|names| {
            names
                .iter()
                .map(|n| format!("<{n}>"))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|| format!("<{}>", arg.get_id()));
    if arg.is_positional() {
        return value;
    }
    let mut out = String::new();
    if let Some(short) = arg.get_short() {
        write!(out, "-{short}, ").unwrap();
    }
    if let Some(long) = arg.get_long() {
        write!(out, "--{long}").unwrap();
    }
    if arg.get_action().takes_values() {
        write!(out, " {value}").unwrap();
    }
    out
}

/// One flag: its signature, help, then what it accepts.
fn flag(arg: &Arg) -> String {
    let mut text = format!("### `{}`\n\n", signature(arg));
    let help = arg
        .get_long_help()
        .or(arg.get_help())
        .map(|h| h.to_string())
        .unwrap_or_default();
    if !help.is_empty() {
        writeln!(text, "{}\n", plain(help)).unwrap();
    }
    let mut facts = Vec::new();
    if arg.is_required_set() {
        facts.push("Required.".to_string());
    }
    if let Some(aliases) = arg.get_all_aliases() {
        let aliases: Vec<String> = aliases.iter().map(|a| format!("`--{a}`")).collect();
        facts.push(format!(
            "Also spelled {} (its former name).",
            aliases.join(", ")
        ));
    }
    if matches!(arg.get_action(), clap::ArgAction::Append) {
        facts.push("Repeatable.".to_string());
    }
    if let Some(d) = arg.get_value_delimiter() {
        facts.push(format!("Values separated by `{d}`."));
    }
    let defaults: Vec<String> = arg
        .get_default_values()
        .iter()
        .map(|d| format!("`{}`", d.to_string_lossy()))
        .collect();
    if arg.get_action().takes_values() && !defaults.is_empty() && !arg.is_hide_default_value_set() {
        facts.push(format!("Default: {}.", defaults.join(", ")));
    }
    if !facts.is_empty() {
        writeln!(text, "{}\n", facts.join(" ")).unwrap();
    }
    if arg.get_action().takes_values() {
        let values = arg.get_possible_values();
        for v in values.iter().filter(|v| !v.is_hide_set()) {
            match v.get_help() {
                Some(help) => writeln!(text, "- `{}`: {}", v.get_name(), plain(help.to_string())),
                None => writeln!(text, "- `{}`", v.get_name()),
            }
            .unwrap();
        }
        if !values.is_empty() {
            text.push('\n');
        }
    }
    text
}

/// Help text as Markdown: `<` outside code spans escaped, so that `<lastmod>` stays text.
fn plain(text: String) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_code = false;
    for c in text.trim().chars() {
        match c {
            '`' => in_code = !in_code,
            '<' if !in_code => out.push('\\'),
            _ => {}
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// Where the pages live in the repository, and the command that rewrites them.
    const DOCS_DIR: &str = "docs/cli";
    const REWRITE: &str = "cargo run -- help-reference --out docs/cli";

    /// `docs/cli/` holds exactly the pages the code generates; rewrite them with
    /// `cargo run -- help-reference --out docs/cli` after changing a flag.
    #[test]
    fn the_cli_reference_pages_match_the_code() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(DOCS_DIR);
        let expected = pages(crate::Cli::command());
        let mut stale = Vec::new();
        for (name, text) in &expected {
            let committed = std::fs::read_to_string(dir.join(name)).unwrap_or_default();
            if committed != *text {
                let line = committed
                    .lines()
                    .zip(text.lines())
                    .position(|(a, b)| a != b)
                    .unwrap_or(committed.lines().count().min(text.lines().count()));
                stale.push(format!("{name} (first difference at line {})", line + 1));
            }
        }
        let extra: Vec<String> = std::fs::read_dir(&dir)
            .map(|entries| {
                entries
                    .filter_map(|e| e.ok()?.file_name().into_string().ok())
                    .filter(|n| n.ends_with(".md") && !expected.iter().any(|(e, _)| e == n))
                    .collect()
            })
            .unwrap_or_default();
        assert!(
            stale.is_empty() && extra.is_empty(),
            "{DOCS_DIR} differs from the code: {stale:?}; no command for {extra:?} (delete \
             them); rewrite the pages with `{REWRITE}`"
        );
    }

    /// `--help` is read in a terminal: no rustdoc links or paths reach it from doc comments.
    #[test]
    fn no_help_carries_rustdoc_markup() {
        fn check(command: &mut Command, path: &str, found: &mut Vec<String>) {
            let help = command.render_long_help().to_string();
            for markup in ["[`", "`]", "](", "super::", "crate::"] {
                if help.contains(markup) {
                    found.push(format!("`{path} --help` shows `{markup}`"));
                }
            }
            for sub in command.get_subcommands_mut() {
                let path = format!("{path} {}", sub.get_name());
                check(sub, &path, found);
            }
        }
        let mut cli = crate::Cli::command();
        cli.build();
        let mut found = Vec::new();
        check(&mut cli, "refresher", &mut found);
        assert!(found.is_empty(), "{found:#?}");
    }

    #[test]
    fn a_flag_lists_its_aliases_values_and_default() {
        let arg = Arg::new("scoring")
            .long("scoring")
            .alias("rank")
            .help("Scoring <function>")
            .value_parser(["bm25", "tfidf"])
            .default_value("bm25");
        let mut command = Command::new("t").arg(arg);
        command.build();
        let text = flag(command.get_arguments().next().unwrap());
        assert_eq!(
            text,
            "### `--scoring <scoring>`\n\nScoring \\<function>\n\nAlso spelled `--rank` (its \
             former name). Default: `bm25`.\n\n- `bm25`\n- `tfidf`\n\n"
        );
    }
}

//! Progress bars for long work, hidden when stderr is not a terminal or when asked to be quiet.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A progress bar over `len` units of work (bytes when `bytes` is set), drawn on stderr.
///
/// Bars are hidden when stderr is not a terminal (tests, CI, pipes) so that machine-readable
/// output stays clean; `REFRESHER_PROGRESS=1` forces them on.
pub fn bar(len: u64, message: &str, bytes: bool) -> ProgressBar {
    let pb = ProgressBar::with_draw_target(Some(len), draw_target());
    let template = if bytes {
        "{msg:>12} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} ({bytes_per_sec}, eta {eta})"
    } else {
        "{msg:>12} [{elapsed_precise}] {wide_bar} {pos}/{len} (eta {eta})"
    };
    pb.set_style(
        ProgressStyle::with_template(template)
            .expect("static template")
            .progress_chars("=> "),
    );
    pb.set_message(message.to_string());
    pb
}

/// A spinner for work of unknown length.
pub fn spinner(message: &str) -> ProgressBar {
    let pb = ProgressBar::with_draw_target(None, draw_target());
    pb.set_style(
        ProgressStyle::with_template("{msg:>12} [{elapsed_precise}] {spinner} {pos} {per_sec}")
            .expect("static template"),
    );
    pb.set_message(message.to_string());
    pb
}

fn draw_target() -> ProgressDrawTarget {
    let forced = std::env::var("REFRESHER_PROGRESS").is_ok_and(|v| v == "1");
    if forced || std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    }
}

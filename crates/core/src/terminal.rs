//! Text for a terminal: input-derived strings (file names, log lines, queries, WARC header
//! values) pass through [`terminal_safe`] before they are printed, so a hostile or corrupt
//! input cannot move the cursor, rewrite earlier lines, set the window title or hide text
//! with escape sequences.

use std::borrow::Cow;

/// `text` with every control character except newline and tab shown as a visible escape
/// (`\u{1b}`): the C0 controls, DEL and the C1 controls (U+0080–U+009F, which some
/// terminals also obey). Borrowed when there is nothing to escape.
pub fn terminal_safe(text: &str) -> Cow<'_, str> {
    let unsafe_char = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if unsafe_char(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_controls_but_keeps_text_newlines_and_tabs() {
        assert!(matches!(
            terminal_safe("plain text\tok\n"),
            Cow::Borrowed(_)
        ));
        assert_eq!(
            terminal_safe("a\u{1b}[2Jb\u{7}c\rd\u{9b}31me\u{7f}"),
            "a\\u{1b}[2Jb\\u{7}c\\u{d}d\\u{9b}31me\\u{7f}"
        );
        assert_eq!(terminal_safe("naïve café ✓"), "naïve café ✓");
    }
}

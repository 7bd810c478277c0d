//! Reports for people: SVG charts written next to the CSV/JSON results, and text made safe
//! for a terminal.

pub mod chart_style;
pub mod svg;

pub use crate::terminal::terminal_safe;

//! Reports for people: SVG charts written next to the CSV/JSON results.

pub mod svg;

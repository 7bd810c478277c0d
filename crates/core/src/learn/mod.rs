//! Learning refresh score functions offline from change histories.
//!
//! * [`gp4c`]: paper 001's genetic programming of score functions over a page's change
//!   statistics, with the crawl simulation it uses as fitness.

pub mod gp4c;

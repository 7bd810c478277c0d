//! Change detection and change-rate estimation (being written).

//! JSON outputs compared across runs (shared with the tests' `common` module).

#![allow(dead_code)]

/// Removes every `"seconds"` field (timings) from a JSON value, so that two runs' outputs
/// compare equal when only their timings differ.
pub fn strip_seconds(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            map.remove("seconds");
            map.values_mut().for_each(strip_seconds);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(strip_seconds),
        _ => {}
    }
}

//! The web UI (`web/`), compiled into the binary with `include_str!` so `refresher serve`
//! needs no files beside it and no build step at run time.

use axum::extract::Path;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::response::{Html, IntoResponse, Response};

use super::error::ApiError;

pub const SEARCH_HTML: &str = include_str!("../../web/index.html");
pub const DASHBOARD_HTML: &str = include_str!("../../web/dashboard.html");
pub const COMPARE_HTML: &str = include_str!("../../web/compare.html");
pub const WEBFOUNTAIN_HTML: &str = include_str!("../../web/webfountain.html");
pub const OPENAPI_JSON: &str = include_str!("../../web/openapi.json");

/// `(name, content type, body)` of every file under `/static/`.
pub const STATIC_FILES: &[(&str, &str, &str)] = &[
    (
        "style.css",
        "text/css; charset=utf-8",
        include_str!("../../web/style.css"),
    ),
    (
        "common.js",
        "text/javascript; charset=utf-8",
        include_str!("../../web/common.js"),
    ),
    (
        "meanings.js",
        "text/javascript; charset=utf-8",
        include_str!("../../web/meanings.js"),
    ),
    (
        "charts.js",
        "text/javascript; charset=utf-8",
        include_str!("../../web/charts.js"),
    ),
    // uPlot (https://github.com/leeoniya/uPlot, MIT), vendored unchanged from the npm
    // package `uplot`: it draws the charts; `charts.js` says how they read.
    (
        "uPlot.iife.min.js",
        "text/javascript; charset=utf-8",
        include_str!("../../web/vendor/uplot/uPlot.iife.min.js"),
    ),
    (
        "uPlot.min.css",
        "text/css; charset=utf-8",
        include_str!("../../web/vendor/uplot/uPlot.min.css"),
    ),
    (
        "uPlot.LICENSE.txt",
        "text/plain; charset=utf-8",
        include_str!("../../web/vendor/uplot/LICENSE"),
    ),
    (
        "search.js",
        "text/javascript; charset=utf-8",
        include_str!("../../web/search.js"),
    ),
    (
        "dashboard.js",
        "text/javascript; charset=utf-8",
        include_str!("../../web/dashboard.js"),
    ),
    (
        "engine.js",
        "text/javascript; charset=utf-8",
        include_str!("../../web/engine.js"),
    ),
    (
        "compare.js",
        "text/javascript; charset=utf-8",
        include_str!("../../web/compare.js"),
    ),
    (
        "webfountain.js",
        "text/javascript; charset=utf-8",
        include_str!("../../web/webfountain.js"),
    ),
];

pub async fn search_page() -> Html<&'static str> {
    Html(SEARCH_HTML)
}

pub async fn dashboard_page() -> Html<&'static str> {
    Html(DASHBOARD_HTML)
}

pub async fn compare_page() -> Html<&'static str> {
    Html(COMPARE_HTML)
}

pub async fn webfountain_page() -> Html<&'static str> {
    Html(WEBFOUNTAIN_HTML)
}

pub async fn openapi() -> Response {
    (
        [(CONTENT_TYPE, "application/json")],
        openapi_document().to_string(),
    )
        .into_response()
}

/// `web/openapi.json` with the policy table filled in: the families as the `policy` enum of
/// run requests and, under `x-policy-families`, each family's parameters.
pub fn openapi_document() -> serde_json::Value {
    let mut doc: serde_json::Value =
        serde_json::from_str(OPENAPI_JSON).expect("web/openapi.json is JSON (tested)");
    let names = crate::policy::registry::names();
    doc["components"]["schemas"]["RunSpec"]["properties"]["policy"]["enum"] =
        serde_json::json!(names);
    doc["x-policy-families"] = crate::policy::registry::families_json();
    doc
}

pub async fn static_file(Path(name): Path<String>) -> Result<Response, ApiError> {
    let (_, content_type, body) = STATIC_FILES
        .iter()
        .find(|(n, _, _)| *n == name)
        .ok_or_else(|| ApiError::NotFound(format!("no static file `{name}`")))?;
    Ok((
        [(CONTENT_TYPE, *content_type), (CACHE_CONTROL, "no-cache")],
        *body,
    )
        .into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_openapi_description_is_json_and_lists_every_api_route() {
        let doc: serde_json::Value = serde_json::from_str(OPENAPI_JSON).unwrap();
        assert!(doc["openapi"].as_str().unwrap().starts_with("3."));
        let paths = doc["paths"].as_object().unwrap();
        for route in [
            "/api/search",
            "/api/quality",
            "/api/policies",
            "/api/runs",
            "/api/runs/{id}",
            "/api/runs/{id}/cancel",
            "/api/runs/{id}/events",
            "/api/compare",
            "/api/chart-style",
            "/metrics",
        ] {
            assert!(
                paths.contains_key(route),
                "{route} missing from openapi.json"
            );
        }
    }

    #[test]
    fn every_script_and_stylesheet_a_page_loads_is_served() {
        for page in [SEARCH_HTML, DASHBOARD_HTML, COMPARE_HTML, WEBFOUNTAIN_HTML] {
            let mut rest = page;
            while let Some(at) = rest.find("/static/") {
                let name: String = rest[at + 8..].chars().take_while(|&c| c != '"').collect();
                assert!(
                    STATIC_FILES.iter().any(|(n, _, _)| *n == name),
                    "a page loads /static/{name}, which is not served"
                );
                rest = &rest[at + 8..];
            }
        }
        // The charts come from the vendored uPlot, loaded before the module that uses it.
        let uplot = COMPARE_HTML.find("/static/uPlot.iife.min.js").unwrap();
        assert!(uplot < COMPARE_HTML.find("/static/charts.js").unwrap());
    }

    #[test]
    fn the_served_description_lists_every_policy_family_and_its_parameters() {
        let doc = openapi_document();
        let families = doc["x-policy-families"].as_array().unwrap();
        assert_eq!(families.len(), crate::policy::registry::FAMILIES.len());
        let policy = &doc["components"]["schemas"]["RunSpec"]["properties"]["policy"]["enum"];
        assert!(policy.as_array().unwrap().iter().any(|p| p == "ebr"));
        let uc = families
            .iter()
            .find(|f| f["name"] == "user-centric")
            .unwrap();
        assert!(uc["params"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["key"] == "estimator"));
    }

    #[test]
    fn the_scripts_draw_policies_from_the_served_style_table_not_their_own() {
        use crate::report::chart_style::{FALLBACK_STYLES, FAMILY_STYLES};
        let script = |name: &str| {
            STATIC_FILES
                .iter()
                .find(|(n, _, _)| *n == name)
                .map(|(_, _, body)| *body)
                .unwrap()
        };
        assert!(script("charts.js").contains(r#"fetch("/api/chart-style")"#));
        assert!(script("charts.js").contains("styleOf(this.series)"));
        let colours = FAMILY_STYLES
            .iter()
            .map(|(_, s)| s.colour)
            .chain(FALLBACK_STYLES.iter().map(|s| s.colour));
        for colour in colours {
            for name in ["charts.js", "compare.js", "dashboard.js", "webfountain.js"] {
                assert!(
                    !script(name).to_lowercase().contains(&colour.to_lowercase()),
                    "{name} keeps its own copy of {colour}"
                );
            }
        }
    }
}

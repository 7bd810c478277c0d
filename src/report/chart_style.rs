//! How each policy is drawn, one table for the SVG charts and the web UI (served as
//! `GET /api/chart-style`, read by `web/charts.js`): a colour, a dash pattern and a marker per
//! policy family, so a reader finds "sbr" by its look on every chart without a legend hunt.
//!
//! Colours are Okabe and Ito's colour-blind-safe palette ("Color Universal Design", 2008)
//! without its yellow (#F0E442), too faint on white for a 2 px line. Every family of the default
//! comparison differs from every other in colour, dash *and* marker, so a chart printed in grey
//! or read by a colour-blind reader still tells them apart.

/// A marker's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Marker {
    Circle,
    Square,
    Triangle,
    Diamond,
    TriangleDown,
    Cross,
    Plus,
}

impl Marker {
    /// Strokes only (a cross or plus has no inside to fill).
    pub fn is_open(self) -> bool {
        matches!(self, Marker::Cross | Marker::Plus)
    }
}

/// How one series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct SeriesStyle {
    /// `#rrggbb`.
    pub colour: &'static str,
    /// Dash and gap lengths in pixels, alternating (empty: a solid line), as SVG's
    /// `stroke-dasharray` and the canvas's `setLineDash` read them.
    pub dash: &'static [f64],
    pub marker: Marker,
}

impl SeriesStyle {
    /// The dash pattern as an SVG `stroke-dasharray` value (empty for a solid line).
    pub fn dasharray(&self) -> String {
        let parts: Vec<String> = self.dash.iter().map(|d| format!("{d}")).collect();
        parts.join(" ")
    }
}

const fn style(colour: &'static str, dash: &'static [f64], marker: Marker) -> SeriesStyle {
    SeriesStyle {
        colour,
        dash,
        marker,
    }
}

/// The style of each named policy family. The proposed scheme (user-centric) is the solid line.
pub const FAMILY_STYLES: &[(&str, SeriesStyle)] = &[
    ("user-centric", style("#0072B2", &[], Marker::Circle)),
    ("sbr", style("#D55E00", &[8.0, 3.0], Marker::Square)),
    ("ebr", style("#009E73", &[2.0, 3.0], Marker::Triangle)),
    (
        "lambdacrawl",
        style("#CC79A7", &[9.0, 3.0, 2.0, 3.0], Marker::Diamond),
    ),
    (
        "round-robin",
        style("#E69F00", &[4.0, 4.0], Marker::TriangleDown),
    ),
    ("random", style("#56B4E9", &[1.0, 3.0], Marker::Cross)),
    (
        "age",
        style("#000000", &[12.0, 3.0, 3.0, 3.0], Marker::Plus),
    ),
];

/// Styles of the other series (other families, "pages", "y = x"), in order of first appearance
/// on a chart: each differs from every named family's in dash or marker.
pub const FALLBACK_STYLES: &[SeriesStyle] = &[
    style("#0072B2", &[6.0, 2.0, 1.0, 2.0], Marker::Diamond),
    style("#D55E00", &[1.0, 2.0], Marker::Circle),
    style("#009E73", &[10.0, 4.0], Marker::Square),
    style("#CC79A7", &[3.0, 2.0], Marker::Triangle),
    style("#E69F00", &[], Marker::Plus),
    style("#56B4E9", &[6.0, 3.0], Marker::TriangleDown),
    style("#000000", &[2.0, 2.0, 6.0, 2.0], Marker::Cross),
];

/// The policy family a series label names: the label up to its parameters or qualifier
/// (`sbr (θ = 0.3)` → `sbr`, `sbr, online` → `sbr`).
pub fn family_of(label: &str) -> &str {
    let end = [label.find(" ("), label.find(',')]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(label.len());
    label[..end].trim()
}

/// The style of a named family, if it has one.
pub fn family_style(family: &str) -> Option<SeriesStyle> {
    FAMILY_STYLES
        .iter()
        .find(|(name, _)| *name == family)
        .map(|(_, s)| *s)
}

/// The style of each of a chart's series labels: its family's, or the next fallback style for a
/// family without one (two labels of one such family share it).
pub fn styles_for<S: AsRef<str>>(labels: &[S]) -> Vec<SeriesStyle> {
    let mut unnamed: Vec<&str> = Vec::new();
    labels
        .iter()
        .map(|label| {
            let family = family_of(label.as_ref());
            family_style(family).unwrap_or_else(|| {
                let k = unnamed
                    .iter()
                    .position(|f| *f == family)
                    .unwrap_or_else(|| {
                        unnamed.push(family);
                        unnamed.len() - 1
                    });
                FALLBACK_STYLES[k % FALLBACK_STYLES.len()]
            })
        })
        .collect()
}

/// The table as JSON (`GET /api/chart-style`): `families` maps a family to its style,
/// `fallback` lists the other series' styles; `web/charts.js` applies the rule of
/// [`styles_for`] to them.
pub fn to_json() -> serde_json::Value {
    let families: serde_json::Map<String, serde_json::Value> = FAMILY_STYLES
        .iter()
        .map(|(name, s)| (name.to_string(), serde_json::json!(s)))
        .collect();
    serde_json::json!({ "families": families, "fallback": FALLBACK_STYLES })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_default_family_has_its_own_colour_dash_and_marker() {
        let styles: Vec<SeriesStyle> = crate::policy::registry::DEFAULT_COMPARISON
            .iter()
            .map(|f| family_style(f).unwrap_or_else(|| panic!("{f} has no style")))
            .collect();
        for (i, a) in styles.iter().enumerate() {
            for b in &styles[i + 1..] {
                assert_ne!(a.colour, b.colour, "{a:?} vs {b:?}");
                assert_ne!(a.dash, b.dash, "{a:?} vs {b:?}");
                assert_ne!(a.marker, b.marker, "{a:?} vs {b:?}");
            }
            assert_ne!(a.colour.to_uppercase(), "#F0E442", "yellow is too faint");
        }
        // A fallback style never looks like a named family's.
        for f in FALLBACK_STYLES {
            assert!(
                styles
                    .iter()
                    .all(|s| (s.dash, s.marker) != (f.dash, f.marker)),
                "{f:?}"
            );
        }
    }

    #[test]
    fn labels_with_parameters_take_their_family_style_and_others_the_fallbacks() {
        let styles = styles_for(&[
            "sbr (θ = 0.3)",
            "gad",
            "sbr, online",
            "gp-t-x",
            "gad (k = 2)",
        ]);
        assert_eq!(styles[0], family_style("sbr").unwrap());
        assert_eq!(styles[0], styles[2]);
        assert_eq!(styles[1], FALLBACK_STYLES[0]);
        assert_eq!(styles[3], FALLBACK_STYLES[1]);
        assert_eq!(styles[4], FALLBACK_STYLES[0], "one family, one style");
        let json = to_json();
        assert_eq!(json["families"]["ebr"]["marker"], "triangle");
        assert_eq!(
            json["families"]["sbr"]["dash"],
            serde_json::json!([8.0, 3.0])
        );
        assert_eq!(
            json["fallback"].as_array().unwrap().len(),
            FALLBACK_STYLES.len()
        );
        assert_eq!(family_style("lambdacrawl").unwrap().dasharray(), "9 3 2 3");
    }
}

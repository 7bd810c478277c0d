//! Minimal, dependency-free SVG charts (line charts and scatter plots).
//!
//! The comparison and estimate-check commands write their figures as standalone SVG files so
//! they open in any browser without a plotting toolchain; the web UI draws its own charts.

use std::fmt::Write;

/// Colours of successive series: Okabe and Ito's colour-blind-safe palette ("Color Universal
/// Design", 2008), its yellow last (faint on white).
const PALETTE: [&str; 8] = [
    "#0072b2", "#e69f00", "#009e73", "#d55e00", "#cc79a7", "#56b4e9", "#000000", "#f0e442",
];

/// Dash patterns of successive series: with [`MARKERS`], two series never look alike without
/// colour (the legend shows both).
const DASHES: [&str; 7] = ["", "7 3", "2 3", "9 3 2 3", "4 4", "12 3 3 3", "1 3"];

/// Marker shapes of successive series.
#[derive(Debug, Clone, Copy)]
enum Marker {
    Circle,
    Square,
    Triangle,
    Diamond,
    TriangleDown,
    Cross,
    Plus,
}

const MARKERS: [Marker; 7] = [
    Marker::Circle,
    Marker::Square,
    Marker::Triangle,
    Marker::Diamond,
    Marker::TriangleDown,
    Marker::Cross,
    Marker::Plus,
];

/// The series' marker of radius `r` at `(x, y)`, filled or stroked in `colour`.
fn marker(kind: Marker, x: f64, y: f64, r: f64, colour: &str) -> String {
    let filled = |d: String| {
        format!(r#"<path class="marker" d="{d}" fill="{colour}" fill-opacity="0.85"/>"#)
    };
    let stroked = |d: String| {
        format!(
            r#"<path class="marker" d="{d}" stroke="{colour}" stroke-width="1.8" fill="none"/>"#
        )
    };
    match kind {
        Marker::Circle => format!(
            r#"<circle class="marker" cx="{x:.1}" cy="{y:.1}" r="{r}" fill="{colour}" fill-opacity="0.85"/>"#
        ),
        Marker::Square => filled(format!(
            "M{:.1},{:.1}h{:.1}v{:.1}h{:.1}z",
            x - r,
            y - r,
            2.0 * r,
            2.0 * r,
            -2.0 * r
        )),
        Marker::Triangle => filled(format!(
            "M{x:.1},{:.1}L{:.1},{:.1}L{:.1},{:.1}z",
            y - 1.2 * r,
            x + 1.1 * r,
            y + 0.8 * r,
            x - 1.1 * r,
            y + 0.8 * r
        )),
        Marker::Diamond => filled(format!(
            "M{x:.1},{:.1}L{:.1},{y:.1}L{x:.1},{:.1}L{:.1},{y:.1}z",
            y - 1.3 * r,
            x + 1.3 * r,
            y + 1.3 * r,
            x - 1.3 * r
        )),
        Marker::TriangleDown => filled(format!(
            "M{x:.1},{:.1}L{:.1},{:.1}L{:.1},{:.1}z",
            y + 1.2 * r,
            x + 1.1 * r,
            y - 0.8 * r,
            x - 1.1 * r,
            y - 0.8 * r
        )),
        Marker::Cross => stroked(format!(
            "M{:.1},{:.1}L{:.1},{:.1}M{:.1},{:.1}L{:.1},{:.1}",
            x - r,
            y - r,
            x + r,
            y + r,
            x - r,
            y + r,
            x + r,
            y - r
        )),
        Marker::Plus => stroked(format!(
            "M{:.1},{y:.1}L{:.1},{y:.1}M{x:.1},{:.1}L{x:.1},{:.1}",
            x - 1.2 * r,
            x + 1.2 * r,
            y - 1.2 * r,
            y + 1.2 * r
        )),
    }
}

/// One named series of points.
#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// Axis scale.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    Linear,
    /// log10; points with non-positive coordinates are clamped to the smallest positive one.
    Log,
}

/// A chart's frame.
#[derive(Debug, Clone)]
pub struct Chart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x_scale: Scale,
    pub y_scale: Scale,
    /// Draw lines between points (line chart) or only dots (scatter).
    pub lines: bool,
    /// Largest value each axis may show (a share such as quality or freshness: 1), so
    /// padding never draws the axis past what the quantity can reach.
    pub x_at_most: Option<f64>,
    pub y_at_most: Option<f64>,
}

const W: f64 = 720.0;
const H: f64 = 440.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 180.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 50.0;

impl Chart {
    /// A line chart with linear axes and no caps (set the public fields for more).
    pub fn new(title: &str, x_label: &str, y_label: &str) -> Self {
        Chart {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            x_scale: Scale::Linear,
            y_scale: Scale::Linear,
            lines: true,
            x_at_most: None,
            y_at_most: None,
        }
    }

    /// Renders `series` as an SVG document.
    ///
    /// On a log axis a point at 0 (or below) has no place: it is drawn as a dashed reference
    /// line across the plot at its other coordinate, labelled with the axis (`B = 0:
    /// 0.9926`), never silently moved to the axis end. Lines join points in the order of the
    /// log-axis coordinate (the budget, in the comparison charts), else of x.
    pub fn render(&self, series: &[Series]) -> String {
        let references = self.zero_references(series);
        let plotted = self.placed_points(series);
        let mut xs: Vec<f64> = plotted.iter().flatten().map(|p| p.0).collect();
        let mut ys: Vec<f64> = plotted.iter().flatten().map(|p| p.1).collect();
        for &(vertical, v) in &references {
            if vertical {
                xs.push(v)
            } else {
                ys.push(v)
            }
        }
        let (x0, x1) = range(&xs, self.x_scale, self.x_at_most);
        let (y0, y1) = range(&ys, self.y_scale, self.y_at_most);
        let frame = Frame {
            x_scale: self.x_scale,
            y_scale: self.y_scale,
            x0,
            x1,
            y0,
            y1,
        };
        let mut out = String::new();
        self.write_axes(&mut out, &frame);
        self.write_references(&mut out, &frame, &references);
        for (i, (s, pts)) in series.iter().zip(&plotted).enumerate() {
            self.write_series(&mut out, &frame, i, s, pts);
        }
        out.push_str("</svg>\n");
        out
    }

    /// The reference lines for points at 0 on a log axis, sorted and deduplicated:
    /// (is the line vertical, value).
    fn zero_references(&self, series: &[Series]) -> Vec<(bool, f64)> {
        let mut references: Vec<(bool, f64)> = Vec::new();
        for s in series {
            for &(x, y) in &s.points {
                if self.y_scale == Scale::Log && y <= 0.0 && x.is_finite() {
                    references.push((true, x));
                } else if self.x_scale == Scale::Log && x <= 0.0 && y.is_finite() {
                    references.push((false, y));
                }
            }
        }
        references.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
        references.dedup_by(|a, b| a.0 == b.0 && (a.1 - b.1).abs() < 1e-9);
        references
    }

    /// Each series' points that have a place on the axes, in the order lines join them.
    fn placed_points(&self, series: &[Series]) -> Vec<Vec<(f64, f64)>> {
        let placeable = |(x, y): (f64, f64)| {
            x.is_finite()
                && y.is_finite()
                && (self.x_scale == Scale::Linear || x > 0.0)
                && (self.y_scale == Scale::Linear || y > 0.0)
        };
        series
            .iter()
            .map(|s| {
                let mut pts: Vec<(f64, f64)> =
                    s.points.iter().copied().filter(|&p| placeable(p)).collect();
                let key = |p: &(f64, f64)| {
                    if self.y_scale == Scale::Log && self.x_scale != Scale::Log {
                        p.1
                    } else {
                        p.0
                    }
                };
                pts.sort_by(|a, b| {
                    key(a)
                        .partial_cmp(&key(b))
                        .unwrap_or(std::cmp::Ordering::Equal)
                });
                pts
            })
            .collect()
    }

    /// The document's head, background and title, then the axes with their grid, ticks
    /// and labels.
    fn write_axes(&self, out: &mut String, frame: &Frame) {
        let _ = write!(
            out,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">"#
        );
        let _ = write!(out, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
        let _ = write!(
            out,
            r#"<text x="{}" y="22" font-size="15" text-anchor="middle">{}</text>"#,
            (LEFT + W - RIGHT) / 2.0,
            escape(&self.title)
        );
        let _ = write!(
            out,
            r#"<path d="M{LEFT},{TOP} V{} H{}" fill="none" stroke="black"/>"#,
            H - BOTTOM,
            W - RIGHT
        );
        for v in ticks(frame.x0, frame.x1, self.x_scale) {
            let tx = frame.px(v);
            let _ = write!(
                out,
                r##"<line x1="{tx:.1}" y1="{TOP}" x2="{tx:.1}" y2="{}" stroke="#ddd"/><text x="{tx:.1}" y="{}" text-anchor="middle" class="x-tick">{}</text>"##,
                H - BOTTOM,
                H - BOTTOM + 16.0,
                tick(v)
            );
        }
        for v in ticks(frame.y0, frame.y1, self.y_scale) {
            let ty = frame.py(v);
            let _ = write!(
                out,
                r##"<line x1="{LEFT}" y1="{ty:.1}" x2="{}" y2="{ty:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end" class="y-tick">{}</text>"##,
                W - RIGHT,
                LEFT - 6.0,
                ty + 4.0,
                tick(v)
            );
        }
        let _ = write!(
            out,
            r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
            (LEFT + W - RIGHT) / 2.0,
            H - 12.0,
            escape(&self.x_label)
        );
        let _ = write!(
            out,
            r#"<text transform="translate(16,{}) rotate(-90)" text-anchor="middle">{}</text>"#,
            (TOP + H - BOTTOM) / 2.0,
            escape(&self.y_label)
        );
    }

    /// The dashed reference lines of points at 0 on a log axis, each with its label.
    fn write_references(&self, out: &mut String, frame: &Frame, references: &[(bool, f64)]) {
        for &(vertical, v) in references {
            let (label, line) = if vertical {
                let x = frame.px(v);
                (
                    format!(
                        r#"<text x="{:.1}" y="{}" font-size="11" class="zero-ref">{} = 0: {}</text>"#,
                        x + 4.0,
                        TOP + 12.0,
                        escape(&self.y_label),
                        tick(v)
                    ),
                    format!(
                        r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{}" stroke="#555" stroke-dasharray="5 4"/>"##,
                        H - BOTTOM
                    ),
                )
            } else {
                let y = frame.py(v);
                (
                    format!(
                        r#"<text x="{}" y="{:.1}" font-size="11" class="zero-ref">{} = 0: {}</text>"#,
                        LEFT + 6.0,
                        y - 4.0,
                        escape(&self.x_label),
                        tick(v)
                    ),
                    format!(
                        r##"<line x1="{LEFT}" y1="{y:.1}" x2="{}" y2="{y:.1}" stroke="#555" stroke-dasharray="5 4"/>"##,
                        W - RIGHT
                    ),
                )
            };
            out.push_str(&line);
            out.push_str(&label);
        }
    }

    /// Series `i`: its line (line charts), its dots, and its legend entry.
    fn write_series(
        &self,
        out: &mut String,
        frame: &Frame,
        i: usize,
        s: &Series,
        pts: &[(f64, f64)],
    ) {
        let colour = PALETTE[i % PALETTE.len()];
        let dash = DASHES[i % DASHES.len()];
        let dash_attr = if dash.is_empty() {
            String::new()
        } else {
            format!(r#" stroke-dasharray="{dash}""#)
        };
        let kind = MARKERS[i % MARKERS.len()];
        if self.lines && pts.len() > 1 {
            let d: Vec<String> = pts
                .iter()
                .enumerate()
                .map(|(k, &(x, y))| {
                    format!(
                        "{}{:.1},{:.1}",
                        if k == 0 { "M" } else { "L" },
                        frame.px(x),
                        frame.py(y)
                    )
                })
                .collect();
            let _ = write!(
                out,
                r#"<path d="{}" fill="none" stroke="{colour}" stroke-width="2"{dash_attr}/>"#,
                d.join(" ")
            );
        }
        let r = if self.lines { 3.5 } else { 2.5 };
        for &(x, y) in pts {
            out.push_str(&marker(kind, frame.px(x), frame.py(y), r, colour));
        }
        // The legend shows the series as drawn: a line sample with its dashes and marker.
        let ly = TOP + 10.0 + 18.0 * i as f64;
        let lx = W - RIGHT + 8.0;
        if self.lines {
            let _ = write!(
                out,
                r#"<line x1="{lx}" y1="{:.1}" x2="{}" y2="{:.1}" stroke="{colour}" stroke-width="2"{dash_attr}/>"#,
                ly - 4.0,
                lx + 22.0,
                ly - 4.0
            );
        }
        out.push_str(&marker(kind, lx + 11.0, ly - 4.0, 3.5, colour));
        let _ = write!(
            out,
            r#"<text x="{}" y="{}">{}</text>"#,
            lx + 28.0,
            ly,
            escape(&s.name)
        );
    }
}

/// The plot's axis ranges (in axis units): where a value is drawn.
struct Frame {
    x_scale: Scale,
    y_scale: Scale,
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
}

impl Frame {
    /// The horizontal pixel of `x`.
    fn px(&self, x: f64) -> f64 {
        LEFT + (to_axis(x, self.x_scale, self.x0) - self.x0) / (self.x1 - self.x0)
            * (W - LEFT - RIGHT)
    }

    /// The vertical pixel of `y`.
    fn py(&self, y: f64) -> f64 {
        H - BOTTOM
            - (to_axis(y, self.y_scale, self.y0) - self.y0) / (self.y1 - self.y0)
                * (H - TOP - BOTTOM)
    }
}

fn to_axis(v: f64, scale: Scale, floor: f64) -> f64 {
    match scale {
        Scale::Linear => v,
        Scale::Log => {
            if v > 0.0 {
                v.log10()
            } else {
                floor
            }
        }
    }
}

/// The axis range (in axis units) covering `values`, padded a little, never past `at_most`.
fn range(values: &[f64], scale: Scale, at_most: Option<f64>) -> (f64, f64) {
    let mapped: Vec<f64> = values
        .iter()
        .filter(|v| v.is_finite() && (scale == Scale::Linear || **v > 0.0))
        .map(|&v| to_axis(v, scale, 0.0))
        .collect();
    if mapped.is_empty() {
        return (0.0, 1.0);
    }
    let lo = mapped.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = mapped.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (mut lo, mut hi) = if (hi - lo).abs() < 1e-12 {
        let pad = if scale == Scale::Log {
            0.5
        } else {
            lo.abs().max(1e-3) * 0.01
        };
        (lo - pad, hi + pad)
    } else {
        let pad = (hi - lo) * 0.04;
        (lo - pad, hi + pad)
    };
    if let Some(cap) = at_most.filter(|c| scale == Scale::Linear || *c > 0.0) {
        let cap = to_axis(cap, scale, 0.0);
        if hi > cap {
            hi = cap;
            if lo >= hi {
                lo = hi - 1e-3;
            }
        }
    }
    (lo, hi)
}

/// Tick values inside `lo..=hi` (axis units): on a log axis the powers of ten, with 2 and 5
/// multiples when the span is under three decades; on a linear axis steps of 1, 2 or 5 × 10^k,
/// about five of them.
fn ticks(lo: f64, hi: f64, scale: Scale) -> Vec<f64> {
    match scale {
        Scale::Log => {
            let mut out = Vec::new();
            let multiples: &[f64] = if hi - lo < 3.0 {
                &[1.0, 2.0, 5.0]
            } else {
                &[1.0]
            };
            for k in (lo.floor() as i32)..=(hi.ceil() as i32) {
                for m in multiples {
                    let v = m * 10f64.powi(k);
                    if (lo - 1e-9..=hi + 1e-9).contains(&v.log10()) {
                        out.push(v);
                    }
                }
            }
            out
        }
        Scale::Linear => {
            let span = hi - lo;
            if span.is_nan() || span <= 0.0 {
                return vec![lo];
            }
            let raw = span / 5.0;
            let magnitude = 10f64.powf(raw.log10().floor());
            let step = [1.0, 2.0, 5.0, 10.0]
                .iter()
                .map(|m| m * magnitude)
                .find(|s| *s >= raw)
                .unwrap_or(10.0 * magnitude);
            let first = (lo / step).ceil() as i64;
            let last = (hi / step).floor() as i64;
            (first..=last).map(|i| i as f64 * step).collect()
        }
    }
}

fn tick(v: f64) -> String {
    let a = v.abs();
    if a < 1e-12 {
        "0".into()
    } else if !(0.001..10_000.0).contains(&a) {
        format!("{v:.1e}")
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else {
        let s = format!("{v:.4}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fig4() -> Chart {
        Chart {
            x_scale: Scale::Linear,
            y_scale: Scale::Log,
            x_at_most: Some(1.0),
            ..Chart::new("B <needed>", "quality", "B")
        }
    }

    fn tick_labels(svg: &str, class: &str) -> Vec<String> {
        svg.split(&format!(r#"class="{class}">"#))
            .skip(1)
            .map(|s| s.split('<').next().unwrap().to_string())
            .collect()
    }

    #[test]
    fn renders_series_points_and_legend() {
        let svg = fig4().render(&[
            Series {
                name: "user-centric".into(),
                points: vec![(0.95, 1.0), (0.99, 4.0)],
            },
            Series {
                name: "sbr".into(),
                points: vec![(0.95, 8.0), (0.99, 64.0), (0.9, 0.0)],
            },
        ]);
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        // The B = 0 point is a labelled reference line, not a dot at the axis end.
        assert_eq!(
            svg.matches(r#"class="marker""#).count(),
            4 + 2,
            "4 points, 2 legend samples"
        );
        // Told apart without colour: each series its own marker and dashes.
        assert!(svg.contains("<circle") && svg.contains(r#"<path class="marker""#));
        assert!(svg.contains(r#"stroke-dasharray="7 3""#));
        assert_eq!(tick_labels(&svg, "zero-ref"), ["B = 0: 0.9"]);
        assert!(svg.contains("user-centric") && svg.contains("B &lt;needed&gt;"));
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
    }

    #[test]
    fn log_ticks_are_round_and_share_axes_stop_at_one() {
        let svg = fig4().render(&[Series {
            name: "p".into(),
            points: vec![(0.97, 1.0), (0.999, 16.0), (1.0, 1024.0), (0.9926, 0.0)],
        }]);
        let y: Vec<String> = tick_labels(&svg, "y-tick");
        assert_eq!(y, ["1", "10", "100", "1000"], "{svg}");
        let x: Vec<f64> = tick_labels(&svg, "x-tick")
            .iter()
            .map(|t| t.parse().unwrap())
            .collect();
        assert!(x.iter().all(|&v| v <= 1.0) && x.len() >= 3, "{x:?}");
        for w in x.windows(2) {
            let step = w[1] - w[0];
            let norm = step / 10f64.powf(step.log10().floor());
            assert!(
                [1.0, 2.0, 5.0].iter().any(|m| (norm - m).abs() < 1e-6),
                "{x:?}"
            );
        }
        assert_eq!(tick_labels(&svg, "zero-ref"), ["B = 0: 0.9926"]);
        // A short log span gets 1-2-5 ticks.
        assert_eq!(
            ticks(0.0, 2.0_f64.log10() + 1.0, Scale::Log),
            [1.0, 2.0, 5.0, 10.0, 20.0]
        );
        // B = 0 on a log x axis (quality vs budget) is a horizontal reference.
        let svg = Chart {
            x_scale: Scale::Log,
            y_at_most: Some(1.0),
            ..Chart::new("q", "B", "quality")
        }
        .render(&[Series {
            name: "p".into(),
            points: vec![(0.0, 0.98), (4.0, 0.99), (1.0, 0.985)],
        }]);
        assert_eq!(tick_labels(&svg, "zero-ref"), ["B = 0: 0.98"]);
        let y: Vec<f64> = tick_labels(&svg, "y-tick")
            .iter()
            .map(|t| t.parse().unwrap())
            .collect();
        assert!(y.iter().all(|&v| v <= 1.0), "{y:?}");
    }
}

//! Minimal, dependency-free SVG charts (line charts and scatter plots).
//!
//! The comparison and estimate-check commands write their figures as standalone SVG files so
//! they open in any browser without a plotting toolchain; the web UI draws its own charts.

use std::fmt::Write;

/// Colours of successive series (colour-blind-safe Tableau 10).
const PALETTE: [&str; 10] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac",
];

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
}

const W: f64 = 720.0;
const H: f64 = 440.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 180.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 50.0;

impl Chart {
    /// Renders `series` as an SVG document.
    pub fn render(&self, series: &[Series]) -> String {
        let all: Vec<(f64, f64)> = series
            .iter()
            .flat_map(|s| s.points.iter().copied())
            .collect();
        let (xs, ys): (Vec<f64>, Vec<f64>) = all.iter().copied().unzip();
        let (x0, x1) = range(&xs, self.x_scale);
        let (y0, y1) = range(&ys, self.y_scale);
        let px =
            |x: f64| LEFT + (to_axis(x, self.x_scale, x0) - x0) / (x1 - x0) * (W - LEFT - RIGHT);
        let py = |y: f64| {
            H - BOTTOM - (to_axis(y, self.y_scale, y0) - y0) / (y1 - y0) * (H - TOP - BOTTOM)
        };
        let mut out = String::new();
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
        // Axes and ticks.
        let _ = write!(
            out,
            r#"<path d="M{LEFT},{TOP} V{} H{}" fill="none" stroke="black"/>"#,
            H - BOTTOM,
            W - RIGHT
        );
        for i in 0..=5 {
            let fx = x0 + (x1 - x0) * i as f64 / 5.0;
            let fy = y0 + (y1 - y0) * i as f64 / 5.0;
            let (vx, vy) = (from_axis(fx, self.x_scale), from_axis(fy, self.y_scale));
            let (tx, ty) = (px(vx), py(vy));
            let _ = write!(
                out,
                r##"<line x1="{tx}" y1="{}" x2="{tx}" y2="{}" stroke="#ddd"/><text x="{tx}" y="{}" text-anchor="middle">{}</text>"##,
                TOP,
                H - BOTTOM,
                H - BOTTOM + 16.0,
                tick(vx)
            );
            let _ = write!(
                out,
                r##"<line x1="{LEFT}" y1="{ty}" x2="{}" y2="{ty}" stroke="#ddd"/><text x="{}" y="{}" text-anchor="end">{}</text>"##,
                W - RIGHT,
                LEFT - 6.0,
                ty + 4.0,
                tick(vy)
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
        for (i, s) in series.iter().enumerate() {
            let colour = PALETTE[i % PALETTE.len()];
            if self.lines && s.points.len() > 1 {
                let d: Vec<String> = s
                    .points
                    .iter()
                    .enumerate()
                    .map(|(k, &(x, y))| {
                        format!(
                            "{}{:.1},{:.1}",
                            if k == 0 { "M" } else { "L" },
                            px(x),
                            py(y)
                        )
                    })
                    .collect();
                let _ = write!(
                    out,
                    r#"<path d="{}" fill="none" stroke="{colour}" stroke-width="2"/>"#,
                    d.join(" ")
                );
            }
            let r = if self.lines { 3.0 } else { 2.0 };
            for &(x, y) in &s.points {
                let _ = write!(
                    out,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="{r}" fill="{colour}" fill-opacity="0.8"/>"#,
                    px(x),
                    py(y)
                );
            }
            let ly = TOP + 10.0 + 18.0 * i as f64;
            let lx = W - RIGHT + 12.0;
            let _ = write!(
                out,
                r#"<rect x="{lx}" y="{}" width="12" height="12" fill="{colour}"/><text x="{}" y="{}">{}</text>"#,
                ly - 10.0,
                lx + 18.0,
                ly,
                escape(&s.name)
            );
        }
        out.push_str("</svg>\n");
        out
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

fn from_axis(v: f64, scale: Scale) -> f64 {
    match scale {
        Scale::Linear => v,
        Scale::Log => 10f64.powf(v),
    }
}

/// The axis range (in axis units) covering `values`, padded a little.
fn range(values: &[f64], scale: Scale) -> (f64, f64) {
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
    if (hi - lo).abs() < 1e-12 {
        return (lo - 0.5, hi + 0.5);
    }
    let pad = (hi - lo) * 0.04;
    (lo - pad, hi + pad)
}

fn tick(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if !(0.01..10_000.0).contains(&a) {
        format!("{v:.1e}")
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else {
        let s = format!("{v:.3}");
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

    #[test]
    fn renders_series_points_and_legend() {
        let chart = Chart {
            title: "B <needed>".into(),
            x_label: "quality".into(),
            y_label: "B".into(),
            x_scale: Scale::Linear,
            y_scale: Scale::Log,
            lines: true,
        };
        let svg = chart.render(&[
            Series {
                name: "user-centric".into(),
                points: vec![(0.95, 1.0), (0.99, 4.0)],
            },
            Series {
                name: "sbr".into(),
                points: vec![(0.95, 8.0), (0.99, 64.0), (0.999, 0.0)],
            },
        ]);
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("<circle").count(), 5);
        assert!(svg.contains("user-centric") && svg.contains("B &lt;needed&gt;"));
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
    }
}

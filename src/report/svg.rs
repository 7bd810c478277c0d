//! Minimal, dependency-free SVG charts (line charts and scatter plots).
//!
//! The comparison and estimate-check commands write their figures as standalone SVG files so
//! they open in any browser without a plotting toolchain; the web UI draws its own charts with
//! the same per-policy look ([`chart_style`](super::chart_style)).
//!
//! Layout: the title and an optional subtitle above the plot; the legend in a column right of
//! the plot, each entry a line sample with its dashes and marker; the B = 0 reference labels at
//! the legend's foot, never inside the plot, so they cannot cover data.

use std::fmt::Write;

use super::chart_style::{styles_for, Marker, SeriesStyle};

/// The series' marker of radius `r` at `(x, y)`, in `colour`; `hollow` draws its outline only
/// (an online run beside its filled oracle twin). `class` tells data markers from legend ones.
fn marker(kind: Marker, x: f64, y: f64, r: f64, colour: &str, hollow: bool, class: &str) -> String {
    let paint = if kind.is_open() {
        format!(r#"stroke="{colour}" stroke-width="1.8" fill="none""#)
    } else if hollow {
        format!(r#"stroke="{colour}" stroke-width="1.6" fill="white""#)
    } else {
        format!(r#"fill="{colour}" fill-opacity="0.85""#)
    };
    let polygon = |corners: &[(f64, f64)]| {
        let d: Vec<String> = corners
            .iter()
            .enumerate()
            .map(|(k, (dx, dy))| {
                format!(
                    "{}{:.1},{:.1}",
                    if k == 0 { "M" } else { "L" },
                    x + dx * r,
                    y + dy * r
                )
            })
            .collect();
        format!(r#"<path class="{class}" d="{}z" {paint}/>"#, d.join(""))
    };
    let strokes = |a: [(f64, f64); 4]| {
        format!(
            r#"<path class="{class}" d="M{:.1},{:.1}L{:.1},{:.1}M{:.1},{:.1}L{:.1},{:.1}" {paint}/>"#,
            x + a[0].0 * r,
            y + a[0].1 * r,
            x + a[1].0 * r,
            y + a[1].1 * r,
            x + a[2].0 * r,
            y + a[2].1 * r,
            x + a[3].0 * r,
            y + a[3].1 * r
        )
    };
    // A cross or plus has no inside to leave empty: hollow, it is ringed instead.
    let ring = if hollow && kind.is_open() {
        format!(
            r#"<circle class="{class}" cx="{x:.1}" cy="{y:.1}" r="{:.1}" stroke="{colour}" stroke-width="1" fill="white"/>"#,
            1.6 * r
        )
    } else {
        String::new()
    };
    let shape = match kind {
        Marker::Circle => {
            format!(r#"<circle class="{class}" cx="{x:.1}" cy="{y:.1}" r="{r}" {paint}/>"#)
        }
        Marker::Square => polygon(&[(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)]),
        Marker::Triangle => polygon(&[(0.0, -1.2), (1.1, 0.8), (-1.1, 0.8)]),
        Marker::Diamond => polygon(&[(0.0, -1.3), (1.3, 0.0), (0.0, 1.3), (-1.3, 0.0)]),
        Marker::TriangleDown => polygon(&[(0.0, 1.2), (1.1, -0.8), (-1.1, -0.8)]),
        Marker::Cross => strokes([(-1.0, -1.0), (1.0, 1.0), (-1.0, 1.0), (1.0, -1.0)]),
        Marker::Plus => strokes([(-1.2, 0.0), (1.2, 0.0), (0.0, -1.2), (0.0, 1.2)]),
    };
    ring + &shape
}

/// One named series of points.
#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// How it is drawn; `None`: its policy family's style (see [`styles_for`]).
    pub style: Option<SeriesStyle>,
    /// Hollow markers and a thin line: the second of two series of one family (online beside
    /// oracle).
    pub hollow: bool,
}

impl Series {
    /// A series drawn in its family's style.
    pub fn new(name: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Series {
            name: name.into(),
            points,
            style: None,
            hollow: false,
        }
    }
}

/// Axis scale.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    Linear,
    /// log10; points with non-positive coordinates are clamped to the smallest positive one.
    Log,
    /// Shares below 1 drawn by their "nines", −log10(1 − v): 0.9, 0.99 and 0.999 equally far
    /// apart, so the last percent of a share is not squeezed against the axis end. Ticks read
    /// as percentages; a share of 1 or more has no place.
    Nines,
}

/// A chart's frame.
#[derive(Debug, Clone)]
pub struct Chart {
    pub title: String,
    /// A smaller line under the title (the run's corpus, units and workload).
    pub subtitle: Option<String>,
    /// Axis titles, with units and scale ("B, refreshes per unit (log scale)"); the words
    /// before the first comma name the quantity in the B = 0 reference label.
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
    /// A budget axis's page count: its tick labels also give the share of the pages
    /// ("64 (3.9 %)").
    pub x_share_of: Option<usize>,
    pub y_share_of: Option<usize>,
    /// Draw each line as the budget needed for an x value (x a quality, y the budget B): the
    /// smallest B whose x reaches it, i.e. the running maximum of x over ascending B as steps,
    /// never a line that runs backwards where a larger budget measured a lower quality. The
    /// markers still show every measured point.
    pub budget_needed_steps: bool,
}

const W: f64 = 800.0;
const H: f64 = 480.0;
/// The legend's column right of the plot.
const RIGHT: f64 = 200.0;
const LEGEND_ROW: f64 = 18.0;

impl Chart {
    /// A line chart with linear axes and no caps (set the public fields for more).
    pub fn new(title: &str, x_label: &str, y_label: &str) -> Self {
        Chart {
            title: title.into(),
            subtitle: None,
            x_label: x_label.into(),
            y_label: y_label.into(),
            x_scale: Scale::Linear,
            y_scale: Scale::Linear,
            lines: true,
            x_at_most: None,
            y_at_most: None,
            x_share_of: None,
            y_share_of: None,
            budget_needed_steps: false,
        }
    }

    /// Renders `series` as an SVG document.
    ///
    /// On a log axis a point at 0 (or below) has no place: it is drawn as a dashed reference
    /// line across the plot at its other coordinate, labelled with the axis (`B = 0:
    /// 0.9926`) at the legend's foot, never silently moved to the axis end. Lines join points
    /// in the order of the log-axis coordinate (the budget, in the comparison charts), else
    /// of x.
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
        let y_ticks: Vec<String> = ticks(y0, y1, self.y_scale)
            .iter()
            .map(|&v| tick_label(v, self.y_scale, self.y_share_of))
            .collect();
        let widest = y_ticks.iter().map(|t| t.chars().count()).max().unwrap_or(1);
        let top = if self.subtitle.is_some() { 58.0 } else { 40.0 };
        let frame = Frame {
            x_scale: self.x_scale,
            y_scale: self.y_scale,
            x0,
            x1,
            y0,
            y1,
            left: 34.0 + 6.8 * widest as f64,
            top,
            bottom: if self.x_share_of.is_some() {
                64.0
            } else {
                50.0
            },
        };
        let styles = styles_for(&series.iter().map(|s| &s.name).collect::<Vec<_>>());
        let mut out = String::new();
        self.write_axes(&mut out, &frame);
        self.write_references(&mut out, &frame, &references, series.len());
        for (i, (s, pts)) in series.iter().zip(&plotted).enumerate() {
            self.write_series(&mut out, &frame, i, s, s.style.unwrap_or(styles[i]), pts);
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
                if self.y_scale == Scale::Log && y <= 0.0 && placeable(x, self.x_scale) {
                    references.push((true, x));
                } else if self.x_scale == Scale::Log && x <= 0.0 && placeable(y, self.y_scale) {
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
        series
            .iter()
            .map(|s| {
                let mut pts: Vec<(f64, f64)> = s
                    .points
                    .iter()
                    .copied()
                    .filter(|&(x, y)| placeable(x, self.x_scale) && placeable(y, self.y_scale))
                    .collect();
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

    /// The document's head, background, title and subtitle, then the axes with their grid,
    /// ticks and titles.
    fn write_axes(&self, out: &mut String, frame: &Frame) {
        let (left, top, bottom) = (frame.left, frame.top, H - frame.bottom);
        let _ = write!(
            out,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">"#
        );
        let _ = write!(out, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
        let _ = write!(
            out,
            r#"<text x="{}" y="22" font-size="15" text-anchor="middle" class="title">{}</text>"#,
            W / 2.0,
            escape(&self.title)
        );
        if let Some(subtitle) = &self.subtitle {
            let _ = write!(
                out,
                r##"<text x="{}" y="40" font-size="11" fill="#444" text-anchor="middle" class="subtitle">{}</text>"##,
                W / 2.0,
                escape(subtitle)
            );
        }
        let _ = write!(
            out,
            r#"<rect class="plot-area" x="{left:.1}" y="{top}" width="{:.1}" height="{:.1}" fill="none"/>"#,
            W - RIGHT - left,
            bottom - top
        );
        let _ = write!(
            out,
            r#"<path d="M{left:.1},{top} V{bottom} H{}" fill="none" stroke="black"/>"#,
            W - RIGHT
        );
        for v in ticks(frame.x0, frame.x1, self.x_scale) {
            let tx = frame.px(v);
            let label = tick_label(v, self.x_scale, None);
            // The share of the pages goes on a second line: side by side they would collide.
            let share = match self.x_share_of {
                Some(pages) => format!(
                    r##"<text x="{tx:.1}" y="{:.1}" text-anchor="middle" font-size="10" fill="#555" class="x-share">{}</text>"##,
                    bottom + 29.0,
                    share_of_pages(v, pages)
                ),
                None => String::new(),
            };
            let _ = write!(
                out,
                r##"<line x1="{tx:.1}" y1="{top}" x2="{tx:.1}" y2="{bottom}" stroke="#ddd"/><text x="{tx:.1}" y="{}" text-anchor="middle" class="x-tick">{label}</text>{share}"##,
                bottom + 16.0,
            );
        }
        for v in ticks(frame.y0, frame.y1, self.y_scale) {
            let ty = frame.py(v);
            let _ = write!(
                out,
                r##"<line x1="{left:.1}" y1="{ty:.1}" x2="{}" y2="{ty:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end" class="y-tick">{}</text>"##,
                W - RIGHT,
                left - 6.0,
                ty + 4.0,
                tick_label(v, self.y_scale, self.y_share_of)
            );
        }
        let _ = write!(
            out,
            r#"<text x="{:.1}" y="{}" text-anchor="middle" class="x-title">{}</text>"#,
            (left + W - RIGHT) / 2.0,
            H - 10.0,
            escape(&self.x_label)
        );
        let _ = write!(
            out,
            r#"<text transform="translate(16,{:.1}) rotate(-90)" text-anchor="middle" class="y-title">{}</text>"#,
            (top + bottom) / 2.0,
            escape(&self.y_label)
        );
    }

    /// The dashed reference lines of points at 0 on a log axis; their labels go below the
    /// legend's `entries` rows, each with a line sample, outside the plot.
    fn write_references(
        &self,
        out: &mut String,
        frame: &Frame,
        references: &[(bool, f64)],
        entries: usize,
    ) {
        for (k, &(vertical, v)) in references.iter().enumerate() {
            let (line, zero_of, scale) = if vertical {
                let x = frame.px(v);
                (
                    format!(
                        r##"<line class="zero-line" x1="{x:.1}" y1="{}" x2="{x:.1}" y2="{}" stroke="#555" stroke-dasharray="5 4"/>"##,
                        frame.top,
                        H - frame.bottom
                    ),
                    &self.y_label,
                    self.x_scale,
                )
            } else {
                let y = frame.py(v);
                (
                    format!(
                        r##"<line class="zero-line" x1="{:.1}" y1="{y:.1}" x2="{}" y2="{y:.1}" stroke="#555" stroke-dasharray="5 4"/>"##,
                        frame.left,
                        W - RIGHT
                    ),
                    &self.x_label,
                    self.y_scale,
                )
            };
            out.push_str(&line);
            let (lx, ly) = legend_row(frame, entries + k);
            let _ = write!(
                out,
                r##"<line x1="{lx}" y1="{:.1}" x2="{}" y2="{:.1}" stroke="#555" stroke-dasharray="5 4"/><text x="{}" y="{ly:.1}" font-size="11" class="zero-ref">{} = 0: {}</text>"##,
                ly - 4.0,
                lx + 22.0,
                ly - 4.0,
                lx + 28.0,
                escape(quantity(zero_of)),
                tick_label(v, scale, None)
            );
        }
    }

    /// Series `i`: its line (line charts), its dots, and its legend entry.
    fn write_series(
        &self,
        out: &mut String,
        frame: &Frame,
        i: usize,
        s: &Series,
        style: SeriesStyle,
        pts: &[(f64, f64)],
    ) {
        let colour = style.colour;
        let dash = style.dasharray();
        let dash_attr = if dash.is_empty() {
            String::new()
        } else {
            format!(r#" stroke-dasharray="{dash}""#)
        };
        let width = if s.hollow { 1.3 } else { 2.0 };
        let line: Vec<(f64, f64)> = if self.budget_needed_steps {
            self.budget_needed_staircase(&s.points)
        } else {
            pts.to_vec()
        };
        if self.lines && line.len() > 1 {
            let d: Vec<String> = line
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
                r#"<path class="series-line" d="{}" fill="none" stroke="{colour}" stroke-width="{width}"{dash_attr}/>"#,
                d.join(" ")
            );
        }
        let r = if self.lines { 3.5 } else { 2.5 };
        for &(x, y) in pts {
            out.push_str(&marker(
                style.marker,
                frame.px(x),
                frame.py(y),
                r,
                colour,
                s.hollow,
                "marker",
            ));
        }
        // The legend shows the series as drawn: a line sample with its dashes and marker.
        let (lx, ly) = legend_row(frame, i);
        if self.lines {
            let _ = write!(
                out,
                r#"<line x1="{lx}" y1="{:.1}" x2="{}" y2="{:.1}" stroke="{colour}" stroke-width="{width}"{dash_attr}/>"#,
                ly - 4.0,
                lx + 22.0,
                ly - 4.0
            );
        }
        out.push_str(&marker(
            style.marker,
            lx + 11.0,
            ly - 4.0,
            3.5,
            colour,
            s.hollow,
            "legend-marker",
        ));
        let _ = write!(
            out,
            r#"<text x="{}" y="{ly:.1}" class="legend">{}</text>"#,
            lx + 28.0,
            escape(&s.name)
        );
    }

    /// The budget needed for each x (see [`budget_needed_steps`](Self::budget_needed_steps)):
    /// corners of the staircase from the unrefreshed point (B = 0) up, over the points that
    /// raise the running maximum of x, in ascending B. Ends where x has no place on its axis.
    fn budget_needed_staircase(&self, points: &[(f64, f64)]) -> Vec<(f64, f64)> {
        let mut by_budget: Vec<(f64, f64)> = points
            .iter()
            .copied()
            .filter(|p| p.0.is_finite() && p.1.is_finite())
            .collect();
        by_budget.sort_by(|a, b| a.1.partial_cmp(&b.1).unwrap_or(std::cmp::Ordering::Equal));
        let mut corners = Vec::new();
        let mut best: Option<f64> = None;
        for (x, y) in by_budget {
            if best.is_some_and(|b| x <= b) {
                continue;
            }
            if !placeable(x, self.x_scale) {
                break;
            }
            if placeable(y, self.y_scale) {
                if let Some(b) = best {
                    corners.push((b, y));
                }
                corners.push((x, y));
            }
            best = Some(x);
        }
        corners
    }
}

/// Where legend row `row` starts: the line sample's left end and the text's baseline.
fn legend_row(frame: &Frame, row: usize) -> (f64, f64) {
    (W - RIGHT + 12.0, frame.top + 10.0 + LEGEND_ROW * row as f64)
}

/// The quantity an axis title names: its words before the first comma ("B" of "B, refreshes
/// per unit (log scale)").
fn quantity(title: &str) -> &str {
    title.split(',').next().unwrap_or(title).trim()
}

/// Whether `v` has a place on an axis of `scale`.
fn placeable(v: f64, scale: Scale) -> bool {
    v.is_finite()
        && match scale {
            Scale::Linear => true,
            Scale::Log => v > 0.0,
            Scale::Nines => v < 1.0,
        }
}

/// A tick's label: a share in percent on a nines axis; with `share_of`, the value and its share
/// of that many pages ("64 (3.9 %)").
fn tick_label(v: f64, scale: Scale, share_of: Option<usize>) -> String {
    match (scale, share_of) {
        (Scale::Nines, _) => format!("{} %", tick(v * 100.0)),
        (_, Some(pages)) => format!("{} {}", tick(v), share_of_pages(v, pages)),
        _ => tick(v),
    }
}

/// `v` as a share of `pages`, two significant digits, in brackets: "(3.9 %)".
fn share_of_pages(v: f64, pages: usize) -> String {
    let percent = 100.0 * v / pages.max(1) as f64;
    let decimals = if percent > 0.0 {
        (1 - percent.log10().floor() as i32).clamp(0, 6) as usize
    } else {
        0
    };
    format!("({percent:.decimals$} %)")
}

/// The plot's axis ranges (in axis units): where a value is drawn.
struct Frame {
    x_scale: Scale,
    y_scale: Scale,
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
    /// The plot's left edge, top edge and the height below it (pixels).
    left: f64,
    top: f64,
    bottom: f64,
}

impl Frame {
    /// The horizontal pixel of `x`.
    fn px(&self, x: f64) -> f64 {
        self.left
            + (to_axis(x, self.x_scale, self.x0) - self.x0) / (self.x1 - self.x0)
                * (W - self.left - RIGHT)
    }

    /// The vertical pixel of `y`.
    fn py(&self, y: f64) -> f64 {
        H - self.bottom
            - (to_axis(y, self.y_scale, self.y0) - self.y0) / (self.y1 - self.y0)
                * (H - self.top - self.bottom)
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
        Scale::Nines => {
            if v < 1.0 {
                -(1.0 - v).log10()
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
        .filter(|&&v| placeable(v, scale))
        .map(|&v| to_axis(v, scale, 0.0))
        .collect();
    if mapped.is_empty() {
        return (0.0, 1.0);
    }
    let lo = mapped.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = mapped.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (mut lo, mut hi) = if (hi - lo).abs() < 1e-12 {
        let pad = if scale != Scale::Linear {
            0.5
        } else {
            lo.abs().max(1e-3) * 0.01
        };
        (lo - pad, hi + pad)
    } else {
        let pad = (hi - lo) * 0.04;
        (lo - pad, hi + pad)
    };
    if let Some(cap) = at_most.filter(|&c| scale != Scale::Nines && placeable(c, scale)) {
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
/// about five of them; on a nines axis 0, 50 %, 90 %, 99 %, … with 80 %/95 %/98 %/99.5 %…
/// between when the span is under three nines. Returned in data units.
fn ticks(lo: f64, hi: f64, scale: Scale) -> Vec<f64> {
    match scale {
        Scale::Nines => {
            // 50 % only on a short axis: on a long one it would crowd 0.
            let mut candidates = if hi - lo < 3.0 {
                vec![0.0, 0.5]
            } else {
                vec![0.0]
            };
            for k in 1..=6 {
                let gap = 10f64.powi(-k);
                if hi - lo < 3.0 {
                    candidates.push(1.0 - 2.0 * gap);
                }
                candidates.push(1.0 - gap);
                if hi - lo < 3.0 {
                    candidates.push(1.0 - gap / 2.0);
                }
            }
            candidates.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
            candidates.dedup_by(|a, b| (*a - *b).abs() < 1e-12);
            candidates
                .into_iter()
                .filter(|&v| (lo - 1e-9..=hi + 1e-9).contains(&to_axis(v, scale, 0.0)))
                .collect()
        }
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
            Series::new("user-centric", vec![(0.95, 1.0), (0.99, 4.0)]),
            Series::new("sbr", vec![(0.95, 8.0), (0.99, 64.0), (0.9, 0.0)]),
        ]);
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        // The B = 0 point is a labelled reference line, not a dot at the axis end.
        assert_eq!(svg.matches(r#"class="marker""#).count(), 4, "4 points");
        assert_eq!(svg.matches(r#"class="legend-marker""#).count(), 2);
        // Told apart without colour: each series its own marker and dashes.
        assert!(svg.contains("<circle") && svg.contains(r#"<path class="marker""#));
        assert!(svg.contains(r#"stroke-dasharray="8 3""#));
        assert_eq!(tick_labels(&svg, "zero-ref"), ["B = 0: 0.9"]);
        assert!(svg.contains("user-centric") && svg.contains("B &lt;needed&gt;"));
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
    }

    #[test]
    fn log_ticks_are_round_and_share_axes_stop_at_one() {
        let svg = fig4().render(&[Series::new(
            "p",
            vec![(0.97, 1.0), (0.999, 16.0), (1.0, 1024.0), (0.9926, 0.0)],
        )]);
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
        .render(&[Series::new(
            "p",
            vec![(0.0, 0.98), (4.0, 0.99), (1.0, 0.985)],
        )]);
        assert_eq!(tick_labels(&svg, "zero-ref"), ["B = 0: 0.98"]);
        let y: Vec<f64> = tick_labels(&svg, "y-tick")
            .iter()
            .map(|t| t.parse().unwrap())
            .collect();
        assert!(y.iter().all(|&v| v <= 1.0), "{y:?}");
    }

    /// The value of attribute `name` in the first element of `svg` that has it.
    fn attribute<'a>(element: &'a str, name: &str) -> Option<&'a str> {
        let at = element.find(&format!(" {name}=\""))? + name.len() + 3;
        element[at..].split('"').next()
    }

    /// Every element of `svg` whose text starts with `<tag` and has `class="class"`.
    fn elements<'a>(svg: &'a str, class: &str) -> Vec<&'a str> {
        svg.split('<')
            .filter(|e| e.contains(&format!(r#"class="{class}""#)))
            .collect()
    }

    fn numbers(text: &str) -> Vec<f64> {
        text.split(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))
            .filter_map(|t| t.parse().ok())
            .collect()
    }

    /// A box (x0, y0, x1, y1).
    type Box = (f64, f64, f64, f64);

    fn overlap(a: Box, b: Box) -> bool {
        a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3
    }

    /// A marker's box: a circle's, or the bounds of a path's corners.
    fn marker_box(element: &str) -> Box {
        if element.starts_with("circle") {
            let v = |n| attribute(element, n).unwrap().parse::<f64>().unwrap();
            let (x, y, r) = (v("cx"), v("cy"), v("r"));
            return (x - r, y - r, x + r, y + r);
        }
        let xy = numbers(attribute(element, "d").unwrap());
        let (xs, ys): (Vec<f64>, Vec<f64>) = xy.chunks(2).map(|p| (p[0], p[1])).unzip();
        let lo = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = |v: &[f64]| v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (lo(&xs), lo(&ys), hi(&xs), hi(&ys))
    }

    /// A text's box, its width estimated at 0.62 em per character (sans-serif, generous).
    fn text_box(element: &str) -> Box {
        let size: f64 = attribute(element, "font-size").map_or(12.0, |s| s.parse().unwrap());
        let text = element.split('>').nth(1).unwrap();
        let width = 0.62 * size * text.chars().count() as f64;
        let x: f64 = attribute(element, "x").unwrap().parse().unwrap();
        let y: f64 = attribute(element, "y").unwrap().parse().unwrap();
        let x0 = match attribute(element, "text-anchor") {
            Some("middle") => x - width / 2.0,
            Some("end") => x - width,
            _ => x,
        };
        (x0, y - size, x0 + width, y + 0.25 * size)
    }

    fn default_families() -> Vec<Series> {
        crate::policy::registry::DEFAULT_COMPARISON
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let k = i as f64;
                Series::new(
                    *f,
                    vec![
                        (0.9789, 0.0),
                        (0.98 + 0.001 * k, 1.0),
                        (0.99 + 0.001 * k, 8.0),
                        (0.995 + 0.0005 * k, 64.0),
                        (0.999, 1024.0),
                    ],
                )
            })
            .collect()
    }

    #[test]
    fn every_default_family_is_drawn_in_its_own_colour_dash_and_marker() {
        let svg = Chart {
            budget_needed_steps: true,
            ..fig4()
        }
        .render(&default_families());
        let lines = elements(&svg, "series-line");
        assert_eq!(lines.len(), 7);
        let looks: Vec<(String, String, String)> = lines
            .iter()
            .zip(elements(&svg, "legend-marker"))
            .map(|(line, marker)| {
                let stroke = attribute(line, "stroke").unwrap().to_string();
                let dash = attribute(line, "stroke-dasharray")
                    .unwrap_or("")
                    .to_string();
                // The shape: a circle, or a path's corners relative to its first one.
                let shape = attribute(marker, "d").map_or("circle".to_string(), |d| {
                    let xy = numbers(d);
                    let offsets: Vec<String> = xy
                        .chunks(2)
                        .map(|p| format!("{:.1},{:.1}", p[0] - xy[0], p[1] - xy[1]))
                        .collect();
                    offsets.join(" ")
                });
                (stroke, dash, shape)
            })
            .collect();
        for (i, a) in looks.iter().enumerate() {
            for b in &looks[i + 1..] {
                assert!(a.0 != b.0 && a.1 != b.1 && a.2 != b.2, "{a:?} vs {b:?}");
            }
        }
    }

    #[test]
    fn budget_needed_is_a_monotone_staircase_even_where_quality_dips() {
        // At B = 16 the measured quality dips below B = 8's: the budget needed for 0.99 is 8.
        let svg = Chart {
            budget_needed_steps: true,
            ..fig4()
        }
        .render(&[Series::new(
            "sbr (θ = 0.3)",
            vec![
                (0.97, 0.0),
                (0.98, 2.0),
                (0.99, 8.0),
                (0.985, 16.0),
                (0.995, 32.0),
            ],
        )]);
        let d = attribute(elements(&svg, "series-line")[0], "d").unwrap();
        let corners: Vec<(f64, f64)> = numbers(d).chunks(2).map(|p| (p[0], p[1])).collect();
        // From Q₀ at B = 2, right to 0.98, up to B = 8, right to 0.99, up to B = 32, right.
        assert_eq!(corners.len(), 6, "{d}");
        for w in corners.windows(2) {
            assert!(w[1].0 >= w[0].0, "x runs backwards: {d}");
            assert!(w[1].1 <= w[0].1, "B falls (y grows downward): {d}");
            assert!(
                w[1].0 == w[0].0 || w[1].1 == w[0].1,
                "a step, not a slope: {d}"
            );
        }
        // Every measured point still has its marker, the dip included.
        assert_eq!(elements(&svg, "marker").len(), 4);
    }

    #[test]
    fn the_reference_label_sits_outside_the_plot_and_covers_nothing() {
        let svg = Chart {
            budget_needed_steps: true,
            subtitle: Some("corpus: demo, 30 units of 7 days, 200 workload queries".into()),
            y_share_of: Some(1640),
            y_scale: Scale::Log,
            x_at_most: Some(1.0),
            ..Chart::new(
                "Budget needed",
                "mean repository quality",
                "B, refreshes per unit (log scale)",
            )
        }
        .render(&default_families());
        let labels = elements(&svg, "zero-ref");
        assert_eq!(labels.len(), 1);
        assert!(labels[0].ends_with(">B = 0: 0.9789"), "{}", labels[0]);
        let label = text_box(labels[0]);
        let plot = elements(&svg, "plot-area")[0];
        let v = |n| attribute(plot, n).unwrap().parse::<f64>().unwrap();
        let area = (v("x"), v("y"), v("x") + v("width"), v("y") + v("height"));
        assert!(!overlap(label, area), "{label:?} inside the plot {area:?}");
        let markers = elements(&svg, "marker");
        assert_eq!(markers.len(), 7 * 4);
        for m in markers.iter().chain(&elements(&svg, "legend-marker")) {
            assert!(!overlap(label, marker_box(m)), "{label:?} over {m}");
        }
        let texts: Vec<&str> = svg
            .split('<')
            .filter(|e| {
                e.starts_with("text ") && !e.contains("zero-ref") && !e.contains("transform")
            })
            .collect();
        assert!(texts.len() > 15, "{}", texts.len());
        for t in texts {
            assert!(!overlap(label, text_box(t)), "{label:?} over {t}");
        }
        // The budget axis says its scale and each tick its share of the pages.
        assert!(svg.contains("(log scale)</text>"));
        assert!(
            tick_labels(&svg, "y-tick").contains(&"100 (6.1 %)".to_string()),
            "{svg}"
        );
        assert!(svg.contains(r#"class="subtitle">corpus: demo"#));
    }

    #[test]
    fn a_nines_axis_spreads_the_last_percent() {
        let chart = Chart {
            x_scale: Scale::Nines,
            ..fig4()
        };
        let svg = chart.render(&[Series::new(
            "p",
            vec![
                (0.0, 0.0),
                (0.5, 1.0),
                (0.9, 4.0),
                (0.99, 16.0),
                (0.998, 64.0),
                (1.0, 128.0),
            ],
        )]);
        let x = tick_labels(&svg, "x-tick");
        assert!(
            x.contains(&"90 %".to_string()) && x.contains(&"99 %".to_string()),
            "{x:?}"
        );
        // 50 % → 90 % and 90 % → 99 % are equally far apart.
        let frame_x = |label: &str| -> f64 {
            let e = svg
                .split('<')
                .find(|e| e.contains(r#"class="x-tick""#) && e.ends_with(&format!(">{label}")))
                .unwrap();
            attribute(e, "x").unwrap().parse().unwrap()
        };
        let (a, b, c) = (frame_x("0 %"), frame_x("90 %"), frame_x("99 %"));
        assert!(((b - a) - (c - b)).abs() < 0.5, "{a} {b} {c}");
        // The share 1 (the whole gap closed) has no place: 4 markers, not 5.
        assert_eq!(elements(&svg, "marker").len(), 4);
    }
}

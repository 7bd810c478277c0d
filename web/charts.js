// Line charts of the pages, drawn by uPlot (vendored in web/vendor/uplot/, MIT; served from
// /static/, so no network). This module only says how our charts read; uPlot draws them:
//
// * ticks at round values: 1, 2 or 5 × 10^k on a linear axis; powers of ten on a log axis
//   (with 2 and 5 between when the axis spans under three decades);
// * shares capped at their maximum (`xMax`/`yMax`): quality, freshness and MAP never past 1;
// * a point at B = 0 on a log budget axis (the unrefreshed repository) is no point on the curve
//   but a labelled dashed reference line "B = 0: <value>" at its value, never moved silently;
// * curves joined in the order of their x values (budget order), a legend, and a tooltip naming
//   the series and both values of the point nearest the pointer;
// * each policy drawn as on the SVG charts: colour, dash and marker from the server's table
//   (`GET /api/chart-style`, src/report/chart_style.rs; no palette of our own here), the legend
//   showing a line sample with both;
// * axis titles that say the unit and the scale ("budget B, refreshes per unit (log scale)");
// * the B = 0 labels above the plot, never over data;
// * `steps`: the budget needed for a quality, the smallest B reaching it, drawn as the running
//   maximum of quality over B in steps, never a line running backwards where quality dips;
// * `yNines`: y values are shares below 1 drawn by their nines, −log10(1 − v), so 90 %, 99 % and
//   99.9 % sit equally far apart (the share of the staleness gap recovered on the compare page).
//
// `flip` draws x upward and y across: paper 003's Fig. 4 puts quality on the horizontal axis
// and the budget B on a vertical log axis, while each curve is still a function of B.
//
// Every chart's uPlot instance is on `window.refresherCharts[<container id>]` (the browser
// tests read scales, ticks and the legend from it); `RefresherChart.ticks` is the tick rule.
// Overlays (tooltip, reference labels) are DOM elements on uPlot's `over` layer, styled in
// style.css; no inline script or style sheet, so the server's Content-Security-Policy holds.
"use strict";
window.refresherCharts = window.refresherCharts || {};

class RefresherChart {
  // options: { xLabel, yLabel (short names: tooltip, legend), xUnit, yUnit (axis titles), xLog,
  // xMax, yMax, flip, zeroLabel, steps, yNines, height }. Series: { name, points, family (else
  // read from the name), color and dashed (a reference drawn apart from the policies) }.
  constructor(container, options) {
    this.container = container;
    this.options = Object.assign({ height: 260 }, options || {});
    this.series = [];
    this.plot = null;
    this.shape = null;
    // Overlays uPlot does not draw, moved into each new plot: the tooltip, the reference
    // labels, "no data yet".
    this.tip = el("div", { class: "chart-tip", hidden: "" });
    this.refLabels = el("div", { class: "zero-refs" });
    this.empty = el("div", { class: "chart-empty", text: "no data yet" });
    new ResizeObserver(() => this.fit()).observe(container);
    RefresherChart.styles.then(() => this.render());
  }

  setSeries(series) { this.series = series; if (RefresherChart.table) this.render(); }

  // New options (the compare page's quality/gap-share toggle): the plot is built anew.
  setOptions(options) { Object.assign(this.options, options); this.shape = null; if (RefresherChart.table) this.render(); }

  // The family a series label names: the label up to " (" or "," ("sbr (θ = 0.3)" → "sbr"), the
  // rule of chart_style::family_of.
  static familyOf(label) {
    const ends = [label.indexOf(" ("), label.indexOf(",")].filter(i => i >= 0);
    return label.slice(0, ends.length ? Math.min(...ends) : label.length).trim();
  }

  // Each series' style: its family's from the server's table, or the next fallback style for a
  // family without one (chart_style::styles_for).
  styleOf(series) {
    const table = RefresherChart.table, unnamed = [];
    return series.map(s => {
      const family = s.family || RefresherChart.familyOf(s.name);
      let style = table.families[family];
      if (!style) {
        if (!unnamed.includes(family)) unnamed.push(family);
        style = table.fallback[unnamed.indexOf(family) % table.fallback.length];
      }
      // A reference (the served engine without refreshes) keeps its own grey dashes.
      return s.color ? { colour: s.color, dash: s.dashed ? [5, 4] : [], marker: null } : style;
    });
  }

  // A marker's outline as an SVG path of radius r at (x, y): the SVG charts' shapes, drawn on
  // the canvas (Path2D) and in the legend's samples.
  static markerPath(kind, x, y, r) {
    const poly = corners => corners.map(([dx, dy], k) => `${k ? "L" : "M"}${x + dx * r},${y + dy * r}`).join("") + "Z";
    const two = a => `M${x + a[0] * r},${y + a[1] * r}L${x + a[2] * r},${y + a[3] * r}M${x + a[4] * r},${y + a[5] * r}L${x + a[6] * r},${y + a[7] * r}`;
    switch (kind) {
      case "circle": return `M${x - r},${y}a${r},${r} 0 1,0 ${2 * r},0a${r},${r} 0 1,0 ${-2 * r},0Z`;
      case "square": return poly([[-1, -1], [1, -1], [1, 1], [-1, 1]]);
      case "triangle": return poly([[0, -1.2], [1.1, 0.8], [-1.1, 0.8]]);
      case "diamond": return poly([[0, -1.3], [1.3, 0], [0, 1.3], [-1.3, 0]]);
      case "triangle-down": return poly([[0, 1.2], [1.1, -0.8], [-1.1, -0.8]]);
      case "cross": return two([-1, -1, 1, 1, -1, 1, 1, -1]);
      case "plus": return two([-1.2, 0, 1.2, 0, 0, -1.2, 0, 1.2]);
      default: return "";
    }
  }

  static open(kind) { return kind === "cross" || kind === "plus"; }

  // Round ticks between lo and hi (axis values, not log units), about `count` of them on a
  // linear axis.
  static ticks(lo, hi, log, count) {
    if (!(hi > lo)) return [];
    if (log) {
      const a = Math.log10(lo), b = Math.log10(hi);
      const at = mult => {
        const out = [];
        for (let k = Math.floor(a); k <= Math.ceil(b); k++) for (const m of mult) {
          const v = Number((m * Math.pow(10, k)).toPrecision(12));
          if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) out.push(v);
        }
        return out;
      };
      // Powers of ten, with 2 and 5 between when they fit and powers alone would be too few.
      const powers = at([1]);
      const fine = at([1, 2, 5]);
      return b - a < 3 && (powers.length < 2 || fine.length <= (count || 5) + 2) ? fine : powers;
    }
    const raw = (hi - lo) / (count || 5), mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 5, 10].map(m => m * mag).find(s => s >= raw * (1 - 1e-9));
    const out = [];
    for (let i = Math.ceil(lo / step - 1e-9); i <= Math.floor(hi / step + 1e-9); i++) out.push(Number((i * step).toPrecision(12)));
    return out;
  }

  // The shown range of values (finite numbers), padded so no point sits on the frame, capped
  // at `cap`. A log range reaches the round values just outside the data (so both ends of the
  // data have a tick near them), plus a margin.
  static range(values, log, cap) {
    const v = values.filter(x => Number.isFinite(x) && (!log || x > 0));
    if (!v.length) return log ? [1, 10] : [0, cap != null ? cap : 1];
    let lo = Math.min(...v), hi = Math.max(...v);
    if (log) {
      const down = x => { const k = Math.floor(Math.log10(x) + 1e-12), p = Math.pow(10, k); return [5, 2, 1].map(m => m * p).find(t => t <= x * (1 + 1e-9)); };
      const up = x => { const k = Math.floor(Math.log10(x) - 1e-12), p = Math.pow(10, k); return [1, 2, 5, 10].map(m => m * p).find(t => t >= x * (1 - 1e-9)); };
      lo = down(lo); hi = up(hi);
      if (hi <= lo) hi = lo * 10;
      const margin = Math.pow(10, Math.log10(hi / lo) * 0.04);
      return [lo / margin, hi * margin];
    }
    const pad = hi - lo < 1e-12 ? Math.max(Math.abs(lo), 1e-3) * 0.01 : (hi - lo) * 0.06;
    lo -= pad; hi += pad;
    if (cap != null && hi > cap) { hi = cap; if (lo >= hi) lo = hi - 1e-3; }
    return [lo, hi];
  }

  // Nines of a share v < 1: −log10(1 − v) (null where v has no place).
  static nines(v) { return v == null || !(v < 1) ? null : -Math.log10(1 - v); }
  static share(n) { return 1 - Math.pow(10, -n); }

  // Ticks of a nines axis between positions lo and hi: 0, 50 %, 90 %, 99 %, … with 80 %, 95 %,
  // 98 %, 99.5 %, … between when the axis spans under three nines (svg.rs's rule).
  static ninesTicks(lo, hi) {
    const shares = [0, 0.5];
    for (let k = 1; k <= 6; k++) {
      const gap = Math.pow(10, -k);
      if (hi - lo < 3) shares.push(1 - 2 * gap);
      shares.push(1 - gap);
      if (hi - lo < 3) shares.push(1 - gap / 2);
    }
    return shares.map(RefresherChart.nines).filter(n => n >= lo - 1e-9 && n <= hi + 1e-9);
  }

  static percent(n) { return `${Number((RefresherChart.share(n) * 100).toPrecision(6))} %`; }

  // A tick's label: round values need no more digits than they have.
  static label(v) {
    return Math.abs(v) < 1e-12 ? "0" : String(Number(v.toPrecision(6)));
  }

  // A data value (tooltip, legend, reference line): six significant digits.
  static value(v) {
    return v == null ? "–" : Math.abs(v) < 1e-12 ? "0" : String(Number(v.toPrecision(6)));
  }

  placeable(x) { return Number.isFinite(x) && (!this.options.xLog || x > 0); }

  // A y value as the axis draws it: its nines on a nines axis.
  toAxis(y) { return !Number.isFinite(y) ? null : this.options.yNines ? RefresherChart.nines(y) : y; }

  // A y value as the tooltip, legend and labels show it: a percentage on a nines axis.
  show(v) { return v != null && this.options.yNines ? RefresherChart.percent(v) : RefresherChart.value(v); }

  // uPlot's aligned data: the union of the series' x values (ascending: each curve is joined
  // in x order, i.e. budget order), each series' y at those x or null (a gap uPlot spans).
  aligned() {
    const xs = [...new Set(this.series.flatMap(s => s.points.map(p => p[0]).filter(x => this.placeable(x))))].sort((a, b) => a - b);
    const at = new Map(xs.map((x, i) => [x, i]));
    const ys = this.series.map(s => {
      const row = xs.map(() => null);
      for (const [x, y] of s.points) if (at.has(x)) row[at.get(x)] = this.toAxis(y);
      return row;
    });
    return [xs, ...ys];
  }

  // Points at x = 0 on a log x axis (B = 0): one reference line per distinct y value.
  references() {
    if (!this.options.xLog) return [];
    const seen = new Map();
    for (const s of this.series) for (const [x, y] of s.points) {
      const v = this.toAxis(y);
      if (x === 0 && v != null) seen.set(v.toFixed(6), v);
    }
    return [...seen.values()];
  }

  render() {
    const o = this.options;
    const data = this.aligned();
    this.refs = this.references();
    // Where each series' staircase starts: its own B = 0 value.
    this.zeros = this.series.map(s => { const p = s.points.find(q => q[0] === 0); return p ? this.toAxis(p[1]) : null; });
    this.styles = this.styleOf(this.series);
    this.xRange = RefresherChart.range(data[0], o.xLog, o.xMax);
    this.yRange = RefresherChart.range(data.slice(1).flat().concat(this.refs), false, o.yNines ? null : o.yMax);
    const shape = JSON.stringify(this.series.map((s, i) => [s.name, this.styles[i]]));
    if (this.plot && shape === this.shape) {
      this.plot.setData(data);
    } else {
      if (this.plot) this.plot.destroy();
      this.shape = shape;
      this.plot = new uPlot(this.uplotOptions(), data, this.container);
      this.plot.over.append(this.tip, this.empty);
      // Above the plot, not on it: a label there covers no data.
      this.plot.root.insertBefore(this.refLabels, this.plot.root.querySelector(".u-wrap"));
      this.explain(this.plot);
      window.refresherCharts[this.container.id] = this.plot;
    }
    this.empty.hidden = this.series.some(s => s.points.length);
  }

  fit() {
    if (!this.plot) return;
    const width = this.width();
    if (width !== this.plot.width) this.plot.setSize({ width, height: this.options.height });
  }

  width() { return Math.max(300, Math.floor(this.container.clientWidth)); }

  // An axis title: the quantity, its unit, and the scale it is drawn on.
  title(which) {
    const o = this.options, x = which === "x";
    const unit = x ? o.xUnit : o.yUnit;
    const scale = x ? (o.xLog ? "log scale" : "linear scale") : (o.yNines ? "nines scale" : "linear scale");
    return `${(x ? o.xLabel : o.yLabel) || which}${unit ? ", " + unit : ""} (${scale})`;
  }

  uplotOptions() {
    const o = this.options, chart = this, label = RefresherChart.label;
    const axis = (which, side) => ({
      scale: which,
      side,
      label: this.title(which),
      labelSize: 20,
      size: side % 2 ? 56 : 40,
      stroke: "#5d6679",
      grid: { stroke: "#eef0f4", width: 1 },
      ticks: { stroke: "#9aa3b5", width: 1, size: 4 },
      // About one tick per 55 px across, per 45 px up.
      splits: (u, i, min, max) => {
        if (which === "y" && o.yNines) return RefresherChart.ninesTicks(min, max);
        const ratio = window.devicePixelRatio || 1;
        const count = side % 2 ? u.bbox.height / ratio / 45 : u.bbox.width / ratio / 55;
        return RefresherChart.ticks(min, max, which === "x" && o.xLog, Math.min(8, Math.max(3, Math.floor(count))));
      },
      filter: (u, splits) => splits,
      values: (u, splits) => splits.map(which === "y" && o.yNines ? RefresherChart.percent : label),
    });
    return {
      width: this.width(),
      height: o.height,
      scales: {
        x: { time: false, distr: o.xLog ? 3 : 1, ori: o.flip ? 1 : 0, dir: 1, range: () => chart.xRange },
        y: { ori: o.flip ? 0 : 1, dir: 1, range: () => chart.yRange },
      },
      axes: o.flip ? [axis("x", 3), axis("y", 2)] : [axis("x", 2), axis("y", 3)],
      series: [
        { label: o.xLabel || "x", value: (u, v) => RefresherChart.value(v) },
        ...this.series.map((s, i) => ({
          label: s.name,
          stroke: this.styles[i].colour,
          width: 2,
          dash: this.styles[i].dash.length ? this.styles[i].dash : undefined,
          spanGaps: true,
          // Markers are drawn in the series' shape by `drawMarkers`.
          points: { show: false },
          paths: o.steps ? (u, si) => chart.stepPaths(u, si) : undefined,
          _style: this.styles[i],
          value: (u, v) => chart.show(v),
        })),
      ],
      legend: { live: true, markers: { show: false } },
      cursor: { drag: { x: false, y: false } },
      hooks: {
        draw: [u => chart.drawReferences(u)],
        drawSeries: [(u, si) => chart.drawMarkers(u, si)],
        setCursor: [u => chart.showTip(u)],
      },
    };
  }

  // The canvas position of the point (x value, y value), whichever way the chart is turned.
  position(u, x, y) {
    const a = u.valToPos(x, "x", true), b = u.valToPos(y, "y", true);
    return this.options.flip ? [b, a] : [a, b];
  }

  // The budget needed as steps: from the series' B = 0 value, at each budget whose y beats
  // every smaller budget's, a jump to it, then level to the next such budget (svg.rs's
  // staircase). The corners, in data values, stay on the series as `_steps` (the tests read
  // them).
  stepPaths(u, si) {
    const xs = u.data[0], ys = u.data[si], corners = [];
    let best = this.zeros[si - 1];
    for (let i = 0; i < xs.length; i++) {
      const y = ys[i];
      if (y == null || (best != null && y <= best)) continue;
      if (best != null) corners.push([xs[i], best]);
      corners.push([xs[i], y]);
      best = y;
    }
    u.series[si]._steps = corners;
    const path = new Path2D();
    corners.forEach(([x, y], k) => { const [a, b] = this.position(u, x, y); if (k) path.lineTo(a, b); else path.moveTo(a, b); });
    return { stroke: path, fill: null, clip: null, band: null, gaps: null, flags: 0 };
  }

  // Every point of series `si` in its family's marker.
  drawMarkers(u, si) {
    const s = u.series[si], style = s._style;
    if (!s.show || !style || !style.marker) return;
    const ctx = u.ctx, ratio = window.devicePixelRatio || 1;
    ctx.save();
    ctx.lineWidth = 1.6 * ratio;
    ctx.setLineDash([]);
    ctx.fillStyle = ctx.strokeStyle = style.colour;
    for (let i = 0; i < u.data[0].length; i++) {
      const y = u.data[si][i];
      if (y == null) continue;
      const [px, py] = this.position(u, u.data[0][i], y);
      const path = new Path2D(RefresherChart.markerPath(style.marker, px, py, 3.5 * ratio));
      if (RefresherChart.open(style.marker)) ctx.stroke(path); else ctx.fill(path);
    }
    ctx.restore();
  }

  // A legend sample: a stretch of the line with its dashes and the marker on it.
  static sample(style) {
    const ns = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(ns, "svg");
    for (const [k, v] of Object.entries({ class: "legend-sample", width: 28, height: 12, viewBox: "0 0 28 12" })) svg.setAttribute(k, v);
    const line = document.createElementNS(ns, "line");
    for (const [k, v] of Object.entries({ x1: 1, y1: 6, x2: 27, y2: 6, stroke: style.colour, "stroke-width": 2, "stroke-dasharray": style.dash.join(" ") })) line.setAttribute(k, v);
    svg.append(line);
    if (style.marker) {
      const marker = document.createElementNS(ns, "path");
      marker.setAttribute("d", RefresherChart.markerPath(style.marker, 14, 6, 3.5));
      if (RefresherChart.open(style.marker)) { marker.setAttribute("stroke", style.colour); marker.setAttribute("stroke-width", 1.6); marker.setAttribute("fill", "none"); } else marker.setAttribute("fill", style.colour);
      svg.append(marker);
    }
    return svg;
  }

  // Hover titles for uPlot's own numbers: each axis names its quantity, each legend row says
  // its value is the series' value at the hovered point. Each legend row gets its line sample.
  explain(u) {
    const o = this.options;
    u.axes.forEach((axis, i) => {
      const node = u.root.querySelectorAll(".u-axis")[i];
      if (node) node.title = axis.scale === "x" ? o.xLabel || "x" : o.yLabel || "y";
    });
    u.root.querySelectorAll(".u-legend .u-series").forEach((row, i) => {
      row.title = i === 0 ? `${o.xLabel || "x"} of the hovered point` : `${u.series[i].label}: ${o.yLabel || "y"} at the hovered ${o.xLabel || "x"} (click to hide or show the curve)`;
      const name = row.querySelector(".u-label");
      if (i > 0 && name && u.series[i]._style) name.prepend(RefresherChart.sample(u.series[i]._style));
    });
  }

  // B = 0 as a dashed line across the plot at its value; its label above the plot (in the
  // DOM: readable, and the tests read it), never over a curve.
  drawReferences(u) {
    const o = this.options, ctx = u.ctx, { left, top, width, height } = u.bbox;
    const ratio = window.devicePixelRatio || 1;
    this.refLabels.replaceChildren();
    for (const value of this.refs) {
      const pos = u.valToPos(value, "y", true);
      ctx.save();
      ctx.strokeStyle = "#555";
      ctx.lineWidth = ratio;
      ctx.setLineDash([5 * ratio, 4 * ratio]);
      ctx.beginPath();
      if (o.flip) { ctx.moveTo(pos, top); ctx.lineTo(pos, top + height); } else { ctx.moveTo(left, pos); ctx.lineTo(left + width, pos); }
      ctx.stroke();
      ctx.restore();
      this.refLabels.append(el("span", { class: "zero-ref" }, el("span", { class: "zero-ref-swatch" }), el("span", {
        class: "zero-ref-label",
        text: `${o.zeroLabel || "0"}: ${this.show(value)}`,
        title: `${o.yLabel || "y"} at ${o.zeroLabel || "0"} (no refreshes: the unrefreshed repository), the dashed line: a log axis has no 0`,
      })));
    }
  }

  // The tooltip: the series point nearest the pointer at the hovered x, with both values.
  showTip(u) {
    const idx = u.cursor.idx, o = this.options;
    if (idx == null || u.cursor.left < 0) { this.tip.hidden = true; return; }
    const x = u.data[0][idx];
    let best = null;
    for (let s = 1; s < u.series.length; s++) {
      const y = u.data[s][idx];
      if (y == null || !u.series[s].show) continue;
      const left = u.valToPos(o.flip ? y : x, o.flip ? "y" : "x"), top = u.valToPos(o.flip ? x : y, o.flip ? "x" : "y");
      const d = Math.hypot(left - u.cursor.left, top - u.cursor.top);
      if (!best || d < best.d) best = { d, s, y, left, top };
    }
    if (!best) { this.tip.hidden = true; return; }
    const V = RefresherChart.value;
    this.tip.textContent = `${u.series[best.s].label}: ${o.xLabel || "x"} ${V(x)}, ${o.yLabel || "y"} ${this.show(best.y)}`;
    this.tip.dataset.series = u.series[best.s].label;
    this.tip.hidden = false;
    const w = u.over.clientWidth;
    this.tip.style.left = `${Math.min(best.left + 10, Math.max(0, w - this.tip.offsetWidth))}px`;
    // Above the point, or below it near the top edge.
    this.tip.style.top = `${best.top >= 30 ? best.top - 30 : best.top + 12}px`;
  }
}

// The style table, fetched once for every chart of the page; charts draw when it is here.
RefresherChart.styles = fetch("/api/chart-style").then(r => r.json()).then(table => { RefresherChart.table = table; });

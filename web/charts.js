// Line charts of the pages, drawn by uPlot (vendored in web/vendor/uplot/, MIT; served from
// /static/, so no network). This module only says how our charts read; uPlot draws them:
//
// * ticks at round values: 1, 2 or 5 × 10^k on a linear axis; powers of ten on a log axis
//   (with 2 and 5 between when the axis spans under three decades);
// * shares capped at their maximum (`xMax`/`yMax`): quality, freshness and MAP never past 1;
// * a point at B = 0 on a log budget axis (the unrefreshed repository) is no point on the curve
//   but a labelled dashed reference line "B = 0: <value>" at its value, never moved silently;
// * curves joined in the order of their x values (budget order), a legend, and a tooltip naming
//   the series and both values of the point nearest the pointer.
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
  // options: { xLabel, yLabel, xLog, xMax, yMax, flip, zeroLabel, height }
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
    this.render();
  }

  setSeries(series) { this.series = series; this.render(); }

  static PALETTE = ["#1f5fbf", "#d9480f", "#2b8a3e", "#862e9c", "#e67700", "#0b7285", "#c2255c", "#5c940d", "#495057"];

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

  // A tick's label: round values need no more digits than they have.
  static label(v) {
    return Math.abs(v) < 1e-12 ? "0" : String(Number(v.toPrecision(6)));
  }

  // A data value (tooltip, legend, reference line): six significant digits.
  static value(v) {
    return v == null ? "–" : Math.abs(v) < 1e-12 ? "0" : String(Number(v.toPrecision(6)));
  }

  placeable(x) { return Number.isFinite(x) && (!this.options.xLog || x > 0); }

  // uPlot's aligned data: the union of the series' x values (ascending: each curve is joined
  // in x order, i.e. budget order), each series' y at those x or null (a gap uPlot spans).
  aligned() {
    const xs = [...new Set(this.series.flatMap(s => s.points.map(p => p[0]).filter(x => this.placeable(x))))].sort((a, b) => a - b);
    const at = new Map(xs.map((x, i) => [x, i]));
    const ys = this.series.map(s => {
      const row = xs.map(() => null);
      for (const [x, y] of s.points) if (at.has(x) && Number.isFinite(y)) row[at.get(x)] = y;
      return row;
    });
    return [xs, ...ys];
  }

  // Points at x = 0 on a log x axis (B = 0): one reference line per distinct y value.
  references() {
    if (!this.options.xLog) return [];
    const seen = new Map();
    for (const s of this.series) for (const [x, y] of s.points) {
      if (x === 0 && Number.isFinite(y)) seen.set(y.toFixed(6), y);
    }
    return [...seen.values()];
  }

  render() {
    const o = this.options;
    const data = this.aligned();
    this.refs = this.references();
    this.xRange = RefresherChart.range(data[0], o.xLog, o.xMax);
    this.yRange = RefresherChart.range(data.slice(1).flat().concat(this.refs), false, o.yMax);
    const shape = JSON.stringify(this.series.map(s => [s.name, s.color, s.dashed]));
    if (this.plot && shape === this.shape) {
      this.plot.setData(data);
    } else {
      if (this.plot) this.plot.destroy();
      this.shape = shape;
      this.plot = new uPlot(this.uplotOptions(), data, this.container);
      this.plot.over.append(this.tip, this.refLabels, this.empty);
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

  uplotOptions() {
    const o = this.options, chart = this, label = RefresherChart.label;
    const axis = (which, side) => ({
      scale: which,
      side,
      label: which === "x" ? o.xLabel : o.yLabel,
      labelSize: 20,
      size: side % 2 ? 56 : 40,
      stroke: "#5d6679",
      grid: { stroke: "#eef0f4", width: 1 },
      ticks: { stroke: "#9aa3b5", width: 1, size: 4 },
      // About one tick per 55 px across, per 45 px up.
      splits: (u, i, min, max) => {
        const ratio = window.devicePixelRatio || 1;
        const count = side % 2 ? u.bbox.height / ratio / 45 : u.bbox.width / ratio / 55;
        return RefresherChart.ticks(min, max, which === "x" && o.xLog, Math.min(8, Math.max(3, Math.floor(count))));
      },
      filter: (u, splits) => splits,
      values: (u, splits) => splits.map(label),
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
          stroke: s.color || RefresherChart.PALETTE[i % RefresherChart.PALETTE.length],
          width: 2,
          dash: s.dashed ? [5, 4] : undefined,
          spanGaps: true,
          points: { size: 5 },
          value: (u, v) => RefresherChart.value(v),
        })),
      ],
      legend: { live: true },
      cursor: { drag: { x: false, y: false } },
      hooks: {
        draw: [u => chart.drawReferences(u)],
        setCursor: [u => chart.showTip(u)],
      },
    };
  }

  // Hover titles for uPlot's own numbers: each axis names its quantity, each legend row says
  // its value is the series' value at the hovered point.
  explain(u) {
    const o = this.options;
    u.axes.forEach((axis, i) => {
      const node = u.root.querySelectorAll(".u-axis")[i];
      if (node) node.title = axis.scale === "x" ? o.xLabel || "x" : o.yLabel || "y";
    });
    u.root.querySelectorAll(".u-legend .u-series").forEach((row, i) => {
      row.title = i === 0 ? `${o.xLabel || "x"} of the hovered point` : `${u.series[i].label}: ${o.yLabel || "y"} at the hovered ${o.xLabel || "x"} (click to hide or show the curve)`;
    });
  }

  // B = 0 as a dashed line across the plot at its value, labelled in the DOM (readable, and
  // the tests read it).
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
      const css = u.valToPos(value, "y");
      const text = el("div", {
        class: "zero-ref-label",
        text: `${o.zeroLabel || "0"}: ${RefresherChart.value(value)}`,
        title: `${o.yLabel || "y"} at ${o.zeroLabel || "0"} (no refreshes: the unrefreshed repository), drawn as a line because a log axis has no 0`,
      });
      this.refLabels.append(text);
      // Beside the line, on the side with room.
      if (o.flip) {
        const room = u.over.clientWidth - css > text.offsetWidth + 8;
        text.style.left = `${room ? css + 4 : css - text.offsetWidth - 4}px`;
        text.style.top = "2px";
      } else {
        text.style.left = "6px";
        text.style.top = `${css > 20 ? css - 18 : css + 2}px`;
      }
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
    this.tip.textContent = `${u.series[best.s].label}: ${o.xLabel || "x"} ${V(x)}, ${o.yLabel || "y"} ${V(best.y)}`;
    this.tip.dataset.series = u.series[best.s].label;
    this.tip.hidden = false;
    const w = u.over.clientWidth;
    this.tip.style.left = `${Math.min(best.left + 10, Math.max(0, w - this.tip.offsetWidth))}px`;
    // Above the point, or below it near the top edge.
    this.tip.style.top = `${best.top >= 30 ? best.top - 30 : best.top + 12}px`;
  }
}

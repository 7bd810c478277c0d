// A small SVG line chart. Why not a charting library: the pages need only line charts with a
// legend, a vendored library would be ~200 KB of third-party code to keep updated, and plain SVG
// elements can be inspected by the browser tests (each series is one <polyline> whose
// data-points attribute counts its points).
//
// Axes read like a plotting tool's: ticks at round values (1, 2 or 5 × 10^k; powers of ten —
// with 2 and 5 between under three decades — on a log axis), shares capped at their maximum
// (`xMax`/`yMax`: quality never drawn past 1), and a point at 0 on a log axis (B = 0, the
// unrefreshed repository) drawn as a labelled dashed reference line, never moved silently.
"use strict";
const PALETTE = ["#1f5fbf", "#d9480f", "#2b8a3e", "#862e9c", "#e67700", "#0b7285", "#c2255c", "#5c940d", "#495057"];
class SvgChart {
  // options: { xLabel, yLabel, xLog, yLog, xMax, yMax, height }
  constructor(container, options) {
    this.container = container;
    this.options = Object.assign({ height: 240 }, options || {});
    this.series = [];
    this.render();
  }
  setSeries(series) { this.series = series; this.render(); }
  // Axis value → axis unit (log10 on a log axis).
  ax(v, log) { return log ? Math.log10(v) : v; }
  placeable([x, y]) {
    const o = this.options;
    return Number.isFinite(x) && Number.isFinite(y) && (!o.xLog || x > 0) && (!o.yLog || y > 0);
  }
  // Reference lines for points at 0 on a log axis: { vertical, value }.
  references() {
    const o = this.options, seen = new Map();
    for (const s of this.series) for (const [x, y] of s.points) {
      if (o.yLog && y <= 0 && Number.isFinite(x)) seen.set("v" + x.toFixed(6), { vertical: true, value: x });
      else if (o.xLog && x <= 0 && Number.isFinite(y)) seen.set("h" + y.toFixed(6), { vertical: false, value: y });
    }
    return [...seen.values()];
  }
  static range(values, log, cap) {
    const v = values.filter(x => Number.isFinite(x) && (!log || x > 0)).map(x => (log ? Math.log10(x) : x));
    if (!v.length) return [0, 1];
    let lo = Math.min(...v), hi = Math.max(...v);
    if (hi - lo < 1e-12) { const pad = log ? 0.5 : Math.max(Math.abs(lo), 1e-3) * 0.01; lo -= pad; hi += pad; }
    else { const pad = (hi - lo) * 0.06; lo -= pad; hi += pad; }
    if (cap != null && (!log || cap > 0)) {
      const c = log ? Math.log10(cap) : cap;
      if (hi > c) { hi = c; if (lo >= hi) lo = hi - 1e-3; }
    }
    return [lo, hi];
  }
  static ticks(lo, hi, log) {
    if (log) {
      const out = [], mult = hi - lo < 3 ? [1, 2, 5] : [1];
      for (let k = Math.floor(lo); k <= Math.ceil(hi); k++) for (const m of mult) {
        const v = m * Math.pow(10, k), a = Math.log10(v);
        if (a >= lo - 1e-9 && a <= hi + 1e-9) out.push(v);
      }
      return out;
    }
    const raw = (hi - lo) / 5, mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 5, 10].map(m => m * mag).find(s => s >= raw) || 10 * mag;
    const out = [];
    for (let i = Math.ceil(lo / step); i <= Math.floor(hi / step); i++) out.push(i * step);
    return out;
  }
  render() {
    const o = this.options;
    const W = 560, H = o.height, L = 56, R = 12, T = 10, B = 34;
    const plotted = this.series.map(s => s.points.filter(p => this.placeable(p)));
    const refs = this.references();
    const xs = plotted.flat().map(p => p[0]).concat(refs.filter(r => r.vertical).map(r => r.value));
    const ys = plotted.flat().map(p => p[1]).concat(refs.filter(r => !r.vertical).map(r => r.value));
    const [x0, x1] = SvgChart.range(xs, o.xLog, o.xMax);
    const [y0, y1] = SvgChart.range(ys, o.yLog, o.yMax);
    const sx = x => L + (this.ax(x, o.xLog) - x0) / (x1 - x0) * (W - L - R);
    const sy = y => T + (1 - (this.ax(y, o.yLog) - y0) / (y1 - y0)) * (H - T - B);
    const NS = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(NS, "svg");
    svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
    svg.setAttribute("class", "chart");
    svg.setAttribute("width", "100%");
    const add = (tag, attrs, text) => {
      const n = document.createElementNS(NS, tag);
      for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, v);
      if (text != null) n.textContent = text;
      svg.append(n);
      return n;
    };
    for (const y of SvgChart.ticks(y0, y1, o.yLog)) {
      add("line", { class: "grid", x1: L, x2: W - R, y1: sy(y), y2: sy(y) });
      add("text", { class: "y-tick", x: L - 6, y: sy(y) + 4, "text-anchor": "end" }, tick(y));
    }
    for (const x of SvgChart.ticks(x0, x1, o.xLog)) {
      add("text", { class: "x-tick", x: sx(x), y: H - B + 16, "text-anchor": "middle" }, tick(x));
    }
    add("line", { class: "axis", x1: L, x2: L, y1: T, y2: H - B });
    add("line", { class: "axis", x1: L, x2: W - R, y1: H - B, y2: H - B });
    if (o.xLabel) add("text", { x: (L + W - R) / 2, y: H - 4, "text-anchor": "middle" }, o.xLabel);
    if (o.yLabel) add("text", { x: 12, y: T + (H - T - B) / 2, transform: `rotate(-90 12 ${T + (H - T - B) / 2})`, "text-anchor": "middle" }, o.yLabel);
    for (const r of refs) {
      if (r.vertical) {
        add("line", { class: "zero-ref", x1: sx(r.value), x2: sx(r.value), y1: T, y2: H - B, stroke: "#555", "stroke-dasharray": "5 4" });
        add("text", { class: "zero-ref-label", x: sx(r.value) + 4, y: T + 10 }, `${o.zeroLabel || "0"}: ${tick(r.value)}`);
      } else {
        add("line", { class: "zero-ref", x1: L, x2: W - R, y1: sy(r.value), y2: sy(r.value), stroke: "#555", "stroke-dasharray": "5 4" });
        add("text", { class: "zero-ref-label", x: L + 6, y: sy(r.value) - 4 }, `${o.zeroLabel || "0"}: ${tick(r.value)}`);
      }
    }
    const legend = document.createElement("div");
    legend.className = "legend";
    this.series.forEach((s, i) => {
      const color = s.color || PALETTE[i % PALETTE.length];
      const pts = plotted[i].map(([x, y]) => `${sx(x).toFixed(1)},${sy(y).toFixed(1)}`).join(" ");
      add("polyline", { points: pts, fill: "none", stroke: color, "stroke-width": 2, "stroke-dasharray": s.dashed ? "5 4" : "none", "data-series": s.name, "data-points": plotted[i].length });
      // Each point names itself on hover (an SVG <title> is the browser's tooltip).
      if (plotted[i].length <= 40) for (const [x, y] of plotted[i]) {
        const dot = add("circle", { cx: sx(x), cy: sy(y), r: 3, fill: color });
        const tip = document.createElementNS(NS, "title");
        tip.textContent = `${s.name}: ${o.xLabel || "x"} ${tick(x)}, ${o.yLabel || "y"} ${tick(y)}`;
        dot.append(tip);
      }
      const item = document.createElement("span");
      item.style.setProperty("--c", color);
      item.textContent = s.name;
      legend.append(item);
    });
    if (!this.series.length) add("text", { x: (L + W) / 2, y: H / 2, "text-anchor": "middle" }, "no data yet");
    this.container.replaceChildren(svg, legend);
  }
}
function tick(v) {
  const a = Math.abs(v);
  if (a < 1e-12) return "0";
  if (a >= 100) return v.toFixed(0);
  return String(Number(v.toFixed(4)));
}

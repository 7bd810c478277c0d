// A small SVG line chart. Why not a charting library: the pages need only line charts with a
// legend, a vendored library would be ~200 KB of third-party code to keep updated, and plain SVG
// elements can be inspected by the browser tests (each series is one <polyline> whose
// data-points attribute counts its points).
"use strict";
const PALETTE = ["#1f5fbf", "#d9480f", "#2b8a3e", "#862e9c", "#e67700", "#0b7285", "#c2255c", "#5c940d", "#495057"];
class SvgChart {
  // options: { xLabel, yLabel, yMin, yMax, xMin, xMax, height }
  constructor(container, options) {
    this.container = container;
    this.options = Object.assign({ height: 240 }, options || {});
    this.series = [];
    this.render();
  }
  setSeries(series) { this.series = series; this.render(); }
  bounds() {
    const xs = [], ys = [];
    for (const s of this.series) for (const [x, y] of s.points) { xs.push(x); ys.push(y); }
    const o = this.options;
    let [x0, x1] = [o.xMin ?? Math.min(...xs, 0), o.xMax ?? Math.max(...xs, 1)];
    let [y0, y1] = [o.yMin ?? Math.min(...ys, 0), o.yMax ?? Math.max(...ys, 1)];
    if (o.yMin == null && ys.length) { y0 = Math.min(...ys); const pad = (Math.max(...ys) - y0) * 0.1 || 0.01; y0 -= pad; y1 = Math.max(...ys) + pad; }
    if (o.xMin == null && xs.length) { x0 = Math.min(...xs); x1 = Math.max(...xs); const pad = (x1 - x0) * 0.03 || 0.5; x0 -= pad; x1 += pad; }
    if (x1 <= x0) x1 = x0 + 1;
    if (y1 <= y0) y1 = y0 + 1;
    return [x0, x1, y0, y1];
  }
  render() {
    const W = 560, H = this.options.height, L = 56, R = 12, T = 10, B = 34;
    const [x0, x1, y0, y1] = this.bounds();
    const sx = x => L + (x - x0) / (x1 - x0) * (W - L - R);
    const sy = y => T + (1 - (y - y0) / (y1 - y0)) * (H - T - B);
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
    for (let i = 0; i <= 4; i++) {
      const y = y0 + (y1 - y0) * i / 4;
      add("line", { class: "grid", x1: L, x2: W - R, y1: sy(y), y2: sy(y) });
      add("text", { x: L - 6, y: sy(y) + 4, "text-anchor": "end" }, tick(y, y1 - y0));
      const x = x0 + (x1 - x0) * i / 4;
      add("text", { x: sx(x), y: H - B + 16, "text-anchor": "middle" }, tick(x, x1 - x0));
    }
    add("line", { class: "axis", x1: L, x2: L, y1: T, y2: H - B });
    add("line", { class: "axis", x1: L, x2: W - R, y1: H - B, y2: H - B });
    if (this.options.xLabel) add("text", { x: (L + W - R) / 2, y: H - 4, "text-anchor": "middle" }, this.options.xLabel);
    if (this.options.yLabel) add("text", { x: 12, y: T + (H - T - B) / 2, transform: `rotate(-90 12 ${T + (H - T - B) / 2})`, "text-anchor": "middle" }, this.options.yLabel);
    const legend = document.createElement("div");
    legend.className = "legend";
    this.series.forEach((s, i) => {
      const color = s.color || PALETTE[i % PALETTE.length];
      const pts = s.points.map(([x, y]) => `${sx(x).toFixed(1)},${sy(y).toFixed(1)}`).join(" ");
      add("polyline", { points: pts, fill: "none", stroke: color, "stroke-width": 2, "stroke-dasharray": s.dashed ? "5 4" : "none", "data-series": s.name, "data-points": s.points.length });
      if (s.points.length <= 40) for (const [x, y] of s.points) add("circle", { cx: sx(x), cy: sy(y), r: 2.5, fill: color });
      const item = document.createElement("span");
      item.style.setProperty("--c", color);
      item.textContent = s.name;
      legend.append(item);
    });
    if (!this.series.length) add("text", { x: (L + W) / 2, y: H / 2, "text-anchor": "middle" }, "no data yet");
    this.container.replaceChildren(svg, legend);
  }
}
function tick(v, span) {
  const digits = span >= 20 ? 0 : span >= 2 ? 1 : span >= 0.2 ? 2 : span >= 0.02 ? 3 : 4;
  return Number(v).toFixed(digits);
}

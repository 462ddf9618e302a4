// SVG charts: a line chart with axes, ticks and a legend, and a sparkline. No library.

const SVG = "http://www.w3.org/2000/svg";
export const COLORS = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#4b5563", "#db2777"];

function el(name, attrs = {}, text) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  if (text !== undefined) node.textContent = text;
  return node;
}

// About `count` round tick values covering [lo, hi].
function ticks(lo, hi, count = 5) {
  if (lo === hi) return [lo];
  const raw = (hi - lo) / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * magnitude).find((s) => raw <= s) || raw;
  const out = [];  // whole multiples of the step, so 0 is exactly 0 (never -1.4e-17)
  for (let i = Math.ceil(lo / step); i * step <= hi + step / 1e6; i += 1) out.push(Number((i * step).toPrecision(12)));
  return out;
}

const format = (v) => (Math.abs(v) >= 1000 || (v !== 0 && Math.abs(v) < 0.01) ? v.toExponential(1) : String(Number(v.toFixed(3))));

// TensorBoard's smoothing: an exponential moving average with weight `weight` in [0, 1),
// debiased so the first points are not pulled towards 0. Gaps (null) stay gaps.
export function smooth(ys, weight) {
  if (!(weight > 0)) return ys;
  let average = 0, count = 0;
  return ys.map((y) => {
    if (!Number.isFinite(y)) return y;
    average = average * weight + (1 - weight) * y;
    count += 1;
    return average / (1 - weight ** count);
  });
}

// series: [{name, xs, ys, color?, faint?}] (ys may hold null: a gap). Returns an <svg>; with
// several series their legend goes under the plot (a row each), never over the lines. A faint
// series (the raw line behind a smoothed one) is drawn thin and pale, with no legend row.
export function lineChart(series, { title = "", xLabel = "step", width = 560, height = 240 } = {}) {
  const named = series.filter((s) => !s.faint);
  const colorOf = (s) => s.color || COLORS[series.indexOf(s) % COLORS.length];
  const legendRows = named.length > 1 ? named.length : 0;
  height += legendRows * 14;
  const pad = { left: 56, right: 12, top: title ? 26 : 10, bottom: 40 + legendRows * 14 };
  const svg = el("svg", { viewBox: `0 0 ${width} ${height}`, width, height, class: "chart", role: "img", "aria-label": title });
  if (title) svg.append(el("text", { x: pad.left, y: 16, class: "chart-title" }, title));
  const points = series.flatMap((s) => s.xs.map((x, i) => [x, s.ys[i]])).filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
  if (!points.length) {
    svg.append(el("text", { x: width / 2, y: height / 2, class: "muted", "text-anchor": "middle" }, "no data yet"));
    return svg;
  }
  const xs = points.map((p) => p[0]), ys = points.map((p) => p[1]);
  let [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  if (x0 === x1) { x0 -= 1; x1 += 1; }
  if (y0 === y1) { y0 -= 0.5; y1 += 0.5; }
  const w = width - pad.left - pad.right, h = height - pad.top - pad.bottom;
  const sx = (x) => pad.left + ((x - x0) / (x1 - x0)) * w;
  const sy = (y) => pad.top + h - ((y - y0) / (y1 - y0)) * h;
  for (const t of ticks(y0, y1)) {
    svg.append(el("line", { x1: pad.left, x2: pad.left + w, y1: sy(t), y2: sy(t), class: "grid" }));
    svg.append(el("text", { x: pad.left - 6, y: sy(t) + 4, "text-anchor": "end", class: "tick" }, format(t)));
  }
  const integral = xs.every(Number.isInteger);
  for (const t of ticks(x0, x1, 6).filter((v) => !integral || Number.isInteger(v))) {
    svg.append(el("text", { x: sx(t), y: pad.top + h + 16, "text-anchor": "middle", class: "tick" }, format(t)));
  }
  svg.append(el("text", { x: pad.left + w / 2, y: pad.top + h + 32, "text-anchor": "middle", class: "axis-label" }, xLabel));
  series.forEach((s) => {
    const color = colorOf(s);
    let d = "", pen = "M";
    s.xs.forEach((x, i) => {
      const y = s.ys[i];
      if (!Number.isFinite(x) || !Number.isFinite(y)) { pen = "M"; return; }
      d += `${pen}${sx(x).toFixed(1)},${sy(y).toFixed(1)} `;
      pen = "L";
    });
    const look = s.faint ? { "stroke-width": 1, "stroke-opacity": 0.3, class: "series-raw" } : { "stroke-width": 2, class: "series" };
    const path = el("path", { d, fill: "none", stroke: color, ...look, "data-name": s.name });
    path.append(el("title", {}, s.name));
    svg.append(path);
    if (s.faint) return;
    const last = s.xs.map((x, i) => [x, s.ys[i]]).filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y)).pop();
    if (last) svg.append(el("circle", { cx: sx(last[0]), cy: sy(last[1]), r: 3, fill: color }));
  });
  if (legendRows) {
    const longest = Math.floor((w - 16) / 6.5);
    named.forEach((s, index) => {
      const y = pad.top + h + 50 + index * 14;
      svg.append(el("rect", { x: pad.left, y: y - 8, width: 10, height: 3, fill: colorOf(s) }));
      const name = s.name.length > longest ? `${s.name.slice(0, longest - 1)}…` : s.name;
      svg.append(el("text", { x: pad.left + 14, y, class: "legend" }, name));
    });
  }
  return svg;
}

export function sparkline(values, { width = 120, height = 28 } = {}) {
  const svg = el("svg", { viewBox: `0 0 ${width} ${height}`, class: "sparkline", width, height });
  const ys = values.filter(Number.isFinite);
  if (ys.length < 2) return svg;
  const lo = Math.min(...ys), hi = Math.max(...ys), span = hi - lo || 1;
  const d = ys.map((y, i) => `${i ? "L" : "M"}${((i / (ys.length - 1)) * (width - 4) + 2).toFixed(1)},${(height - 2 - ((y - lo) / span) * (height - 4)).toFixed(1)}`).join(" ");
  svg.append(el("path", { d, fill: "none", stroke: COLORS[0], "stroke-width": 1.5 }));
  return svg;
}

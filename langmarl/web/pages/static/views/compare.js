// Compare 2+ runs: small multiples of the metrics picked (the score first), every run's curve
// on each, smoothed as TensorBoard does (an exponential moving average, the raw line faint
// behind it); each metric's last, lowest and highest value per run; and the settings whose
// values differ between the runs' configs (GET /api/compare).
// #/compare?ids=a,b[&keys=k1,k2][&smooth=0.6]: picking metrics or moving the slider redraws
// the charts and updates the address (no reload), so a comparison can be shared as a link.

import { api, runPath } from "../api.js";
import { COLORS, lineChart, smooth } from "../charts.js";
import { errorBox, fmt, h, table } from "../dom.js";
import { numericKeys } from "./run.js";

const DEFAULT_METRICS = 4;
const DEFAULT_SMOOTHING = 0.6;

// Numeric series every run has, in the first run's order.
function sharedKeys(runs) {
  const sets = runs.map((run) => new Set(numericKeys(run.metrics)));
  return [...sets[0]].filter((key) => sets.every((set) => set.has(key)));
}

// The metrics shown first: those the address names, else the score and the next few.
function initialKeys(choices, asked, scoreKey) {
  const named = asked.filter((key) => choices.includes(key));
  if (named.length) return named;
  const first = choices.includes(scoreKey) ? [scoreKey] : [];
  return [...first, ...choices.filter((key) => key !== scoreKey)].slice(0, DEFAULT_METRICS);
}

// One metric, every run: the smoothed line (solid) over the raw one (faint) when weight > 0.
function metricChart(key, runs, weight) {
  const series = runs.flatMap((run, index) => {
    const color = COLORS[index % COLORS.length];
    const [xs, ys] = [run.metrics.steps, run.metrics.series[key]];
    const line = { name: run.name, xs, ys: smooth(ys, weight), color };
    return weight > 0 ? [{ name: `${run.name} (raw)`, xs, ys, color, faint: true }, line] : [line];
  });
  return h("figure", { class: "compare-chart", dataset: { key } },
    lineChart(series, { title: key, width: 560, height: 240 }));
}

function summaryTable(keys, runs, summaries) {
  const cell = (s) => (s ? `${fmt.number(s.last)} (${fmt.number(s.low)} – ${fmt.number(s.high)})` : "—");
  return table(["metric: last (lowest – highest)", ...runs.map((run) => run.name)],
    keys.map((key) => h("tr", { dataset: { key } }, h("td", {}, key),
      runs.map((_, i) => h("td", { class: "num" }, cell(summaries[key]?.[i]))))), { class: "compare-summary" });
}

function configDiff(rows, runs) {
  if (!rows.length) return h("p", { class: "muted" }, "The runs' configs set the same values.");
  return table(["setting", ...runs.map((run) => run.name)],
    rows.map((row) => h("tr", { dataset: { key: row.key } }, h("td", {}, h("code", {}, row.key)),
      row.values.map((value) => h("td", { class: "value" }, value)))), { class: "config-diff" });
}

function metricPicker(choices, picked, onChange) {
  return h("fieldset", { class: "metric-picker" }, h("legend", {}, "Metrics"),
    choices.map((key) => h("label", {}, h("input", { type: "checkbox", value: key, checked: picked.has(key),
      onchange: (event) => { event.target.checked ? picked.add(key) : picked.delete(key); onChange(); } }), ` ${key}`)));
}

function smoothingControl(state, onChange) {
  const shown = h("output", {}, state.weight.toFixed(2));
  const slider = h("input", { type: "range", min: 0, max: 0.99, step: 0.01, value: state.weight, "aria-label": "smoothing",
    oninput: (event) => { state.weight = Number(event.target.value); shown.textContent = state.weight.toFixed(2); onChange(); } });
  return h("label", { class: "smoothing" }, "Smoothing ", slider, " ", shown);
}

export async function renderCompare(view, ids, params) {
  if (ids.length < 2) {
    view.replaceChildren(h("h1", {}, "Compare"), h("p", { class: "muted" }, "Select two or more runs in the runs list, then press \"Compare selected\"."));
    return;
  }
  const query = ids.map(encodeURIComponent).join(",");
  const [comparison, ...metrics] = await Promise.all([
    api.get(`/api/compare?runs=${query}`), ...ids.map((id) => api.get(runPath(id, "/metrics")))]);
  const runs = comparison.runs.map((run, i) => ({ id: run.run_id, name: run.alias || run.run_id, metrics: metrics[i] }));
  const choices = sharedKeys(runs);
  const asked = (params.get("keys") || params.get("key") || "").split(",").filter(Boolean);
  const picked = new Set(initialKeys(choices, asked, comparison.runs[0].score_key));
  const state = { weight: params.has("smooth") ? Math.min(Math.max(Number(params.get("smooth")) || 0, 0), 0.99) : DEFAULT_SMOOTHING };
  const charts = h("div", { class: "charts" });
  const summary = h("div", {});

  function draw() {
    const keys = choices.filter((key) => picked.has(key));
    charts.replaceChildren(...(keys.length ? keys.map((key) => metricChart(key, runs, state.weight)) : [h("p", { class: "muted" }, "Pick a metric.")]));
    summary.replaceChildren(summaryTable(keys, runs, comparison.series));
    history.replaceState(null, "", `#/compare?ids=${query}&keys=${keys.map(encodeURIComponent).join(",")}&smooth=${state.weight}`);
  }

  view.replaceChildren(
    h("h1", {}, "Compare"),
    choices.length
      ? h("section", { class: "card" }, h("div", { class: "toolbar" }, metricPicker(choices, picked, draw), smoothingControl(state, draw)), charts, summary)
      : errorBox(new Error("these runs share no numeric metric")),
    h("section", { class: "card", id: "config-diff" }, h("h2", {}, "Config diff"), configDiff(comparison.config_diff, runs)));
  if (choices.length) draw();
}

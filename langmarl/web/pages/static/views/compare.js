// Compare 2+ runs: one metric key, every run's curve on one chart.

import { api, runPath } from "../api.js";
import { lineChart } from "../charts.js";
import { errorBox, h } from "../dom.js";
import { numericKeys } from "./run.js";

export async function renderCompare(view, ids, key) {
  if (ids.length < 2) {
    view.replaceChildren(h("h1", {}, "Compare"), h("p", { class: "muted" }, "Select two or more runs in the runs list, then press \"Compare selected\"."));
    return;
  }
  const runs = await Promise.all(ids.map(async (id) => {
    const [detail, metrics] = await Promise.all([api.get(runPath(id)), api.get(runPath(id, "/metrics"))]);
    return { id, detail, metrics };
  }));
  const shared = runs.map((r) => new Set(numericKeys(r.metrics))).reduce((a, b) => new Set([...a].filter((k) => b.has(k))));
  const choices = [...shared];
  const fallback = runs[0].detail.run.score_key;
  const chosen = key && shared.has(key) ? key : shared.has(fallback) ? fallback : choices[0];
  if (!chosen) {
    view.replaceChildren(h("h1", {}, "Compare"), errorBox(new Error("these runs share no numeric metric")));
    return;
  }
  const picker = h("select", { "aria-label": "metric", onchange: (e) => {
    location.hash = `#/compare?ids=${ids.map(encodeURIComponent).join(",")}&key=${encodeURIComponent(e.target.value)}`;
  } }, choices.map((k) => h("option", { value: k, selected: k === chosen }, k)));
  view.replaceChildren(
    h("h1", {}, "Compare"),
    h("div", { class: "toolbar" }, "Metric ", picker),
    h("section", { class: "card" }, lineChart(runs.map((r) => ({ name: r.detail.run.alias || r.id, xs: r.metrics.steps, ys: r.metrics.series[chosen] })),
      { title: chosen, width: 900, height: 360 })));
}

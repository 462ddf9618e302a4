// Monitor: the machine's CPU, memory and load over time (GET /api/resources/history, which
// the server samples every few seconds from its start), redrawn as new samples arrive.
// Reached from the header's Monitor link (#/monitor).

import { api } from "../api.js";
import { lineChart } from "../charts.js";
import { errorBox, fmt, h } from "../dom.js";

const GIB = 2 ** 30;

// Seconds before now of each sample (the x axis: negative, 0 is now).
const ago = (samples, now) => samples.map((s) => Math.round(s.time - now));

export function charts(samples) {
  const now = samples.length ? samples[samples.length - 1].time : 0;
  const xs = ago(samples, now);
  const xLabel = "seconds ago";
  const gpus = (samples[samples.length - 1]?.gpus || []).map((gpu, index) => ({
    name: gpu.name, xs, ys: samples.map((s) => s.gpus[index]?.utilization_pct ?? null),
  }));
  return [
    lineChart([{ name: "CPU %", xs, ys: samples.map((s) => s.cpu_pct) }], { title: "CPU use (% of all cores)", xLabel }),
    lineChart([{ name: "memory GiB", xs, ys: samples.map((s) => (s.memory_used == null ? null : s.memory_used / GIB)) }],
      { title: `memory used (GiB of ${fmt.number((samples[0]?.memory_total || 0) / GIB, 1)})`, xLabel }),
    lineChart([{ name: "load", xs, ys: samples.map((s) => s.load_1) }],
      { title: `1-minute load (${samples[0]?.cpus_usable ?? "?"} usable cores)`, xLabel }),
    gpus.length ? lineChart(gpus, { title: "GPU use (%)", xLabel }) : null,
  ];
}

export function renderMonitor(view) {
  const body = h("div", { class: "charts", id: "monitor-charts" }, h("p", { class: "muted" }, "Loading…"));
  view.replaceChildren(h("section", { class: "card" }, h("h2", {}, "Monitor"), body));
  let timer = null;
  async function load() {
    try {
      const history = await api.get("/api/resources/history");
      body.replaceChildren(...(history.samples.length
        ? charts(history.samples).filter(Boolean)
        : [h("p", { class: "muted" }, "no samples yet")]));
      timer = setTimeout(load, history.interval_s * 1000);
    } catch (error) {
      body.replaceChildren(errorBox(error));
    }
  }
  load();
  return () => clearTimeout(timer);
}

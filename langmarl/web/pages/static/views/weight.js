// Weight space (MAGRPO/IAC/MAAC, PARL GRPO): held-out before/after, sample completions,
// evaluations, checkpoints, PARL curves.

import { api, runPath } from "../api.js";
import { lineChart } from "../charts.js";
import { fmt, h, section, table } from "../dom.js";

const interval = (i) => (i ? `${fmt.number(i.mean)} (95% CI ${fmt.number(i.low)} – ${fmt.number(i.high)}, n=${i.n})` : "—");

async function heldout(runId) {
  const data = await api.get(runPath(runId, "/eval"));
  const parts = [];
  if (data.heldout) {
    parts.push(table(["", "held-out reward"], ["before", "after"].map((part) => h("tr", { dataset: { part } },
      h("td", {}, data.heldout[part]?.label || part), h("td", {}, interval(data.heldout[part]?.interval)))), { class: "heldout" }));
  }
  if (data.eval.length) {
    const keys = Object.keys(data.eval[0]).filter((k) => k !== "step" && typeof data.eval[0][k] === "number");
    parts.push(lineChart(keys.map((k) => ({ name: k, xs: data.eval.map((r) => r.step), ys: data.eval.map((r) => r[k]) })), { title: "evaluations during training", width: 760 }));
  }
  return parts.length ? h("div", {}, parts) : null;
}

async function samples(runId) {
  const data = await api.get(runPath(runId, "/samples"));
  const rows = ["before", "after"].flatMap((part) => (data.samples[part] || []).map((s) => h("tr", {},
    h("td", {}, part), h("td", {}, s.prompt), h("td", {}, (s.completions || []).map((c) => h("pre", { class: "completion" }, c))),
    h("td", { class: "num" }, fmt.number(s.return)))));
  return rows.length ? table(["", "prompt", "completions (one per agent)", "return"], rows) : null;
}

async function checkpoints(runId) {
  const data = await api.get(runPath(runId, "/checkpoints"));
  if (!data.checkpoints.length) return null;
  return table(["checkpoint", "step", "files"], data.checkpoints.map((c) => h("tr", {},
    h("td", {}, c.name), h("td", { class: "num" }, c.step), h("td", { class: "small" }, `${c.files.length} files`))));
}

async function parlCurves(runId) {
  const data = await api.get(runPath(runId, "/curves"));
  const steps = data.curve.map((p) => p.step);
  const keys = ["r_perf", "r_parallel", "r_finish", "num_subagents", "critical_steps", "serial_steps"].filter((k) => data.curve.some((p) => typeof p[k] === "number"));
  return lineChart(keys.map((k) => ({ name: k, xs: steps, ys: data.curve.map((p) => p[k]) })), { title: "PARL terms per step", width: 760 });
}

// extra: the kind's extra sections (GET /api/kinds), e.g. "parl_curves".
export function weightSections(runId, extra) {
  const sections = [
    section("Held-out reward and evaluations", heldout(runId), { id: "heldout" }),
    section("Sample completions", samples(runId)),
    section("Checkpoints", checkpoints(runId)),
  ];
  if (extra.includes("parl_curves")) sections.unshift(section("PARL curves", parlCurves(runId)));
  return sections;
}

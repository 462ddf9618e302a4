// Reward space (Prompt2Policy sessions): the iteration timeline, and per iteration the reward
// code and its LaTeX, the judgment, per-term training metrics and the evaluation video.

import { api, fileUrl, runPath } from "../api.js";
import { lineChart } from "../charts.js";
import { fmt, h, section } from "../dom.js";

async function iterationDetail(runId, iterationId) {
  const [detail, metrics] = await Promise.all([
    api.get(runPath(runId, `/iterations/${iterationId}`)),
    api.get(runPath(runId, `/iterations/${iterationId}/metrics`)).catch(() => ({ train: [], eval: [] })),
  ]);
  const judgment = detail.judgment;
  const terms = [...new Set(metrics.train.flatMap((row) => Object.keys(row)))].filter((k) => k !== "global_step" && k !== "step"
    && metrics.train.some((row) => typeof row[k] === "number"));
  const xs = metrics.train.map((row, i) => row.global_step ?? row.step ?? i);
  const video = h("div", {});
  if (detail.videos?.length) {
    fileUrl(detail.videos[detail.videos.length - 1].url).then((url) => video.replaceChildren(
      h("video", { src: url, controls: true, width: 480, class: "video" })), () => video.replaceChildren(h("p", { class: "muted" }, "video could not load")));
  }
  return h("div", { class: "iteration", dataset: { iteration: iterationId } },
    h("h3", {}, iterationId, " ", fmt.status(detail.status?.status || "")),
    detail.reward_spec?.latex ? h("p", {}, "Reward: ", h("code", { class: "latex" }, detail.reward_spec.latex)) : null,
    detail.reward_spec?.description ? h("p", { class: "muted" }, detail.reward_spec.description) : null,
    h("details", { open: true }, h("summary", {}, "reward code"), h("pre", { class: "code" }, detail.reward_code || "")),
    judgment ? h("div", { class: "judgment" }, h("h4", {}, `Judgment: intent score ${fmt.number(judgment.intent_score)}${judgment.passed ? " (passed)" : ""}`),
      h("p", {}, judgment.diagnosis || ""),
      (judgment.failure_tags || []).map((t) => h("span", { class: "tag" }, t))) : h("p", { class: "muted" }, "not judged yet"),
    terms.length ? lineChart(terms.map((k) => ({ name: k, xs, ys: metrics.train.map((row) => row[k]) })), { title: "per-term training metrics", width: 760 }) : null,
    video);
}

async function timeline(runId) {
  const data = await api.get(runPath(runId, "/iterations"));
  if (!data.iterations.length) return null;
  const detail = h("div", {});
  const items = data.iterations.map((it) => h("button", { class: "timeline-item", dataset: { iteration: it.iteration_id },
    onclick: () => detail.replaceChildren(h("p", { class: "muted" }, "Loading…")) || iterationDetail(runId, it.iteration_id).then((d) => detail.replaceChildren(d)) },
  h("strong", {}, it.iteration_id), h("span", {}, ` ${fmt.number(it.judgment?.intent_score)}`), it.judgment?.passed ? " ✓" : ""));
  const scores = data.iterations.map((it) => it.judgment?.intent_score ?? null);
  const last = data.iterations[data.iterations.length - 1].iteration_id;
  detail.replaceChildren(await iterationDetail(runId, last));
  return h("div", {},
    data.prompt ? h("p", {}, h("strong", {}, "Intent: "), data.prompt) : null,
    h("p", { class: "muted" }, `status ${data.status ?? "?"} · best ${data.best_iteration ?? "—"} (${fmt.number(data.best_score)})`),
    lineChart([{ name: "intent score", xs: scores.map((_, i) => i + 1), ys: scores }], { title: "intent score per iteration", xLabel: "iteration", width: 760, height: 200 }),
    h("div", { class: "timeline" }, items), detail);
}

export function rewardSections(runId) {
  return [section("Iterations", timeline(runId), { id: "iterations" })];
}

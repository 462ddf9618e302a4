// Reward space (Prompt2Policy sessions): the iteration timeline, and per iteration the reward
// code and its LaTeX, the judgment, per-term training metrics and the evaluation video; and the
// session's analysis (per-term table, flags, training dynamics, narrative) with its Analyze button.

import { api, fileUrl, postEvents, runPath } from "../api.js";
import { lineChart } from "../charts.js";
import { errorBox, fmt, h, mathElement, section, table } from "../dom.js";

function candidatesView(loop) {
  const candidates = loop?.candidates || [];
  if (candidates.length < 2) return null;
  const rows = candidates.map((c) => h("tr", { dataset: { candidate: c.name } },
    h("td", {}, c.name, c.name === loop.winner ? " ✓" : ""), h("td", {}, c.origin), h("td", {}, c.proposal || "—"),
    h("td", { class: "num" }, c.error ? "failed" : fmt.number(c.score)),
    h("td", { class: "num" }, c.interval && c.interval.low != null ? `[${fmt.number(c.interval.low)}, ${fmt.number(c.interval.high)}]` : "—"),
    h("td", { class: "num" }, fmt.number(c.mean_return))));
  return h("div", { class: "candidates" }, h("h4", {}, `Candidates (${candidates.length}; ✓ kept)`),
    table(["candidate", "origin", "proposal", "score", "95% CI", "return"], rows));
}

// The reward's formula drawn from the server's MathML; its LaTeX as text when there is none
// (malformed LaTeX, or markup the server would not pass).
function rewardFormula(latex, mathml) {
  const formula = mathElement(mathml);
  formula?.setAttribute("alttext", latex);
  return h("p", { class: "reward-formula", title: latex }, "Reward: ", formula ?? h("code", { class: "latex" }, latex));
}

async function iterationDetail(runId, iterationId, loop) {
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
    candidatesView(loop),
    detail.reward_spec?.latex ? rewardFormula(detail.reward_spec.latex, detail.reward_mathml) : null,
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
    onclick: () => detail.replaceChildren(h("p", { class: "muted" }, "Loading…")) || iterationDetail(runId, it.iteration_id, it).then((d) => detail.replaceChildren(d)) },
  h("strong", {}, it.iteration_id), h("span", {}, ` ${fmt.number(it.intent_score ?? it.judgment?.intent_score)}`), it.judgment?.passed ? " ✓" : ""));
  const scores = data.iterations.map((it) => it.intent_score ?? it.judgment?.intent_score ?? null);
  const last = data.iterations[data.iterations.length - 1];
  detail.replaceChildren(await iterationDetail(runId, last.iteration_id, last));
  return h("div", {},
    data.prompt ? h("p", {}, h("strong", {}, "Intent: "), data.prompt) : null,
    h("p", { class: "muted" }, `status ${data.status ?? "?"} · best ${data.best_iteration ?? "—"} (${fmt.number(data.best_score)})`),
    lineChart([{ name: "intent score", xs: scores.map((_, i) => i + 1), ys: scores }], { title: "intent score per iteration", xLabel: "iteration", width: 760, height: 200 }),
    h("div", { class: "timeline" }, items), detail);
}

const share = (v) => (typeof v === "number" ? `${Math.round(v * 100)}%` : "—");

function analysisView(a) {
  if (!a) return h("p", { class: "muted" }, "not analysed yet");
  if (a.error) return errorBox(new Error(`the analysis failed: ${a.error}`));
  const flags = [...a.terms.filter((t) => t.dominant_in.length).map((t) => `${t.name} dominant in iteration ${t.dominant_in.join(", ")}`),
    ...a.plateaus.map((p) => `${p.series.replace("_", " ")} plateau by iteration ${p.iteration}`)];
  const rows = a.terms.map((t) => h("tr", {}, h("td", {}, t.name), h("td", { class: "num" }, fmt.number(t.mean)),
    h("td", { class: "num" }, fmt.number(t.spread)), h("td", {}, t.trend), h("td", { class: "num" }, share(t.share)),
    h("td", {}, t.dominant_in.join(", ") || "—")));
  return h("div", { class: "analysis" },
    h("p", {}, a.narrative, " ", h("span", { class: "tag" }, a.narrative_source)),
    a.narrative_note ? h("p", { class: "muted small" }, a.narrative_note) : null,
    flags.length ? h("p", {}, flags.map((f) => h("span", { class: "tag" }, f))) : null,
    a.terms.length ? table(["term", "mean", "spread", "trend", "share", "dominant in"], rows) : null,
    h("ul", { class: "small" }, a.dynamics.map((d) => h("li", {}, `iter_${d.iteration} training: `,
      d.flags.map((f) => h("span", { class: "tag" }, f)), d.notes.join("; ")))),
    h("p", { class: "muted small" }, `analysed ${fmt.time(a.analyzed_at)} · best iteration ${a.best?.iteration ?? "—"}`));
}

// The analysis, and "Analyze": POST .../analyze, its steps shown as they complete.
async function analysisSection(runId) {
  const body = h("div", {});
  const progress = h("span", { class: "muted small" });
  const button = h("button", { class: "analyze" }, "Analyze");
  button.onclick = async () => {
    button.disabled = true;
    const done = [];
    progress.textContent = "analysing…";
    try {
      await postEvents(runPath(runId, "/analyze"), (name, data) => {
        const value = JSON.parse(data);
        if (name === "step") { done.push(value.step); progress.textContent = `done: ${done.join(", ")}`; }
        else if (name === "analysis") { body.replaceChildren(analysisView(value)); progress.textContent = "analysed"; }
        else if (name === "error") { body.replaceChildren(errorBox(new Error(`${value.error} (${value.fix})`))); progress.textContent = ""; }
      });
    } catch (error) {
      body.replaceChildren(errorBox(error));
      progress.textContent = "";
    }
    button.disabled = false;
  };
  body.replaceChildren(analysisView((await api.get(runPath(runId, "/analysis"))).analysis));
  return h("div", {}, h("div", { class: "toolbar" }, button, progress), body);
}

export function rewardSections(runId) {
  return [section("Iterations", timeline(runId), { id: "iterations" }), section("Analysis", analysisSection(runId), { id: "analysis" })];
}

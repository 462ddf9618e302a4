// Pool search (`search: pool`): the Pareto front, every candidate with its parents and
// per-task validation scores, and the demonstrations of the best candidate, from
// GET /api/runs/{id}/pool. The API counts rounds from 0; the page from 1, as everywhere.

import { api, runPath } from "../api.js";
import { fmt, h, table } from "../dom.js";

const name = (id) => `#${id}`;
const round = (c) => (c.origin === "initial" ? "start" : `iteration ${c.iteration + 1}`);

function candidateRow(c, best, tasks) {
  const classes = [c.on_front && "front", c.id === best && "best", !c.accepted && "refused"].filter(Boolean);
  const perTask = (c.task_scores || []).map((v, i) => h("span", { title: tasks[i] ?? `task ${i + 1}` }, fmt.number(v, 2)));
  return h("tr", { dataset: { candidate: c.id }, class: classes.join(" ") || null },
    h("td", {}, name(c.id), c.id === best ? " ★ best" : ""),
    h("td", {}, round(c)),
    h("td", {}, c.origin),
    h("td", { class: "parents" }, (c.parents || []).map(name).join(", ") || "—"),
    h("td", { class: "num score" }, fmt.number(c.score)),
    h("td", { class: "num small task-scores" }, perTask.flatMap((s, i) => (i ? [" · ", s] : [s]))),
    h("td", {}, c.on_front ? "on front" : ""),
    h("td", {}, c.accepted ? "accepted" : "refused"),
    h("td", { class: "small" }, [c.note, c.reason].filter(Boolean).join(" — ")));
}

function demonstrations(best, byAgent) {
  const agents = Object.entries(byAgent);
  if (!agents.length) return null;
  return h("div", { class: "best-demos" }, h("h3", {}, `Demonstrations of the best candidate ${name(best)}`),
    agents.map(([agent, policy]) => h("div", { class: "agent-demos", dataset: { agent } },
      h("h4", {}, agent),
      h("p", { class: "muted small" }, policy.instruction || "(no instruction)"),
      policy.demonstrations.length
        ? h("ol", { class: "demos" }, policy.demonstrations.map((d) => h("li", {},
          h("pre", { class: "demo-input" }, d.input), h("pre", { class: "demo-output" }, `→ ${d.output}`))))
        : h("p", { class: "muted" }, "no demonstrations"))));
}

export async function poolView(runId) {
  const data = await api.get(runPath(runId, "/pool"));
  if (!data.candidates.length) return h("p", { class: "muted" }, "no candidates yet: the starting policies are being scored");
  const best = data.candidates.find((c) => c.id === data.best);
  const tasks = data.tasks || [];
  return h("div", {},
    h("p", { class: "front" }, `Pareto front: ${data.front.map(name).join(", ") || "—"}`,
      best ? ` · best ${name(best.id)} (validation score ${fmt.number(best.score)})` : "",
      ` · ${data.candidates.length} candidate${data.candidates.length === 1 ? "" : "s"}`),
    table(["candidate", "proposed in", "origin", "parents", "score", `per task (${tasks.length || "?"})`, "front", "gate", "note"],
      data.candidates.map((c) => candidateRow(c, data.best, tasks)), { class: "pool" }),
    demonstrations(data.best, data.demonstrations));
}

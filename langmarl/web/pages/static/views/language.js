// Language space: policy evolution with diffs, update decisions, the trajectory browser with
// the critic's evaluation and the textual gradients, and for a pool-search run its pool.
// Iterations are numbered from 1 (the API's 0-based `iteration` + 1), as in the CLI and the
// plots: iteration N produces checkpoint N.

import { api, runPath } from "../api.js";
import { diffBlock, fmt, h, section, table } from "../dom.js";
import { gameView } from "./game.js";
import { poolView } from "./pool.js";

const checkpointLabel = (v) => (v === 0 ? "checkpoint 0 (initial)" : `checkpoint ${v}`);
const iterationLabel = (v) => `iteration ${Number(v) + 1}`;

function options(values, chosen, label) {
  return values.map((v) => h("option", { value: v, selected: v === chosen }, label(v)));
}

async function policyEvolution(runId) {
  const data = await api.get(runPath(runId, "/policies"));
  const iterations = data.iterations;
  if (!iterations.length) return null;
  const from = h("select", { "aria-label": "from checkpoint" }, options(iterations, iterations[0], checkpointLabel));
  const to = h("select", { "aria-label": "to checkpoint" }, options(iterations, iterations[iterations.length - 1], checkpointLabel));
  const out = h("div", { class: "diffs" });
  async function show() {
    const diff = await api.get(runPath(runId, `/policies/diff?from=${from.value}&to=${to.value}`));
    const latest = data.checkpoints.find((c) => c.iteration === Number(to.value));
    out.replaceChildren(...Object.entries(diff.diffs).map(([agent, text]) => h("div", { class: "agent-policy", dataset: { agent } },
      h("h3", {}, agent),
      diffBlock(text),
      latest ? h("details", {}, h("summary", {}, `policy at ${checkpointLabel(Number(to.value))}`), h("pre", { class: "policy" }, latest.policies[agent] ?? "")) : null)));
  }
  from.onchange = show;
  to.onchange = show;
  await show();
  return h("div", {}, h("div", { class: "toolbar" }, "Diff from ", from, " to ", to), out);
}

async function decisions(runId) {
  const data = await api.get(runPath(runId, "/updates"));
  if (!data.decisions.length) return null;
  return table(["iteration", "agent", "candidate", "score", "accepted", "why"],
    data.decisions.map((d) => h("tr", {}, h("td", {}, typeof d.iteration === "number" ? d.iteration + 1 : ""), h("td", {}, d.agent_id ?? d.agent ?? ""),
      h("td", {}, d.candidate ?? ""), h("td", { class: "num" }, fmt.number(d.score ?? d.validation_score)),
      h("td", {}, d.accepted ? "yes" : "no"), h("td", { class: "small" }, d.reason ?? d.why ?? ""))));
}

function episodeView(item) {
  const trajectory = item.trajectory || {};
  const evaluation = item.evaluation || {};
  return h("div", { class: "episode" },
    h("p", {}, h("strong", {}, `episode ${item.episode}`), ` · reward ${fmt.number(trajectory.reward)}`),
    gameView((trajectory.metadata || {}).reward_details),
    trajectory.task ? h("details", {}, h("summary", {}, "task"), h("pre", {}, JSON.stringify(trajectory.task, null, 2))) : null,
    h("ol", { class: "steps" }, (trajectory.steps || []).map((step) => h("li", {},
      h("strong", {}, step.agent_id), h("pre", { class: "action" }, step.action ?? "")))),
    evaluation.per_agent ? h("div", { class: "critic" }, h("h4", {}, "Critic"),
      h("dl", {}, Object.entries(evaluation.per_agent).flatMap(([agent, text]) => [h("dt", {}, agent), h("dd", {}, text)])))
      : evaluation.error ? h("p", { class: "error" }, `critic failed: ${evaluation.error}`) : null);
}

async function trajectoryBrowser(runId) {
  const first = await api.get(runPath(runId, "/trajectories?limit=1"));
  if (!first.iterations.length) return h("p", { class: "muted" }, "no trajectories yet");
  const iteration = h("select", { "aria-label": "trajectory iteration" }, options(first.iterations, first.iteration, iterationLabel));
  const list = h("div", {});
  const gradients = h("div", {});
  async function show(offset = 0) {
    const page = await api.get(runPath(runId, `/trajectories?iteration=${iteration.value}&offset=${offset}&limit=5`));
    const more = page.offset + page.episodes.length < page.total;
    list.replaceChildren(h("p", { class: "muted" }, `${page.total} episode${page.total === 1 ? "" : "s"} in ${iterationLabel(page.iteration)}`),
      ...page.episodes.map(episodeView),
      h("div", { class: "toolbar" },
        offset > 0 ? h("button", { onclick: () => show(Math.max(0, offset - 5)) }, "previous") : null,
        more ? h("button", { onclick: () => show(offset + 5) }, "next") : null));
    const graded = (page.gradient_iterations || []).includes(page.iteration);  // none in a pool run
    const grad = graded ? await api.get(runPath(runId, `/gradients?iteration=${page.iteration}`)).catch(() => null) : null;
    gradients.replaceChildren(grad && grad.aggregated ? h("details", {}, h("summary", {}, "aggregated textual gradients"),
      h("pre", {}, JSON.stringify(grad.aggregated, null, 2))) : h("span"));
  }
  iteration.onchange = () => show(0);
  await show(0);
  return h("div", {}, h("div", { class: "toolbar" }, "Iteration ", iteration), gradients, list);
}

// `langmarl eval`'s comparisons: initial vs final checkpoint per split, with 95% intervals.
async function heldout(runId) {
  const data = await api.get(runPath(runId, "/heldout"));
  if (!data.heldout.length) return h("p", { class: "muted" }, "none yet: `langmarl eval <run dir>` writes one");
  const cell = (part) => {
    const i = part.interval || {};
    const bounds = i.low == null ? "n/a" : `[${fmt.number(i.low)}, ${fmt.number(i.high)}]`;
    return h("td", {}, `${fmt.number(part.avg_reward)} ${bounds} n=${part.num_episodes ?? "?"} (checkpoint ${part.iteration ?? "?"})`);
  };
  return table(["split", "initial", "final", "difference"],
    data.heldout.map((r) => h("tr", { dataset: { split: r.split } }, h("td", {}, r.split),
      cell(r.initial), cell(r.final), h("td", { class: "num" }, fmt.number(r.difference)))), { class: "heldout" });
}

// detail: GET /api/runs/{id} (its config says whether the run searches a pool).
export function languageSections(runId, sections, detail) {
  const pool = detail?.config?.search === "pool";
  return [
    pool ? section("Pool search", poolView(runId), { id: "pool" }) : null,
    section("Held-out evaluation", heldout(runId), { id: "heldout" }),
    section("Policy evolution", policyEvolution(runId), { id: "policy-evolution" }),
    section("Update decisions", decisions(runId)),
    section("Trajectories", trajectoryBrowser(runId), { id: "trajectories" }),
  ].filter(Boolean);
}

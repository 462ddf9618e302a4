// One run: header (status, alias, star, tags), reward curve and the space's own series (live
// while the run goes), tokens and cost per role, then the space's own sections.

import { api, follow, runPath } from "../api.js";
import { lineChart } from "../charts.js";
import { errorBox, fmt, h, section, table } from "../dom.js";
import { languageSections } from "./language.js";
import { rewardSections } from "./reward.js";
import { weightSections } from "./weight.js";

const MAX_CHARTS = 12;
const SKIP = new Set(["step", "iteration", "time", "seconds", "step_seconds"]);

// Numeric series of a metrics answer, biggest-first by how many points they have.
export function numericKeys(metrics) {
  return metrics.keys.filter((key) => !SKIP.has(key)
    && (metrics.series[key] || []).some((v) => typeof v === "number"));
}

function usageTable(metrics) {
  const column = metrics.series.usage_by_role || [];
  const totals = {};
  for (const perRole of column) {
    for (const [role, usage] of Object.entries(perRole || {})) {
      const t = (totals[role] ??= { calls: 0, input_tokens: 0, output_tokens: 0, cost_usd: 0 });
      for (const key of Object.keys(t)) t[key] += usage[key] || 0;
    }
  }
  const roles = Object.keys(totals);
  if (!roles.length) return null;
  return table(["role", "calls", "input tokens", "output tokens", "cost (USD)"],
    roles.map((role) => h("tr", {}, h("td", {}, role), h("td", { class: "num" }, totals[role].calls),
      h("td", { class: "num" }, totals[role].input_tokens), h("td", { class: "num" }, totals[role].output_tokens),
      h("td", { class: "num" }, fmt.number(totals[role].cost_usd, 4)))), { class: "usage" });
}

// Tokens per agent for weight-space runs (agent-N/completion_tokens series).
function tokenSeries(metrics) {
  return metrics.keys.filter((k) => k.endsWith("/completion_tokens"));
}

// scoreKey: the series the server scores this kind of run by (the list's "score").
function charts(scoreKey, metrics) {
  const keys = numericKeys(metrics);
  const steps = metrics.steps;
  const box = h("div", { class: "charts" });
  if (keys.includes(scoreKey)) {
    box.append(h("figure", { class: "chart-main", dataset: { key: scoreKey } },
      lineChart([{ name: scoreKey, xs: steps, ys: metrics.series[scoreKey] }], { title: `Reward (${scoreKey})`, width: 760, height: 280 })));
  }
  const varies = (key) => new Set(metrics.series[key].filter((v) => typeof v === "number")).size > 1;
  for (const key of keys.filter((k) => k !== scoreKey && varies(k)).slice(0, MAX_CHARTS)) {
    box.append(h("figure", { dataset: { key } }, lineChart([{ name: key, xs: steps, ys: metrics.series[key] }], { title: key, width: 370, height: 190 })));
  }
  if (!box.children.length) box.append(h("p", { class: "muted" }, "no metrics yet"));
  return box;
}

function header(detail, reload) {
  const run = detail.run;
  const alias = h("input", { value: run.alias || "", placeholder: "alias", "aria-label": "alias", class: "alias" });
  const tags = h("input", { value: (run.tags || []).join(", "), placeholder: "tags, comma separated", "aria-label": "tags" });
  const save = async () => {
    await api.patch(runPath(run.run_id, "/metadata"), {
      alias: alias.value.trim() || null, tags: tags.value.split(",").map((t) => t.trim()).filter(Boolean),
    });
    reload();
  };
  const record = detail.record || {};
  return h("div", { class: "run-header" },
    h("h1", {}, run.alias || run.run_id, " ", fmt.status(run.status)),
    h("p", { class: "muted" }, `${run.kind} · ${run.steps} metric lines · updated ${fmt.time(run.updated_at)}`,
      record.code ? ` · langmarl ${record.code.langmarl || "?"}${record.code.git ? ` @ ${record.code.git.slice(0, 8)}` : ""}` : ""),
    run.error ? h("p", { class: "error" }, run.error) : null,
    h("div", { class: "toolbar" }, alias, tags, h("button", { onclick: save }, "Save"),
      h("button", { class: `star${run.starred ? " on" : ""}`, onclick: async () => {
        await api.patch(runPath(run.run_id, "/metadata"), { starred: !run.starred }); reload();
      } }, run.starred ? "★ starred" : "☆ star")));
}

export async function renderRun(view, runId) {
  let stop = () => {};
  const live = document.getElementById("live");
  async function load() {
    const [detail, metrics] = await Promise.all([api.get(runPath(runId)), api.get(runPath(runId, "/metrics"))]);
    const chartSlot = h("div", {}, charts(detail.run.score_key, metrics));
    const usage = usageTable(metrics);
    const tokens = tokenSeries(metrics);
    const views = { language: languageSections, reward: rewardSections, weight: weightSections };
    const sections = views[detail.run.view]?.(runId, detail.run.sections || []) ?? [];
    view.replaceChildren(...[
      header(detail, load),
      h("section", { class: "card" }, h("h2", {}, "Curves"), chartSlot),
      usage ? h("section", { class: "card" }, h("h2", {}, "Tokens and cost per role"), usage) : null,
      tokens.length ? h("section", { class: "card" }, h("h2", {}, "Tokens per agent"),
        lineChart(tokens.map((k) => ({ name: k, xs: metrics.steps, ys: metrics.series[k] })), { title: "completion tokens", width: 760 })) : null,
      ...sections,
      section("Config", Promise.resolve(h("pre", { class: "config" }, JSON.stringify(detail.config, null, 2)))),
      section("Events", api.get(runPath(runId, "/events?limit=200")).then((data) => data.events.length
        ? h("ol", { class: "events" }, data.events.slice(-50).map((e) => h("li", {}, `${fmt.time(e.time)} ${e.event} ${JSON.stringify(Object.fromEntries(Object.entries(e).filter(([k]) => !["time", "event", "seq"].includes(k))))}`)))
        : null)),
    ].filter(Boolean));
    stop();
    if (detail.run.status === "running") {
      live.hidden = false;
      stop = follow(runId, (name, data) => {
        if (name === "metrics" || name === "reset") {
          if (name === "reset") { metrics.steps = []; for (const k of metrics.keys) metrics.series[k] = []; return; }
          const line = JSON.parse(data);
          for (const key of Object.keys(line)) if (key !== "step" && !metrics.keys.includes(key)) { metrics.keys.push(key); metrics.series[key] = metrics.steps.map(() => null); }
          metrics.steps.push(line.step);
          for (const key of metrics.keys) metrics.series[key].push(line[key] ?? null);
          chartSlot.replaceChildren(charts(detail.run.score_key, metrics));
        } else if (name === "end") {
          live.hidden = true;
          load();
        }
      });
    } else {
      live.hidden = true;
    }
  }
  try {
    await load();
  } catch (error) {
    view.replaceChildren(errorBox(error));
  }
  return () => { stop(); live.hidden = true; };
}

// One run: header (status, alias, star, tags), reward curve and the space's own series, tokens
// and cost per role, the space's own sections, config and events. Live from the first second:
// the page follows the run's stream whatever its status when it opened (a run not started yet
// reads "unknown" until it starts); metrics lines extend the charts as they land, and any
// status change, event or new line refreshes the rest (at most every REFRESH_MS).

import { api, download, follow, runPath } from "../api.js";
import { lineChart } from "../charts.js";
import { errorBox, fmt, h, section, table } from "../dom.js";
import { languageSections } from "./language.js";
import { rewardSections } from "./reward.js";
import { weightSections } from "./weight.js";

const MAX_CHARTS = 12;
const REFRESH_MS = 2000;
const SKIP = new Set(["step", "iteration", "time", "seconds", "step_seconds"]);
// Numbers that name something (a candidate, a parent, a seed): no curve to draw.
const ID_LIKE = /(^|_)(id|ids|parent|parents|candidate|seed)$/;

// Numeric series of a metrics answer, biggest-first by how many points they have.
export function numericKeys(metrics) {
  return metrics.keys.filter((key) => !SKIP.has(key) && !ID_LIKE.test(key)
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

// Downloads (GET .../export): the metrics as CSV or JSONL, the run's files as a .zip (no
// checkpoints). Fetched with the token, then saved under the server's file name.
const EXPORTS = [["csv", "metrics (CSV)"], ["jsonl", "metrics (JSONL)"], ["zip", "files (.zip)"]];

function downloads(runId) {
  const problem = h("span", { class: "error" });
  const links = EXPORTS.map(([format, label]) => {
    const path = runPath(runId, `/export?format=${format}`);
    return h("a", { href: path, class: "download", dataset: { format }, onclick: (event) => {
      event.preventDefault();
      problem.textContent = "";
      download(path, `${runId}.${format}`).catch((error) => { problem.textContent = error.message; });
    } }, label);
  });
  return h("p", { class: "downloads small" }, "Download: ", links.flatMap((link, i) => (i ? [" · ", link] : [link])), " ", problem);
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
  const lines = `${run.steps} metric line${run.steps === 1 ? "" : "s"}`;
  return h("div", { class: "run-header" },
    h("h1", {}, run.alias || run.run_id, " ", fmt.status(run.status)),
    h("p", { class: "muted", dataset: { lines: run.steps } }, `${run.kind} · ${run.progress || lines} · ${lines} · updated ${fmt.time(run.updated_at)}`,
      record.code ? ` · langmarl ${record.code.langmarl || "?"}${record.code.git ? ` @ ${record.code.git.slice(0, 8)}` : ""}` : ""),
    detail.phase ? h("p", { class: "phase" }, `now: ${detail.phase}`) : null,
    run.error ? h("p", { class: "error" }, run.error) : null,
    h("div", { class: "toolbar" }, alias, tags, h("button", { onclick: save }, "Save"),
      h("button", { class: `star${run.starred ? " on" : ""}`, onclick: async () => {
        await api.patch(runPath(run.run_id, "/metadata"), { starred: !run.starred }); reload();
      } }, run.starred ? "★ starred" : "☆ star")),
    downloads(run.run_id));
}

// An event's fields as "key=value" pairs, numbers to 4 significant digits, iterations
// numbered from 1 as on the rest of the page (the files count them from 0).
function eventText(e) {
  const shown = (k, x) => (k === "iteration" && Number.isInteger(x) ? x + 1
    : typeof x === "number" && !Number.isInteger(x) ? Number(x.toPrecision(4)) : x);
  const value = (k, v) => (typeof v === "object" && v !== null ? JSON.stringify(v, shown) : String(shown(k, v)));
  const fields = Object.entries(e).filter(([k]) => !["time", "event", "seq"].includes(k));
  return `${fmt.time(e.time)} ${e.event}${fields.length ? " · " : ""}${fields.map(([k, v]) => `${k}=${value(k, v)}`).join(" ")}`;
}

function eventsList(runId) {
  return api.get(runPath(runId, "/events?limit=50&last=true")).then((data) => (data.events.length
    ? h("ol", { class: "events" }, data.events.map((e) => h("li", {}, eventText(e))))
    : null));
}

const VIEWS = { language: languageSections, reward: rewardSections, weight: weightSections };

export async function renderRun(view, runId) {
  const live = document.getElementById("live");
  const slots = { header: h("div"), charts: h("div"), usage: h("div"), sections: h("div"), config: h("div"), events: h("div") };
  let metrics = { steps: [], keys: [], series: {} };
  let scoreKey = null;
  let timer = null;
  let stopped = false;

  function drawCharts() {
    slots.charts.replaceChildren(h("section", { class: "card" }, h("h2", {}, "Curves"), charts(scoreKey, metrics)));
    const usage = usageTable(metrics);
    slots.usage.replaceChildren(...(usage ? [h("section", { class: "card" }, h("h2", {}, "Tokens and cost per role"), usage)] : []));
  }

  async function refresh() {  // everything but the charts, which the stream extends
    timer = null;
    const detail = await api.get(runPath(runId));
    if (stopped) return;
    scoreKey = detail.run.score_key;
    slots.header.replaceChildren(header(detail, refresh));
    slots.sections.replaceChildren(...(VIEWS[detail.run.view]?.(runId, detail.run.sections || [], detail) ?? []));
    slots.config.replaceChildren(section("Config", Promise.resolve(h("pre", { class: "config" }, JSON.stringify(detail.config, null, 2)))));
    slots.events.replaceChildren(section("Events", eventsList(runId)));
  }
  const soon = () => { timer ??= setTimeout(() => refresh().catch(() => {}), REFRESH_MS); };

  function addLine(line) {
    if (metrics.steps.length && line.step <= metrics.steps[metrics.steps.length - 1]) return;  // replayed
    for (const key of Object.keys(line)) {
      if (key !== "step" && !metrics.keys.includes(key)) { metrics.keys.push(key); metrics.series[key] = metrics.steps.map(() => null); }
    }
    metrics.steps.push(line.step);
    for (const key of metrics.keys) metrics.series[key].push(line[key] ?? null);
  }

  try {
    [metrics] = await Promise.all([api.get(runPath(runId, "/metrics")), refresh()]);
  } catch (error) {
    const missing = error.status === 404;
    view.replaceChildren(missing
      ? h("div", { class: "error-box", role: "alert" }, `No run ${runId} here. `, h("a", { href: "#/" }, "Back to the runs"))
      : errorBox(error));
    return () => {};
  }
  drawCharts();
  view.replaceChildren(slots.header, slots.charts, slots.usage, slots.sections, slots.config, slots.events);
  const stopStream = follow(runId, (name, data) => {
    if (name === "status") {
      live.hidden = JSON.parse(data).status !== "running";
      soon();
    } else if (name === "metrics") {
      addLine(JSON.parse(data));
      drawCharts();
      soon();
    } else if (name === "reset") {
      if (JSON.parse(data).stream === "metrics") metrics = { steps: [], keys: [], series: {} };
    } else if (name === "event" || name === "pool" || name === "validation") {
      soon();
    } else if (name === "end") {
      live.hidden = true;
      clearTimeout(timer);
      refresh().catch(() => {});
    }
  }, { replay: true });
  return () => { stopped = true; stopStream(); clearTimeout(timer); live.hidden = true; };
}

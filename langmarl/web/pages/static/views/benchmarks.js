// Benchmarks (a Prompt2Policy session per case): the list with status, progress and summary,
// a form to start one (a p2p_bench job), and one benchmark case by case, refreshed while it
// runs, with Stop and Delete.

import { api } from "../api.js";
import { errorBox, fmt, h, table } from "../dom.js";

const REFRESH_MS = 2000;
const EXAMPLE = "env_id,instruction,category,difficulty\nInvertedPendulum-v5,keep the pole balanced,balance,easy\n";
const live = (bench) => bench.status === "queued" || bench.status === "running";
const link = (bench) => `#/benchmark/${encodeURIComponent(bench.bench_id)}`;
const progress = (bench) => (bench.cases_total == null
  ? (bench.cases_done ? `${bench.cases_done} cases done` : "no case run yet")
  : `${bench.cases_done}/${bench.cases_total} cases`);
const percent = (v) => (typeof v === "number" ? `${Math.round(v * 100)}%` : "—");

// Stop and Delete, each answering with a refresh (or an error in `message`).
function actions(bench, message, after) {
  const act = (label, call, attrs = {}) => h("button", { ...attrs, onclick: async () => {
    try { await call(); after(label); } catch (error) { message.replaceChildren(errorBox(error)); }
  } }, label);
  const path = `/api/benchmarks/${encodeURIComponent(bench.bench_id)}`;
  return h("span", { class: "bench-actions" },
    live(bench) ? act(bench.stop_requested ? "Stopping…" : "Stop", () => api.post(`${path}/stop`),
      { class: "link danger", disabled: bench.stop_requested }) : null,
    live(bench) ? null : act("Delete", async () => {
      if (confirm(`Move ${bench.bench_id} and its sessions to the trash?`)) await api.del(path);
    }, { class: "link danger" }));
}

function startForm(message) {
  const cases = h("textarea", { name: "cases", rows: 6, cols: 72, required: true, "aria-label": "cases (CSV)" }, EXAMPLE);
  const number = (name, placeholder, attrs = {}) => h("input", { name, type: "number", min: 1, placeholder, size: 8, "aria-label": name, ...attrs });
  const iterations = number("iterations", "iterations", { value: 2 });
  const timesteps = number("timesteps", "timesteps", { value: 2048 });
  const limit = number("limit", "first N cases");
  const cpus = number("cpus", "cpus", { value: 1, size: 4 });
  const llm = h("input", { name: "llm", placeholder: "LLM preset (default: local)", size: 24, "aria-label": "llm" });
  const submit = async (event) => {
    event.preventDefault();
    try {
      const body = { cases_csv: cases.value, resources: { cpus: Number(cpus.value) || 1 },
        session: { max_iterations: Number(iterations.value) || undefined, total_timesteps: Number(timesteps.value) || undefined } };
      if (limit.value !== "") body.limit = Number(limit.value);
      if (llm.value.trim()) body.llm = llm.value.trim();
      const bench = await api.post("/api/benchmarks", body);
      location.hash = link(bench);
    } catch (error) {
      message.replaceChildren(errorBox(error));
    }
  };
  return h("form", { class: "card bench-form", onsubmit: submit },
    h("h2", {}, "Start a benchmark"),
    h("p", { class: "muted small" }, "One session per row; it runs as a job (see Jobs)."),
    cases,
    h("div", { class: "toolbar" }, h("label", {}, "iterations ", iterations), h("label", {}, "timesteps ", timesteps),
      h("label", {}, "limit ", limit), h("label", {}, "cpus ", cpus), llm),
    h("button", { type: "submit" }, "Start"));
}

export function renderBenchmarks(view) {
  const list = h("div", {});
  const message = h("div", {});
  async function load() {
    try {
      const benches = await api.get("/api/benchmarks");
      list.replaceChildren(benches.length ? table(["benchmark", "status", "progress", "success", "mean score", "updated", ""],
        benches.map((bench) => h("tr", { dataset: { bench: bench.bench_id, status: bench.status } },
          h("td", {}, h("a", { href: link(bench) }, bench.bench_id)), h("td", {}, fmt.status(bench.status)),
          h("td", { class: "num" }, progress(bench)), h("td", { class: "num" }, percent(bench.summary?.success_rate)),
          h("td", { class: "num" }, fmt.number(bench.summary?.mean_score)), h("td", { class: "small" }, fmt.time(bench.updated_at)),
          h("td", {}, actions(bench, message, load)))), { class: "benchmarks" })
        : h("p", { class: "muted" }, "no benchmarks yet"));
    } catch (error) {
      list.replaceChildren(errorBox(error));
    }
  }
  view.replaceChildren(h("h1", {}, "Benchmarks"), message, startForm(message),
    h("section", { class: "card" }, h("h2", {}, "Benchmarks"), list));
  load();
  const timer = setInterval(load, REFRESH_MS);
  return () => clearInterval(timer);
}

function caseRow(row) {
  const c = row.case || {};
  return h("tr", { dataset: { case: row.index, status: row.status || "" } },
    h("td", { class: "num" }, row.index), h("td", {}, c.env_id), h("td", {}, c.instruction),
    h("td", {}, c.category || ""), h("td", {}, c.difficulty || ""), h("td", {}, fmt.status(row.status || "starting")),
    h("td", { class: "num" }, fmt.number(row.best_score)),
    h("td", {}, row.run_id ? h("a", { href: `#/run/${encodeURIComponent(row.run_id)}`, class: "session-link" }, "session") : "—",
      row.progress && row.status !== "pending" ? h("span", { class: "muted small" }, ` ${row.progress}`) : null));
}

export async function renderBenchmark(view, benchId) {
  const message = h("div", {});
  const body = h("div", {});
  let timer = null;
  let stopped = false;
  async function load() {
    timer = null;
    let bench;
    try {
      bench = await api.get(`/api/benchmarks/${encodeURIComponent(benchId)}`);
    } catch (error) {
      body.replaceChildren(errorBox(error));
      return;
    }
    const groups = Object.entries(bench.summary || {});
    body.replaceChildren(
      h("div", { class: "run-header" },
        h("h1", {}, bench.bench_id, " ", fmt.status(bench.status)),
        h("p", { class: "muted" }, `${progress(bench)} · updated ${fmt.time(bench.updated_at)}`,
          bench.run_id ? [" · ", h("a", { href: `#/run/${encodeURIComponent(bench.run_id)}` }, "its run")] : null,
          bench.job_id ? ` · job ${bench.job_id}` : null),
        bench.error ? h("p", { class: "error" }, bench.error) : null,
        h("div", { class: "toolbar" }, actions(bench, message, (label) => {
          if (label === "Delete") location.hash = "#/benchmarks"; else load();
        }))),
      h("section", { class: "card" }, h("h2", {}, "Cases"), bench.cases.length
        ? table(["#", "env", "instruction", "category", "difficulty", "status", "best score", "session"], bench.cases.map(caseRow), { class: "cases" })
        : h("p", { class: "muted" }, "no case started yet")),
      groups.length ? h("section", { class: "card" }, h("h2", {}, "Summary"),
        table(["group", "cases", "success rate", "mean score"], groups.map(([name, g]) => h("tr", {},
          h("td", {}, name), h("td", { class: "num" }, g.cases), h("td", { class: "num" }, percent(g.success_rate)),
          h("td", { class: "num" }, fmt.number(g.mean_score)))), { class: "groups" })) : "");
    if (live(bench) && !stopped) timer = setTimeout(load, REFRESH_MS);
  }
  view.replaceChildren(h("p", { class: "muted" }, h("a", { href: "#/benchmarks" }, "← Benchmarks")), message, body);
  await load();
  return () => { stopped = true; clearTimeout(timer); };
}

// The router: #/ runs, #/run/<id>, #/compare?ids=a,b[&keys=…&smooth=…], #/jobs, #/benchmarks, #/benchmark/<id>,
// #/monitor, #/trash.

import { errorBox } from "./dom.js";
import { renderRuns } from "./views/runs.js";
import { renderRun } from "./views/run.js";
import { renderCompare } from "./views/compare.js";
import { renderJobs } from "./views/jobs.js";
import { renderBenchmark, renderBenchmarks } from "./views/benchmarks.js";
import { renderMonitor } from "./views/monitor.js";
import { renderTrash } from "./views/trash.js";

let cleanup = () => {};

function parse() {
  const [path, query = ""] = location.hash.replace(/^#/, "").split("?");
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  return { parts, params: new URLSearchParams(query) };
}

async function route() {
  cleanup();
  cleanup = () => {};
  const view = document.getElementById("view");
  const { parts, params } = parse();
  const name = parts[0] || "runs";
  const nav = name === "benchmark" ? "benchmarks" : name;
  document.querySelectorAll("[data-nav]").forEach((a) => a.classList.toggle("active", a.dataset.nav === nav));
  const views = {
    runs: () => renderRuns(view),
    run: () => renderRun(view, parts[1]),
    compare: () => renderCompare(view, (params.get("ids") || "").split(",").filter(Boolean), params),
    jobs: () => renderJobs(view),
    benchmarks: () => renderBenchmarks(view),
    benchmark: () => renderBenchmark(view, parts[1]),
    monitor: () => renderMonitor(view),
    trash: () => renderTrash(view),
  };
  try {
    const stop = await (views[name] || views.runs)();
    if (typeof stop === "function") cleanup = stop;
  } catch (error) {
    view.replaceChildren(errorBox(error));
  }
}

window.addEventListener("hashchange", route);
route();

// Jobs: start a run as a job (validated by the server before anything runs), watch its
// state, read its log, cancel it (the run ends `cancelled`).

import { api, runKinds } from "../api.js";
import { errorBox, fmt, h, table } from "../dom.js";

const REFRESH_MS = 2000;

// "a.b=1" lines -> {"a.b": 1} (JSON values where they parse, else strings).
export function parseOverrides(text) {
  const out = {};
  for (const line of text.split("\n").map((l) => l.trim()).filter(Boolean)) {
    const cut = line.indexOf("=");
    if (cut < 1) throw new Error(`override ${JSON.stringify(line)} is not key=value`);
    const raw = line.slice(cut + 1).trim();
    try { out[line.slice(0, cut).trim()] = JSON.parse(raw); } catch { out[line.slice(0, cut).trim()] = raw; }
  }
  return out;
}

function form(onSubmitted) {
  const kind = h("select", { name: "kind", "aria-label": "job kind" });
  runKinds().then((kinds) => kind.append(...kinds.filter((k) => k.jobs).map((k) => h("option", { value: k.name }, k.name))))
    .catch((error) => message.replaceChildren(errorBox(error)));
  const config = h("textarea", { name: "config", rows: 8, cols: 64, required: true, "aria-label": "config",
    placeholder: "the config as JSON (the contents of a file under configs/)" });
  const overrides = h("textarea", { name: "overrides", rows: 3, cols: 48, placeholder: "overrides, one key=value per line" });
  const seed = h("input", { name: "seed", type: "number", placeholder: "seed", size: 6 });
  const cpus = h("input", { name: "cpus", type: "number", min: 1, value: 1, size: 4, "aria-label": "cpus" });
  const intent = h("input", { name: "intent", placeholder: "p2p only: the behaviour wanted", size: 48 });
  const message = h("div", {});
  const submit = async (event) => {
    event.preventDefault();
    try {
      let parsed;
      try { parsed = JSON.parse(config.value); } catch (error) { throw new Error(`the config is not JSON: ${error.message}`); }
      const spec = { kind: kind.value, config: parsed, overrides: parseOverrides(overrides.value),
        resources: { cpus: Number(cpus.value) || 1 } };
      if (seed.value !== "") spec.seed = Number(seed.value);
      if (intent.value.trim()) spec.intent = intent.value.trim();
      const job = await api.post("/api/jobs", spec);
      message.replaceChildren(h("p", { class: "ok" }, `submitted ${job.job_id}`));
      onSubmitted();
    } catch (error) {
      message.replaceChildren(errorBox(error));
    }
  };
  return h("form", { class: "card job-form", onsubmit: submit },
    h("h2", {}, "Start a job"),
    h("div", { class: "toolbar" }, kind, seed, h("label", {}, "cpus ", cpus), intent),
    h("div", { class: "toolbar" }, config, overrides),
    h("button", { type: "submit" }, "Submit"), message);
}

// The machine under the jobs: load per core, free memory and disk, GPUs (GET /api/resources/status).
async function resourceLine(slot) {
  const r = await api.get("/api/resources/status");
  const gib = (bytes) => (bytes == null ? "?" : `${(bytes / 2 ** 30).toFixed(1)} GiB`);
  const gpus = r.gpus.map((g) => `${g.name} ${g.utilization_pct}% · ${g.memory_used_mib}/${g.memory_total_mib} MiB`);
  slot.replaceChildren(h("p", { class: "muted", id: "resources" },
    `load ${r.load_average.map((v) => v.toFixed(2)).join(" / ")} on ${r.cpus_usable} of ${r.cpus} cores · `
    + `memory ${gib(r.memory.available)} free of ${gib(r.memory.total)} · disk ${gib(r.disk.free)} free · `
    + (gpus.length ? `GPUs: ${gpus.join("; ")}` : "no GPU")));
}

export function renderJobs(view) {
  const resources = h("div", {});
  const list = h("div", {});
  const logs = h("div", {});
  async function showLogs(job) {
    const data = await api.get(`/api/jobs/${encodeURIComponent(job.job_id)}/logs`);
    logs.replaceChildren(h("section", { class: "card" }, h("h2", {}, `Log of ${job.job_id}`),
      h("pre", { class: "log" }, typeof data === "string" ? data : data.logs ?? JSON.stringify(data))));
  }
  async function load() {
    try {
      const data = await api.get("/api/jobs");
      const jobs = Array.isArray(data) ? data : data.jobs;
      list.replaceChildren(jobs.length ? table(["job", "kind", "state", "submitted", "run", ""],
        jobs.map((job) => h("tr", { dataset: { job: job.job_id, state: job.state } },
          h("td", {}, job.job_id), h("td", {}, job.spec?.kind ?? ""), h("td", {}, fmt.status(job.state)),
          h("td", { class: "small" }, fmt.time(job.submitted_at)),
          h("td", {}, job.run_id ? h("a", { href: `#/run/${encodeURIComponent(job.run_id)}` }, "run") : "—"),
          h("td", {},
            h("button", { class: "link", onclick: () => showLogs(job) }, "log"),
            job.state === "queued" || job.state === "running"
              ? h("button", { class: "link danger", onclick: async () => {
                await api.post(`/api/jobs/${encodeURIComponent(job.job_id)}/cancel`); load();
              } }, "cancel") : null))), { class: "jobs" }) : h("p", { class: "muted" }, "no jobs yet"));
    } catch (error) {
      list.replaceChildren(errorBox(error));
    }
  }
  view.replaceChildren(h("h1", {}, "Jobs"), resources, form(load), h("section", { class: "card" }, h("h2", {}, "Jobs"), list), logs);
  const refresh = () => { load(); resourceLine(resources).catch((error) => resources.replaceChildren(errorBox(error))); };
  refresh();
  const timer = setInterval(refresh, REFRESH_MS);
  return () => clearInterval(timer);
}

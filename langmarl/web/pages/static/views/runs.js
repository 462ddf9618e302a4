// The runs list: status, kind, steps, score and a sparkline per run; filters, star, compare,
// delete. Refreshed every few seconds while the page is open.

import { api, runKinds } from "../api.js";
import { sparkline } from "../charts.js";
import { errorBox, fmt, h, table } from "../dom.js";

const STATUSES = ["", "running", "completed", "failed", "stopped", "cancelled"];
const REFRESH_MS = 3000;

export function renderRuns(view) {
  const filters = { kind: "", status: "", text: "" };
  const selected = new Set();
  const body = h("div", {});
  const compare = h("button", { id: "compare-selected", disabled: true, onclick: () => {
    location.hash = `#/compare?ids=${[...selected].map(encodeURIComponent).join(",")}`;
  } }, "Compare selected");
  const option = (name) => (o) => h("option", { value: o }, o || `any ${name}`);
  const select = (name, options) => h("select", { "aria-label": name, onchange: (e) => { filters[name] = e.target.value; load(); } },
    options.map(option(name)));
  const kindSelect = select("kind", [""]);
  runKinds().then((kinds) => kindSelect.append(...kinds.map((k) => option("kind")(k.name)))).catch(() => {});
  view.replaceChildren(
    h("div", { class: "toolbar" },
      h("h1", {}, "Runs"),
      kindSelect, select("status", STATUSES),
      h("input", { type: "search", placeholder: "search id, alias, tag", oninput: (e) => { filters.text = e.target.value; load(); } }),
      compare),
    body);

  function row(run) {
    const check = h("input", { type: "checkbox", "aria-label": `select ${run.run_id}`, checked: selected.has(run.run_id),
      onchange: (e) => { e.target.checked ? selected.add(run.run_id) : selected.delete(run.run_id); compare.disabled = selected.size < 2; } });
    const star = h("button", { class: `star${run.starred ? " on" : ""}`, title: "star", onclick: async () => {
      await api.patch(`/api/runs/${encodeURIComponent(run.run_id)}/metadata`, { starred: !run.starred });
      load();
    } }, run.starred ? "★" : "☆");
    const remove = h("button", { class: "link danger", title: "move to trash", onclick: async () => {
      try { await api.del(`/api/runs/${encodeURIComponent(run.run_id)}`); load(); } catch (error) { alert(error.message); }
    } }, "delete");
    return h("tr", { dataset: { run: run.run_id } },
      h("td", {}, check), h("td", {}, star),
      h("td", {}, h("a", { href: `#/run/${encodeURIComponent(run.run_id)}`, class: "run-link" }, run.alias || run.run_id),
        run.alias ? h("div", { class: "muted small" }, run.run_id) : null,
        (run.tags || []).map((t) => h("span", { class: "tag" }, t))),
      h("td", {}, run.kind), h("td", {}, fmt.status(run.status)),
      h("td", { class: "num" }, run.steps),
      h("td", { class: "num", dataset: { scoreLabel: run.score_label || "" } }, fmt.number(run.score),
        run.score != null && run.score_label ? h("div", { class: "muted small" }, run.score_label) : null),
      h("td", {}, sparkline(run.sparkline || [])), h("td", { class: "small" }, fmt.time(run.updated_at)),
      h("td", {}, remove));
  }

  async function load() {
    const query = new URLSearchParams(Object.entries(filters).filter(([, v]) => v));
    try {
      const data = await api.get(`/api/runs?${query}`);
      body.replaceChildren(
        h("p", { class: "muted" }, `${data.total} run${data.total === 1 ? "" : "s"}`),
        table(["", "", "run", "kind", "status", "steps", "score", "curve", "updated", ""], data.runs.map(row), { class: "runs" }));
    } catch (error) {
      body.replaceChildren(errorBox(error));
    }
  }
  load();
  const timer = setInterval(load, REFRESH_MS);
  return () => clearInterval(timer);
}

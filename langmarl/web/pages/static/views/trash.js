// The trash: runs deleted from the list, to restore or purge for good.

import { api } from "../api.js";
import { errorBox, fmt, h, table } from "../dom.js";

export function renderTrash(view) {
  const body = h("div", {});
  async function load() {
    try {
      const data = await api.get("/api/trash");
      const items = Array.isArray(data) ? data : data.items ?? data.trash ?? [];
      body.replaceChildren(items.length ? table(["run", "kind", "deleted", ""], items.map((item) => h("tr", { dataset: { trash: item.trash_id } },
        h("td", {}, item.run_id ?? item.trash_id), h("td", {}, item.kind ?? ""), h("td", { class: "small" }, fmt.time(item.deleted_at)),
        h("td", {},
          h("button", { class: "link", onclick: async () => { await api.post(`/api/trash/${encodeURIComponent(item.trash_id)}/restore`); load(); } }, "restore"),
          h("button", { class: "link danger", onclick: async () => {
            if (confirm(`Delete ${item.run_id ?? item.trash_id} for good?`)) { await api.del(`/api/trash/${encodeURIComponent(item.trash_id)}`); load(); }
          } }, "purge")))), { class: "trash" }) : h("p", { class: "muted" }, "the trash is empty"));
    } catch (error) {
      body.replaceChildren(errorBox(error));
    }
  }
  view.replaceChildren(h("h1", {}, "Trash"), body);
  load();
}

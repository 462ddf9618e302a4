// h("div", {class: "x", onclick: fn}, child, "text", [more]) -> an element; and small helpers.

export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export const fmt = {
  number: (v, digits = 3) => (typeof v === "number" && Number.isFinite(v) ? String(Number(v.toFixed(digits))) : "—"),
  time: (seconds) => (seconds ? new Date(seconds * 1000).toLocaleString() : "—"),
  status: (status) => h("span", { class: `status status-${status}` }, status),
};

export function errorBox(error) {
  return h("div", { class: "error-box", role: "alert" }, String(error.message || error));
}

// A titled section; `body` may be an element or a promise of one (rendered when it lands).
export function section(title, body, attrs = {}) {
  const box = h("section", { class: "card", ...attrs }, h("h2", {}, title));
  const slot = h("div", {}, h("p", { class: "muted" }, "Loading…"));
  box.append(slot);
  Promise.resolve(body).then(
    (content) => slot.replaceChildren(content ?? h("p", { class: "muted" }, "nothing recorded")),
    (error) => slot.replaceChildren(errorBox(error)),
  );
  return box;
}

export function table(headers, rows, attrs = {}) {
  return h("table", attrs,
    h("thead", {}, h("tr", {}, headers.map((name) => h("th", {}, name)))),
    h("tbody", {}, rows));
}

// A unified diff as colored lines.
export function diffBlock(text) {
  if (!text) return h("p", { class: "muted" }, "unchanged");
  return h("pre", { class: "diff" }, text.split("\n").map((line) => {
    const kind = line.startsWith("+++") || line.startsWith("---") ? "meta"
      : line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : line.startsWith("@@") ? "meta" : "ctx";
    return h("span", { class: `diff-${kind}` }, `${line}\n`);
  }));
}

// MathML markup from the server (allow-listed there: langmarl/web/latex.py) as a <math>
// element, parsed as XML so nothing in it is read as HTML; null if it does not parse.
export function mathElement(markup) {
  if (!markup) return null;
  const doc = new DOMParser().parseFromString(markup, "application/xml");
  const root = doc.documentElement;
  if (doc.getElementsByTagName("parsererror").length || root.localName !== "math") return null;
  return document.importNode(root, true);
}

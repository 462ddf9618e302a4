// A game episode the environment spells out in its reward details (the reference game's
// `reward_details`: the items in the listener's order, the target's label, the word the
// listener heard and the label it picked), as labelled lines a reader can check at a glance.

import { h } from "../dom.js";

// The episode's lines, or null when the details are not a game of items and a pick.
export function gameLines(details) {
  if (!details || !Array.isArray(details.items) || !("pick" in details)) return null;
  const items = details.items.map((item, i) => {
    const label = String.fromCharCode(65 + i);
    const marks = [label === details.target ? "target" : "", label === details.pick ? "picked" : ""];
    const marked = marks.filter(Boolean).join(", ");
    return `${label}: ${item}${marked ? ` (${marked})` : ""}`;
  });
  const heard = details.heard ? `"${details.heard}"` : "nothing";
  return { message: `heard ${heard} · picked ${details.pick ?? "no label"} · target ${details.target}`, items };
}

export function gameView(details) {
  const lines = gameLines(details);
  if (!lines) return null;
  return h("div", { class: "game" }, h("p", {}, lines.message),
    h("ul", { class: "items" }, lines.items.map((line) => h("li", {}, line))));
}

// Every call to the API goes through here: the Bearer token, JSON errors, the live stream.

const TOKEN_KEY = "langmarl-dashboard-token";

export class ApiError extends Error {
  constructor(status, error, fix) {
    super(fix ? `${error} (${fix})` : error);
    this.status = status;
    this.fix = fix;
  }
}

function headers(extra = {}) {
  const token = sessionStorage.getItem(TOKEN_KEY);
  return token ? { ...extra, Authorization: `Bearer ${token}` } : extra;
}

// Ask for the token and resolve once one is typed (the caller retries with it). Requests
// refused at the same time (a page loads several at once) all wait for the one dialog.
let asking = null;
function askToken(message) {
  const dialog = document.getElementById("token-dialog");
  document.getElementById("token-error").textContent = message || "";
  asking ??= new Promise((resolve) => {
    document.getElementById("token-form").onsubmit = () => {
      sessionStorage.setItem(TOKEN_KEY, document.getElementById("token-input").value.trim());
      asking = null;
      resolve();
    };
    if (!dialog.open) dialog.showModal();
  });
  return asking;
}

async function request(method, path, body, retried = 0) {
  const init = { method, headers: headers(body ? { "Content-Type": "application/json" } : {}) };
  if (body !== undefined) init.body = JSON.stringify(body);
  const response = await fetch(path, init);
  if ((response.status === 401 || response.status === 403) && retried < 3) {
    const problem = await response.json().catch(() => ({}));
    await askToken(response.status === 403 ? problem.error : "");
    return request(method, path, body, retried + 1);
  }
  if (!response.ok) {
    const problem = await response.json().catch(() => ({}));
    const detail = problem.error || problem.detail || response.statusText;
    throw new ApiError(response.status, typeof detail === "string" ? detail : JSON.stringify(detail), problem.fix);
  }
  const type = response.headers.get("content-type") || "";
  return type.includes("json") ? response.json() : response.text();
}

export const api = {
  get: (path) => request("GET", path),
  post: (path, body) => request("POST", path, body ?? {}),
  patch: (path, body) => request("PATCH", path, body),
  del: (path) => request("DELETE", path),
};

// A run file as an object URL (videos, images): fetched with the token, which <video src>
// could not send.
export async function fileUrl(path) {
  const response = await fetch(path, { headers: headers() });
  if (!response.ok) throw new ApiError(response.status, `could not load ${path}`);
  return URL.createObjectURL(await response.blob());
}

// Save what `path` answers as a file (a run's export), fetched with the token, which a plain
// <a href download> could not send; the name is the one the server's Content-Disposition gives.
export async function download(path, fallbackName) {
  const response = await fetch(path, { headers: headers() });
  if (!response.ok) {
    const problem = await response.json().catch(() => ({}));
    throw new ApiError(response.status, problem.error || `could not download ${path}`, problem.fix);
  }
  const disposition = response.headers.get("content-disposition") || "";
  const name = (disposition.match(/filename="([^"]+)"/) || [])[1] || fallbackName;
  const url = URL.createObjectURL(await response.blob());
  const link = Object.assign(document.createElement("a"), { href: url, download: name });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

// Follow a run's server-sent events; onEvent(name, data) per event. Returns a stop function.
// fetch (not EventSource) so that the Authorization header goes with it.
// replay: the lines already written come first (the caller drops those it has).
export function follow(runId, onEvent, { replay = false } = {}) {
  const controller = new AbortController();
  (async () => {
    const response = await fetch(`/api/runs/${encodeURIComponent(runId)}/stream${replay ? "?replay=true" : ""}`, {
      headers: headers(), signal: controller.signal,
    });
    if (!response.ok || !response.body) return;
    await readEvents(response, onEvent);
  })().catch((error) => {
    if (error.name !== "AbortError") console.warn("stream ended:", error);
  });
  return () => controller.abort();
}

// The server-sent events of a response body, onEvent(name, data) each; resolves at its end.
async function readEvents(response, onEvent) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const frame = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let name = "message";
      const data = [];
      for (const line of frame.split("\n")) {
        if (line.startsWith("event:")) name = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
      }
      if (data.length) onEvent(name, data.join("\n"));
    }
  }
}

// POST to a route that answers with server-sent events (POST /api/runs/{id}/analyze);
// resolves when they end, throws ApiError for an error status.
export async function postEvents(path, onEvent) {
  const response = await fetch(path, { method: "POST", headers: headers({ "Content-Type": "application/json" }), body: "{}" });
  if (!response.ok || !response.body) {
    const problem = await response.json().catch(() => ({}));
    throw new ApiError(response.status, problem.error || response.statusText, problem.fix);
  }
  await readEvents(response, onEvent);
}

export const runPath = (runId, rest = "") => `/api/runs/${encodeURIComponent(runId)}${rest}`;

// The registered kinds of run (GET /api/kinds: view, unit, score key, jobs), fetched once.
let kindsAnswer = null;
export function runKinds() {
  kindsAnswer ??= api.get("/api/kinds").catch((error) => { kindsAnswer = null; throw error; });
  return kindsAnswer;
}

// The page's small tools: elements by id, building elements, and talking to dsh.
// Text goes in only as textContent or attributes, never as HTML; every text shown comes
// already sanitised and worded from the server (each event's `shown`).

export const $ = (id) => document.getElementById(id);

export function meta(name) {
  const found = document.querySelector(`meta[name="${name}"]`);
  return found ? found.getAttribute("content") : "";
}

export const CSRF = meta("dsh-csrf");
export const MODE = meta("dsh-mode");
// the document event a 401 raises: its detail is the server's line
export const SIGNED_OUT = "dsh-signed-out";

export function el(tag, props, children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "text") node.textContent = String(value);
    else if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key in node && typeof value !== "string") node[key] = value;
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children || []) if (child) node.append(child);
  return node;
}

export async function post(path, body) {
  const response = await fetch(path, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-DSH-CSRF": CSRF },
    body: JSON.stringify(body),
    credentials: "same-origin",
  });
  const text = await response.text().catch(() => "");
  if (response.status === 401) {
    // the session is gone: the page says so (main.js) rather than "could not reach dsh"
    document.dispatchEvent(new CustomEvent(SIGNED_OUT, { detail: text.trim() }));
    throw new Error(text.trim().replace(/^dsh: /, ""));
  }
  let data = null;
  try {
    data = JSON.parse(text);
  } catch (_) {
    data = null;
  }
  if (!response.ok && !(data && data.type === "response/ack")) {
    const detail = data && data.shown && data.shown.error ? data.shown.error : `HTTP ${response.status}`;
    throw new Error(detail);
  }
  return data;
}

export async function respond(frame) {
  // one frame to /api/respond: dsh's ack, or why dsh could not be reached
  try {
    return { ack: await post("/api/respond", frame), failure: null };
  } catch (error) {
    return { ack: null, failure: `Could not reach dsh: ${error.message}` };
  }
}

export function refusal(ack, failure) {
  // the server words a refusal (ack.shown.error); a failure to reach it is the page's own
  if (!ack) return failure;
  return ack.shown && ack.shown.error ? ack.shown.error : "Not accepted.";
}

export function follow() {
  window.scrollTo({ top: document.body.scrollHeight });
}

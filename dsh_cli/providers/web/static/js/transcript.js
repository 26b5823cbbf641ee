// The transcript: messages, streamed text and one line per tool call, as the server words them.

import { $, el, follow } from "./dom.js";
import { append, setWorking } from "./screen.js";

let streaming = null; // {reasoning, text} elements of the assistant message being streamed
const toolLines = new Map();

const shown = (event) => event.shown || {};

export function clearTranscript() {
  $("transcript").replaceChildren();
  streaming = null;
  toolLines.clear();
}

function stream() {
  if (!streaming) {
    const reasoning = el("div", { class: "reasoning", hidden: true });
    const text = el("div", { class: "body" });
    append(el("div", { class: "msg assistant" }, [el("span", { class: "who", text: "dsh" }), reasoning, text]));
    streaming = { reasoning, text };
  }
  return streaming;
}

function endStream() {
  streaming = null;
}

function finishMessage(content) {
  if (streaming) {
    if (content) streaming.text.textContent = content;
    if (!streaming.text.textContent && streaming.reasoning.hidden) streaming.text.parentElement.remove();
  } else if (content) {
    stream().text.textContent = content;
  }
  endStream();
}

function toolStarted(event) {
  const words = shown(event);
  const state = el("span", { class: "state", text: "running" });
  const args = el("span", { class: "args", text: words.args || "" });
  const summary = el("summary", {}, [el("span", { class: "name", text: words.name || "" }), args, state]);
  const body = el("pre", { class: "detail", text: words.detail || "" });
  const line = el("details", { class: "tool", "data-call": event.call_id }, [summary, body]);
  toolLines.set(event.call_id, { line, state, body, args });
  append(line);
}

function toolResult(event) {
  const words = shown(event);
  let entry = toolLines.get(event.call_id);
  if (!entry) {
    toolStarted({ call_id: event.call_id, shown: { name: words.name || "" } });
    entry = toolLines.get(event.call_id);
  }
  entry.line.classList.add(event.error ? "failed" : "done");
  entry.state.textContent = words.state || "";
  entry.body.textContent = `${entry.body.textContent}\n→ ${words.content || ""}`.trim();
  if (words.args) entry.args.textContent = words.args;
}

// what each transcript event does; false for an event that is not the transcript's
export function transcriptEvent(event) {
  const words = shown(event);
  switch (event.type) {
    case "session/started":
      $("session").textContent = words.title || "";
      return true;
    case "user/message":
      endStream();
      append(el("div", { class: "msg user" }, [
        el("span", { class: "who", text: "you" }), el("div", { class: "body", text: words.content || "" }),
      ]));
      setWorking(true);
      return true;
    case "assistant/reasoning":
      stream().reasoning.hidden = false;
      stream().reasoning.textContent += words.text || "";
      follow();
      return true;
    case "assistant/delta":
      stream().text.textContent += words.text || "";
      follow();
      return true;
    case "assistant/message":
      finishMessage(words.content || "");
      return true;
    case "tool/started":
      endStream();
      toolStarted(event);
      return true;
    case "tool/result":
      toolResult(event);
      return true;
    case "turn/completed":
      endStream();
      setWorking(false);
      return true;
    case "error":
      append(el("div", { class: "msg error", role: "alert", text: words.text || "" }));
      setWorking(false);
      return true;
    default:
      return false;
  }
}

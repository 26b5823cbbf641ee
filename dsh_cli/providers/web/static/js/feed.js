// The event feed: one EventSource; a (re)connect replays what is pending, then live events.

import { state } from "./state.js";
import { closeView, holdAgain, hostClosed, refreshGreeting, refreshStatus, showNext, signedOut } from "./screen.js";
import { clearTranscript, transcriptEvent } from "./transcript.js";
import { batchRequested, batchResolved } from "./question.js";
import { permissionRequested, permissionResolved } from "./permission.js";
import { inboxList } from "./inbox.js";

const TYPES = [
  "session/started", "user/message", "assistant/delta", "assistant/reasoning",
  "assistant/message", "tool/started", "tool/result", "turn/completed",
  "question/requested", "question/resolved", "response/ack", "error", "replay/done",
  "host/closed", "permission/requested", "permission/resolved", "inbox/list",
];
// after a refused stream, the waits before the next try (the last repeats)
const RETRY_MS = [1000, 2000, 5000, 10000, 30000];
let refusals = 0;

function replayDone(event) {
  state.connection = event.connection || null;
  holdAgain();
  // anything settled while the page was away is dropped
  for (const table of [state.batches, state.permissions]) {
    for (const rpcId of Array.from(table.keys())) if (!event.pending.includes(rpcId)) table.delete(rpcId);
  }
  if (state.view && !state.batches.has(state.view.batch.rpc_id)) closeView();
  if (state.asking && !state.permissions.has(state.asking.request.rpc_id)) closeView();
  showNext();
}

function handle(event) {
  if (transcriptEvent(event)) return;
  switch (event.type) {
    case "question/requested": batchRequested(event); break;
    case "question/resolved": batchResolved(event); break;
    case "permission/requested": permissionRequested(event); break;
    case "permission/resolved": permissionResolved(event); break;
    case "replay/done": replayDone(event); break;
    case "host/closed": hostClosed(); break;
    case "inbox/list": inboxList(event, () => { showNext(); refreshStatus(); }); break;
    default: break;
  }
}

async function refused() {
  // the stream's answer is not readable here: ask for the page itself, whose refusal says
  // why; a 401 (the session is gone) ends the page, anything else is tried again later
  let response = null;
  try {
    response = await fetch("/", { credentials: "same-origin", cache: "no-store" });
  } catch (_) {
    response = null;
  }
  if (response && response.status === 401) {
    signedOut((await response.text().catch(() => "")).trim());
    return;
  }
  setTimeout(() => { if (!state.finished) connect(); }, RETRY_MS[Math.min(refusals++, RETRY_MS.length - 1)]);
}

export function connect() {
  const source = new EventSource("/api/events");
  state.source = source;
  source.addEventListener("open", () => {
    // a (re)connect replays pending batches and the transcript from the start
    clearTranscript();
    refusals = 0;
    state.offline = false;
    refreshStatus();
    refreshGreeting();
  });
  source.addEventListener("error", () => {
    if (state.finished) return;
    state.offline = true;
    refreshStatus();
    // a dropped stream the browser tries again itself; a refused one (not 200) it never does
    if (source.readyState === EventSource.CLOSED) refused();
  });
  for (const type of TYPES) {
    source.addEventListener(type, (message) => {
      let data;
      try {
        data = JSON.parse(message.data);
      } catch (_) {
        return;
      }
      handle(data);
    });
  }
}

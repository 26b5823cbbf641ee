// Which screen is up: a batch's questions, a permission card, or the message composer.
// The router: a card calls it when it is done (leave, backToInbox), and it opens the next
// through the openers main.js gives it (openScreens), so it imports no card.

import { $, MODE, el, follow, post } from "./dom.js";
import { state } from "./state.js";
import { DESK, renderInbox } from "./inbox.js";

const composer = () => $("composer");
// each puts its entry on screen (state.view or state.asking) and draws it, focused
const openers = { batch: null, permission: null };

export function openScreens({ batch, permission }) {
  openers.batch = batch;
  openers.permission = permission;
}

function first(table) {
  // the page shows the oldest; the desk shows only the entry the human opened
  if (!DESK) return table.size ? table.values().next().value : null;
  return state.opened && table.has(state.opened) ? table.get(state.opened) : null;
}

function hold(type, id) {
  // the desk tells the entry's server, which tells the other desks (taken, or free again)
  post("/api/respond", { type, rpc_id: id, connection: state.connection })
    .catch(() => { /* the list says the rest */ });
}

export function holdAgain() {
  // a new event stream: the desk let the old one's hold go when it ended
  if (DESK && state.opened) hold("desk/opened", state.opened);
}

export function openEntry(id) {
  state.opened = id;
  hold("desk/opened", id);
  closeView();
  showNext();
}

export function backToInbox() {
  if (state.opened) hold("desk/released", state.opened);
  state.opened = null;
  closeView();
  showNext();
  const row = $("inbox").querySelector("button.entry");
  if (row) row.focus();
}

export function showNext() {
  if (state.view || state.asking) return;
  const messageForm = $("message-form");
  const batch = first(state.batches);
  const request = batch ? null : first(state.permissions);
  if (DESK) $("inbox").hidden = true;
  if (batch || request) {
    composer().hidden = false;
    messageForm.hidden = true;
    $("idle").hidden = true;
    if (batch) openers.batch(batch);
    else openers.permission(request);
    refreshStatus();
    follow();
  } else {
    state.opened = null;
    composer().hidden = true;
    composer().replaceChildren();
    messageForm.hidden = MODE !== "chat" || Boolean(state.finished);
    $("idle").hidden = MODE === "chat" && !state.finished || DESK && state.entries.length > 0;
    if (DESK && !state.finished) renderInbox(openEntry);
    refreshGreeting();
    refreshStatus();
  }
}

export function closeView() {
  state.view = null;
  state.asking = null;
  composer().replaceChildren();
}

export function leave() {
  // the batch or card on screen is settled: the next one, or the message box, takes focus
  const hadFocus = composer().contains(document.activeElement);
  closeView();
  showNext();
  if (hadFocus && !state.view && !state.asking) {
    const messageForm = $("message-form");
    (messageForm.hidden ? $("dock") : $("message")).focus();
  }
}

function setStatus(text, kind) {
  const line = $("status");
  line.textContent = text;
  line.dataset.state = kind;
}

export function refreshStatus() {
  // one place decides the header: closed, offline, a question, working, idle
  const { view, asking } = state;
  if (state.finished) setStatus(state.signedOut ? "signed out" : "done", "done");
  else if (state.offline) setStatus("reconnecting…", "offline");
  else if (view) setStatus(view.busy && view.waiting ? view.waiting : "question waiting", "asking");
  else if (asking) setStatus(asking.busy ? "Sent. Waiting for dsh…" : "permission waiting", "asking");
  else if (DESK) setStatus(state.entries.length ? `${state.entries.length} pending` : "connected", "connected");
  else setStatus(state.working ? "working…" : "connected", "connected");
}

export function refreshGreeting() {
  // the empty chat greets; it goes with the first message or question
  $("greeting").hidden = MODE !== "chat" || Boolean(state.view) || $("transcript").childElementCount > 0;
}

export function append(node) {
  $("transcript").append(node);
  refreshGreeting();
  follow();
}

export function note(text, outcome) {
  append(el("div", { class: `note ${outcome || ""}`, "data-outcome": outcome, text }));
}

export function setWorking(on) {
  state.working = on;
  document.body.classList.toggle("working", on);
  refreshStatus();
}

export function hostClosed() {
  // dsh is done with this page: say so instead of reconnecting for ever
  const texts = {
    answered: "The answer was sent to dsh. You can close this tab.",
    cancelled: "The questions were dismissed. You can close this tab.",
  };
  finish((MODE === "questions" && texts[state.lastOutcome]) || "dsh has stopped. You can close this tab.");
}

export function signedOut(line) {
  // the hub no longer knows this page's session (expired, or the token removed): nothing
  // it sends is taken until the human signs in again, so say so once and stop
  if (state.signedOut) return;
  state.signedOut = true;
  finish(line.replace(/^dsh: /, "") || "Signed out: ask for a new login link.");
}

function finish(text) {
  state.finished = text;
  if (state.source) state.source.close();
  closeView();
  composer().hidden = true;
  $("inbox").hidden = true;
  $("message-form").hidden = true;
  $("greeting").hidden = true;
  const idle = $("idle");
  idle.textContent = state.finished;
  idle.hidden = false;
  idle.dataset.state = "closed";
  refreshStatus();
}

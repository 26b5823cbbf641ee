// The permission card: what a tool asks to do, as the server words it, and the four choices.

import { $, el, refusal, respond } from "./dom.js";
import { state } from "./state.js";
import { askerLine, backButton } from "./inbox.js";
import { backToInbox, leave, note, refreshStatus, showNext } from "./screen.js";

export function permissionRequested(event) {
  state.permissions.set(event.rpc_id, event);
  if (state.asking && state.asking.request.rpc_id === event.rpc_id) state.asking.request = event;
  showNext();
}

export function permissionResolved(event) {
  const wasShown = state.asking && state.asking.request.rpc_id === event.rpc_id;
  state.permissions.delete(event.rpc_id);
  const shown = event.shown || {};
  note(shown.note || "", shown.style); // worded and styled by the server
  if (wasShown) leave();
}

export function openPermission(request) {
  // the router puts a request on screen
  state.asking = { request, busy: false, error: "", reason: "" };
  renderPermission(true);
}

function renderPermission(focus) {
  const asking = state.asking;
  const shown = asking.request.shown || { choices: [] };
  const composer = $("composer");
  composer.replaceChildren();
  composer.setAttribute("aria-busy", asking.busy ? "true" : "false");
  const top = el("div", { class: "qc-top" }, [
    backButton(backToInbox),
    el("span", { class: "kicker", text: shown.kicker || "" }),
    shown.chip ? el("span", { class: "chip", text: shown.chip }) : null,
  ]);
  const body = [askerLine(shown), el("h2", { id: "qc-text", tabindex: "-1" }, [
    document.createTextNode("Run "), el("code", { class: "tool-name", text: shown.tool || "" }), document.createTextNode("?"),
  ])];
  if (shown.what) body.push(el("p", { class: "hint pc-what", text: shown.what }));
  if (shown.warning) body.push(el("p", { class: "warning", role: "note", id: "pc-warning", text: shown.warning }));
  // every byte of what a grant covers, wrapped, never cut; taller than its box, the allow
  // buttons wait until it was scrolled to its end (deny never waits)
  const granted = el("pre", { class: "detail pc-arguments", tabindex: "0", "aria-label": "arguments",
                              text: shown.arguments || "" });
  body.push(granted);
  if (shown.hints) body.push(el("p", { class: "hint pc-hints", text: shown.hints }));
  const reason = el("textarea", { id: "pc-reason", rows: 1, disabled: asking.busy, "aria-describedby": "qc-error",
                                  placeholder: "Reason (optional, sent to the model with Deny)…" });
  reason.value = asking.reason;
  reason.addEventListener("input", () => { asking.reason = reason.value; });
  body.push(el("div", { class: "other" }, [el("label", { for: "pc-reason", text: "Why (optional)" }), reason]));
  body.push(el("p", { id: "qc-error", class: "error", role: "alert", text: asking.error || "" }));
  const buttons = shown.choices.map((choice) => el("button", {
    type: "button", class: `${choice.kind} decision`, "data-decision": choice.decision, disabled: asking.busy,
    onclick: () => decide(choice.decision), text: choice.label,
  }));
  composer.append(top, el("div", { class: `qc-body${shown.warning ? " destructive" : ""}` }, body),
                  el("div", { class: "actions" }, buttons));
  const allows = buttons.filter((button) => button.dataset.decision !== "deny");
  const deny = buttons.find((button) => button.dataset.decision === "deny");
  const gate = () => {
    asking.seen = asking.seen || granted.scrollTop + granted.clientHeight >= granted.scrollHeight - 2;
    for (const button of allows) {
      button.disabled = asking.busy || !asking.seen;
      button.title = asking.seen ? "" : "Scroll the arguments to their end first";
    }
  };
  granted.addEventListener("scroll", gate);
  gate();
  if (focus) ((shown.warning || !asking.seen ? deny : buttons[0]) || buttons[0]).focus();
}

async function decide(decision) {
  const current = state.asking;
  if (!current || current.busy) return;
  current.busy = true;
  current.error = "";
  renderPermission(false);
  // every settling frame names the session of what it settles (the one ownership rule)
  const frame = { type: "permission/decision", rpc_id: current.request.rpc_id,
                  session_id: current.request.session_id, decision };
  if (decision === "deny" && current.reason.trim()) frame.message = current.reason.trim();
  const { ack, failure } = await respond(frame);
  if (state.asking !== current) return; // resolved while the reply was on its way
  if (ack && ack.accepted) {
    refreshStatus(); // the card leaves on permission/resolved
    return;
  }
  current.busy = false;
  current.error = refusal(ack, failure);
  renderPermission(false);
}

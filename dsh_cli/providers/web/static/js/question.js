// The question composer: one question of the batch on screen at a time, with its drafts;
// the review step is review.js's, drawn with this composer's actions.

import { $, MODE, el, refusal, respond } from "./dom.js";
import { state } from "./state.js";
import { askerLine, backButton } from "./inbox.js";
import { forgetDrafts, loadDrafts, saveDrafts } from "./drafts.js";
import { backToInbox, leave, note, refreshGreeting, refreshStatus, showNext } from "./screen.js";
import { answers, complete, lastStep, optionWords, reviewed, reviewing, words } from "./batch.js";
import { renderReview } from "./review.js";

const composer = () => $("composer");

// ---------------------------------------------------------------- the batch and its words

export function batchRequested(event) {
  state.batches.set(event.rpc_id, event);
  if (state.view && state.view.batch.rpc_id === event.rpc_id) state.view.batch = event;
  showNext();
}

export function batchResolved(event) {
  const view = state.view;
  const wasShown = view && view.batch.rpc_id === event.rpc_id;
  state.batches.delete(event.rpc_id);
  forgetDrafts(event.rpc_id);
  state.lastOutcome = event.outcome;
  note((event.shown && event.shown.note) || "", event.outcome);
  if (wasShown) leave();
}

export function openBatch(batch) {
  // the router puts a batch on screen: its drafts (a reload keeps them), at their step
  const stored = loadDrafts(batch);
  state.view = { batch, index: Math.min(stored.index, lastStep(batch)), drafts: stored.drafts,
                 busy: false, error: "" };
  saveDrafts();
  refreshGreeting();
  render(true);
}

function question() {
  return state.view.batch.questions[state.view.index];
}

function draft() {
  return state.view.drafts[state.view.index];
}

// ---------------------------------------------------------------- one question

function render(focus) {
  if (reviewing()) {
    renderReview(focus, { go, submit, dismiss, buttons: [declineButton(), discussButton()] });
    return;
  }
  const view = state.view;
  const q = question();
  const shown = words(view.index);
  const d = draft();
  const total = view.batch.questions.length;
  const last = view.index === total - 1;
  const options = q.options || [];
  const multi = Boolean(q.multi_select) && options.length > 0;
  composer().replaceChildren();
  composer().setAttribute("aria-busy", view.busy ? "true" : "false");

  const dots = el("ol", { class: "dots", "aria-hidden": "true" }, view.batch.questions.map((_, i) => el("li", {
    class: [i === view.index ? "current" : "", view.drafts[i].skipped ? "skipped" : complete(i) ? "answered" : ""].join(" "),
    onclick: () => go(i, true),
  })));
  const top = el("div", { class: "qc-top" }, [
    backButton(backToInbox),
    el("span", { class: "kicker", text: (view.batch.shown && view.batch.shown.kicker) || "dsh asks" }),
    shown.header ? el("span", { class: "chip", text: shown.header }) : null,
    el("nav", { class: "pager", "aria-label": "Questions" }, [
      el("button", { type: "button", class: "icon", "aria-label": "Previous question", disabled: view.index === 0 || view.busy,
                     onclick: () => go(view.index - 1, true), text: "‹" }),
      el("span", { class: "count", "aria-live": "polite", text: `${view.index + 1} / ${total}` }),
      el("button", { type: "button", class: "icon", "aria-label": "Next question",
                     disabled: view.index >= lastStep(view.batch) || view.busy,
                     onclick: () => go(view.index + 1, true), text: "›" }),
    ]),
    total > 1 ? dots : null,
    el("button", { type: "button", class: "icon dismiss", "aria-label": "Dismiss all questions",
                   title: "Dismiss all questions", disabled: view.busy, onclick: dismiss, text: "✕" }),
  ]);

  const body = [askerLine(view.batch.shown)];
  // who asks, when it is not the model: "git asks: Configure the deploy"
  if (shown.heading) body.push(el("p", { id: "qc-source", class: "source", text: shown.heading }));
  body.push(el("h2", { id: "qc-text", tabindex: "-1", text: shown.question || "" }));
  if (shown.detail) body.push(el("p", { id: "qc-detail", class: "detail", text: shown.detail }));
  if (shown.warning) body.push(el("p", { id: "qc-warning", class: "warning", role: "note", text: shown.warning }));
  if (shown.notes) body.push(el("p", { id: "qc-notes", class: "hint", text: shown.notes }));

  let group = null;
  if (options.length) {
    group = el("div", { class: multi ? "options multi" : "options single", role: "group",
                        "aria-labelledby": "qc-text", "aria-describedby": shown.detail ? "qc-detail" : undefined });
    options.forEach((option, i) => group.append(multi ? checkbox(option, i, d) : choice(option, i, d)));
    group.addEventListener("keydown", arrowKeys);
    const preview = previewBlock(options, d);
    if (preview) {
      group.addEventListener("focusin", (event) => showPreview(preview, options, event.target));
      group.addEventListener("mouseover", (event) => showPreview(preview, options, event.target));
      body.push(el("div", { class: "with-preview" }, [group, preview]));
    } else {
      body.push(group);
    }
  }

  const other = el("textarea", {
    id: "qc-other", rows: options.length ? 1 : 3, disabled: view.busy,
    placeholder: options.length ? "Type another answer…" : "Type your answer…",
    "aria-describedby": "qc-error",
  });
  other.value = d.custom;
  other.addEventListener("input", () => typed(other));
  other.addEventListener("keydown", enterKey);
  const overrides = el("p", { id: "qc-overrides", class: "hint",
                              text: "Your text replaces the checked options. To keep them, clear it and add a note instead.",
                              hidden: !(multi && d.custom.trim() && d.selected.length) });
  body.push(el("div", { class: "other", hidden: !shown.takes_text }, [
    el("label", { for: "qc-other", text: options.length ? "Other" : "Your answer" }), other, overrides,
  ]));
  // an MCP server's form has no place for a note: offered only to the model's questions
  if (!(view.batch.shown && view.batch.shown.form)) body.push(noteField(d));
  body.push(el("p", { id: "qc-error", class: "error", role: "alert", text: view.error || "" }));

  const primary = el("button", { type: "button", class: "primary", id: "qc-primary", disabled: view.busy,
                                 onclick: () => advance(), text: view.busy ? "Sending…" : !last ? "Next" : reviewed(view.batch) ? "Review" : "Submit" });
  const actions = el("div", { class: "actions" }, [
    shown.can_skip ? el("button", { type: "button", class: "quiet", id: "qc-skip", disabled: view.busy, onclick: skip,
                                    text: shown.skip_label }) : null,
    declineButton(),
    discussButton(),
    el("span", { class: "keys", "aria-hidden": "true", text: "Enter ↵ " + (!last ? "next" : reviewed(view.batch) ? "review" : "submit") + " · Shift+Enter new line" }),
    primary,
  ]);
  composer().append(top, el("div", { class: "qc-body" }, body), actions);

  if (focus) {
    if (!options.length) other.focus();
    else {
      // what is chosen, else the last answer to the same question (highlighted, not chosen)
      const chosen = group.querySelector('[aria-pressed="true"], input:checked')
        || group.querySelector("button.option.last, .option.last input")
        || group.querySelector("button, input");
      chosen.focus();
    }
  }
}

// ---------------------------------------------------------------- options, previews, notes

function optionBody(shown) {
  const parts = [el("span", { class: "label", text: shown.label })];
  if (shown.recommended) parts.push(el("span", { class: "badge", text: "Recommended" }));
  if (shown.last) parts.push(el("span", { class: "badge last", text: "Last time" }));
  if (shown.description) parts.push(el("span", { class: "desc", text: shown.description }));
  return parts;
}

function choice(option, i, d) {
  const shown = words(state.view.index).options[i] || { label: "" };
  const pressed = d.selected.includes(option.label);
  return el("button", {
    type: "button", class: "option" + (shown.last ? " last" : ""), "aria-pressed": pressed ? "true" : "false",
    disabled: state.view.busy, "data-label": option.label, onclick: () => choose(option.label),
  }, [el("span", { class: "key", "aria-hidden": "true", text: i < 9 ? String(i + 1) : "" }), el("span", { class: "text" }, optionBody(shown))]);
}

function checkbox(option, i, d) {
  const shown = words(state.view.index).options[i] || { label: "" };
  const box = el("input", { type: "checkbox", disabled: state.view.busy, "data-label": option.label });
  box.checked = d.selected.includes(option.label);
  box.addEventListener("change", () => toggle(option.label, box.checked));
  box.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      advance();
    }
  });
  return el("label", { class: "option" + (shown.last ? " last" : "") }, [
    el("span", { class: "key", "aria-hidden": "true", text: i < 9 ? String(i + 1) : "" }),
    box, el("span", { class: "text" }, optionBody(shown)),
  ]);
}

function previewBlock(options, d) {
  // one text block (never HTML) showing the preview of the option in focus, under the
  // pointer, or else the chosen one; none when no option has a preview
  if (!options.some((o) => o.preview)) return null;
  const block = el("pre", { id: "qc-preview", class: "preview", tabindex: "0", "aria-live": "polite",
                            "aria-label": "Preview" });
  const chosen = options.find((o) => d.selected.includes(o.label) && o.preview);
  setPreview(block, chosen || options.find((o) => o.preview));
  return block;
}

function showPreview(block, options, target) {
  const row = target && target.closest ? target.closest(".option") : null;
  const item = row ? row.querySelector("[data-label]") || row : null;
  if (!item) return;
  const option = options.find((o) => o.label === item.getAttribute("data-label"));
  if (option) setPreview(block, option);
}

function setPreview(block, option) {
  const shown = optionWords(state.view.index, option.label);
  block.dataset.label = option.label;
  block.classList.toggle("empty", !shown.preview);
  block.textContent = shown.preview ? shown.preview : `No preview for ${shown.label}`;
}

function noteField(d) {
  const box = el("input", { type: "text", id: "qc-note", disabled: state.view.busy, autocomplete: "off",
                            placeholder: "Anything to add to this answer (optional)…" });
  box.value = d.note || "";
  box.addEventListener("input", () => {
    draft().note = box.value;
    saveDrafts();
  });
  box.addEventListener("keydown", enterKey);
  return el("div", { class: "note-field" }, [el("label", { for: "qc-note", text: "Add a note" }), box]);
}

function arrowKeys(event) {
  if (event.key !== "ArrowDown" && event.key !== "ArrowUp") return;
  const items = Array.from(event.currentTarget.querySelectorAll("button.option, input[type=checkbox]"));
  const at = items.indexOf(document.activeElement);
  if (at < 0) return;
  event.preventDefault();
  const next = items[(at + (event.key === "ArrowDown" ? 1 : items.length - 1)) % items.length];
  next.focus();
}

// ---------------------------------------------------------------- editing the draft

function edited() {
  draft().skipped = false;
  state.view.error = "";
  saveDrafts();
}

function choose(label) {
  const view = state.view;
  if (view.busy) return;
  const d = draft();
  d.selected = [label];
  d.custom = "";
  edited();
  if (view.index < view.batch.questions.length - 1) {
    go(view.index + 1, true);
  } else {
    render(false);
    $("qc-primary").focus();
  }
}

function toggle(label, on) {
  const q = question();
  const d = draft();
  const chosen = new Set(d.selected);
  if (on) chosen.add(label);
  else chosen.delete(label);
  d.selected = q.options.map((o) => o.label).filter((l) => chosen.has(l));
  edited();
  refreshState();
}

function typed(box) {
  const q = question();
  const d = draft();
  d.custom = box.value;
  const single = (q.options || []).length > 0 && !q.multi_select;
  if (single && box.value !== "" && d.selected.length) {
    d.selected = [];
    composer().querySelectorAll("button.option").forEach((b) => b.setAttribute("aria-pressed", "false"));
  }
  edited();
  refreshState();
}

function refreshState() {
  // update in place while typing, so the caret and IME state are left alone
  const view = state.view;
  const q = question();
  const d = draft();
  const overrides = $("qc-overrides");
  if (overrides) overrides.hidden = !(q.multi_select && d.custom.trim() && d.selected.length);
  const error = $("qc-error");
  if (error) error.textContent = view.error || "";
  composer().querySelectorAll(".dots li").forEach((dot, i) => {
    dot.classList.toggle("answered", complete(i) && !view.drafts[i].skipped);
    dot.classList.toggle("skipped", view.drafts[i].skipped);
  });
}

function enterKey(event) {
  if (event.key !== "Enter") return;
  // Shift+Enter is a new line; Enter that confirms an IME composition is not ours
  if (event.shiftKey || event.isComposing || event.keyCode === 229) return;
  event.preventDefault();
  advance();
}

function go(index, focus) {
  const view = state.view;
  if (!view || index < 0 || index > lastStep(view.batch)) return;
  view.index = index;
  view.error = "";
  saveDrafts();
  render(focus);
}

function advance() {
  const view = state.view;
  if (view.busy) return;
  const total = view.batch.questions.length;
  if (view.index < total - 1) go(view.index + 1, true);
  else if (reviewed(view.batch) && !reviewing()) {
    if (!showMissing()) go(total, true);
  } else submit();
}

function skip() {
  const view = state.view;
  if (view.busy) return;
  view.drafts[view.index] = { selected: [], custom: "", skipped: true, note: draft().note || "" };
  view.error = "";
  saveDrafts();
  advance();
}

function showMissing() {
  // the first incomplete question, focused with the reason; false when there is none
  const view = state.view;
  const missing = view.drafts.findIndex((_, i) => !complete(i));
  if (missing < 0) return false;
  view.index = missing;
  view.error = view.batch.shown.words.answer_first;
  saveDrafts();
  render(true);
  return true;
}

// ---------------------------------------------------------------- settling the batch

function frame(type) {
  return { type, rpc_id: state.view.batch.rpc_id, session_id: state.view.batch.session_id };
}

async function submit() {
  if (showMissing()) return;
  await send({ ...frame("question/answer"), answers: answers() }, "Sent. Waiting for dsh…");
}

async function dismiss() {
  if (state.view.busy) return;
  await send(frame("question/cancel"), "Dismissed. Waiting for dsh…");
}

async function discuss() {
  if (state.view.busy) return;
  await send(frame("question/discuss"), "Left to discuss. Waiting for dsh…");
}

async function decline() {
  if (state.view.busy) return;
  await send(frame("question/decline"), "Declined. Waiting for dsh…");
}

async function send(body, waiting) {
  const current = state.view;
  current.busy = true;
  current.error = "";
  render(false);
  const { ack, failure } = await respond(body);
  if (state.view !== current) return; // resolved while the reply was on its way
  if (ack && ack.accepted) {
    // stay busy: the composer leaves only when question/resolved arrives
    current.waiting = waiting;
    refreshStatus();
    return;
  }
  current.busy = false;
  // the server names the answer it refused (shown.at): the composer shows that question
  const at = ack && ack.shown ? ack.shown.at : null;
  if (Number.isInteger(at) && at >= 0 && at < current.batch.questions.length) current.index = at;
  current.error = refusal(ack, failure);
  render(false);
  $("qc-primary").focus();
}

function declineButton() {
  // offered only for a batch that can be declined (an MCP server's form), on every step
  const view = state.view;
  if (!view.batch.declinable) return null;
  return el("button", { type: "button", class: "quiet", id: "qc-decline", disabled: view.busy,
                        onclick: decline, text: "Decline" });
}

function discussButton() {
  // only where the conversation goes on (a chat), and only for the model's own questions
  const view = state.view;
  if (MODE !== "chat" || (view.batch.shown && view.batch.shown.form)) return null;
  return el("button", { type: "button", class: "quiet", id: "qc-discuss", disabled: view.busy,
                        title: "Leave these questions and talk about them first", onclick: discuss,
                        text: "Discuss" });
}

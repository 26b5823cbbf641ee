// The review step: every answer of a batch on one screen, before it is submitted. The
// question composer draws it and hands it its actions (go to a question, submit, dismiss,
// its decline and discuss buttons), so this module never imports the composer back.

import { $, el } from "./dom.js";
import { backToInbox } from "./screen.js";
import { state } from "./state.js";
import { backButton } from "./inbox.js";
import { answerText, answers, complete, words } from "./batch.js";

export function renderReview(focus, { go, submit, dismiss, buttons }) {
  const view = state.view;
  const composer = $("composer");
  const total = view.batch.questions.length;
  composer.replaceChildren();
  composer.setAttribute("aria-busy", view.busy ? "true" : "false");
  const top = el("div", { class: "qc-top" }, [
    backButton(backToInbox),
    el("span", { class: "kicker", text: (view.batch.shown && view.batch.shown.kicker) || "dsh asks" }),
    el("nav", { class: "pager", "aria-label": "Questions" }, [
      el("button", { type: "button", class: "icon", "aria-label": "Previous question", disabled: view.busy,
                     onclick: () => go(total - 1, true), text: "‹" }),
      el("span", { class: "count", "aria-live": "polite", text: "Review" }),
    ]),
    el("button", { type: "button", class: "icon dismiss", "aria-label": "Dismiss all questions",
                   title: "Dismiss all questions", disabled: view.busy, onclick: dismiss, text: "✕" }),
  ]);
  const given = answers();
  const rows = el("ol", { class: "review", "aria-labelledby": "qc-text" }, view.batch.questions.map((q, i) => {
    const item = given[i];
    const open = !complete(i);
    return el("li", {}, [el("button", {
      type: "button", class: "review-row" + (open ? " open" : ""), disabled: view.busy, "data-index": String(i),
      "aria-label": `Change answer ${i + 1}`, onclick: () => go(i, true),
    }, [
      el("span", { class: "key", "aria-hidden": "true", text: i < 9 ? String(i + 1) : "" }),
      el("span", { class: "name", text: words(i).name || q.id }),
      el("span", { class: "value" }, [
        document.createTextNode(open ? view.batch.shown.words.open : answerText(i, item)),
        item.note ? el("span", { class: "review-note", text: `Note: ${item.note}` }) : null,
      ]),
    ])]);
  }));
  const body = [el("h2", { id: "qc-text", tabindex: "-1", text: "Review your answers" }), rows,
                el("p", { id: "qc-error", class: "error", role: "alert", text: view.error || "" })];
  const primary = el("button", { type: "button", class: "primary", id: "qc-primary", disabled: view.busy,
                                 onclick: () => submit(), text: view.busy ? "Sending…" : "Submit" });
  const actions = el("div", { class: "actions" }, [
    ...buttons,
    el("span", { class: "keys", "aria-hidden": "true", text: "Enter ↵ submit · 1-9 or click a row to change it" }),
    primary,
  ]);
  composer.append(top, el("div", { class: "qc-body" }, body), actions);
  if (focus) primary.focus();
}

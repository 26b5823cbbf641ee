// The batch on screen as the server worded it: its words, its answers so far, and its steps
// (a batch that ends on a review has that step one past its last question).

import { state } from "./state.js";

export function words(index) {
  // what the server decided the page shows of question `index` (sanitised, worded)
  const shown = state.view.batch.shown;
  return (shown && shown.questions && shown.questions[index]) || { options: [] };
}

export function optionWords(index, label) {
  const q = state.view.batch.questions[index];
  const at = (q.options || []).findIndex((o) => o.label === label);
  return words(index).options[at] || { label: "" };
}

export function answerText(index, item) {
  // an answer about to be sent, read back in the server's words: the human's own text, else
  // the chosen labels as shown, joined as the server joins them, else its words for a skip
  if (item.custom) return item.custom;
  if (item.selected.length) return item.selected.map((l) => optionWords(index, l).label).join(state.view.batch.shown.joiner);
  return words(index).skipped;
}

export function complete(index) {
  const d = state.view.drafts[index];
  return d.skipped || d.custom.trim() !== "" || d.selected.length > 0;
}

export function answers() {
  const view = state.view;
  return view.batch.questions.map((q, i) => {
    const d = view.drafts[i];
    const custom = d.custom.trim();
    const item = d.skipped ? { id: q.id, selected: [] }
      : custom ? { id: q.id, selected: [], custom } : { id: q.id, selected: d.selected.slice() };
    const text = (d.note || "").trim();
    if (text) item.note = text; // sent only when given, as the seam returns it
    return item;
  });
}

export function reviewed(batch) {
  // whether the batch ends on a review step, as the server decided it (shown.review)
  return Boolean(batch.shown && batch.shown.review);
}

export function lastStep(batch) {
  // the review step is one past the last question
  return reviewed(batch) ? batch.questions.length : batch.questions.length - 1;
}

export function reviewing() {
  const view = state.view;
  return reviewed(view.batch) && view.index === view.batch.questions.length;
}

// The web desk's list (`dsh attach --web`): everything pending at every dsh mcp, as the
// server words it; opening an entry shows it with the same question and permission cards.

import { $, MODE, el } from "./dom.js";
import { state } from "./state.js";

export const DESK = MODE === "desk";

export function inboxList(event, showNext) {
  state.entries = Array.isArray(event.entries) ? event.entries : [];
  if (!state.view && !state.asking) showNext();
}

export function renderInbox(open) {
  const list = $("inbox");
  const entries = state.entries;
  // the list is redrawn as it changes (and as ages tick): the row in focus keeps it
  const focused = list.contains(document.activeElement) ? document.activeElement.dataset.entry : null;
  list.hidden = entries.length === 0;
  list.replaceChildren(
    el("h2", { class: "inbox-title", text: entries.length === 1 ? "1 pending" : `${entries.length} pending` }),
    el("ol", { class: "entries" }, entries.map((entry) => el("li", {}, [el("button", {
      type: "button", class: "entry" + (entry.taken ? " taken" : ""), "data-entry": entry.id,
      "data-kind": entry.kind, onclick: () => open(entry.id),
    }, [
      el("span", { class: "entry-top" }, [
        el("span", { class: "chip kind", text: entry.kind }),
        el("span", { class: "age", text: entry.age }),
        entry.taken ? el("span", { class: "taken-tag", text: "open at another desk" }) : null,
      ]),
      el("span", { class: "what", text: entry.what }),
      el("span", { class: "who", text: entry.who }),
    ])]))),
  );
  const again = focused ? list.querySelector(`button.entry[data-entry="${CSS.escape(focused)}"]`) : null;
  if (again) again.focus();
}

export function backButton(onBack) {
  // at the desk an entry goes back to the list unanswered (it stays pending)
  if (!DESK) return null;
  return el("button", { type: "button", class: "quiet back", id: "qc-back", onclick: onBack, text: "‹ Inbox" });
}

export function askerLine(shown) {
  // who asks, on every card at the desk: agent · directory · pid · kind
  if (!shown || !shown.asker) return null;
  return el("p", { id: "qc-asker", class: "source asker", text: shown.asker });
}

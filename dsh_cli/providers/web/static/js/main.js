// dsh web: the transcript, the message composer, the question composer and permission cards.
// The page only renders: every text it shows comes worded and sanitised from the server.

import { $, SIGNED_OUT, follow } from "./dom.js";
import { state } from "./state.js";
import { connect } from "./feed.js";
import { startMessages } from "./message.js";
import { openScreens, showNext, signedOut } from "./screen.js";
import { openBatch } from "./question.js";
import { openPermission } from "./permission.js";
import { DESK } from "./inbox.js";

function numberKeys(event) {
  // 1-9 choose an option while focus is not in a text field
  if (!state.view || state.view.busy || event.altKey || event.ctrlKey || event.metaKey) return;
  const target = event.target;
  if (target && (target.tagName === "TEXTAREA" || target.tagName === "INPUT" && target.type !== "checkbox")) return;
  if (!/^[1-9]$/.test(event.key)) return;
  const items = $("composer").querySelectorAll("button.option, input[type=checkbox], button.review-row");
  const item = items[Number(event.key) - 1];
  if (!item) return;
  event.preventDefault();
  item.focus();
  item.click();
}

// the desk waits for the user's agents, not for dsh's own questions
if (DESK) $("idle").textContent = "Nothing pending. Questions and permission requests from your agents appear here as soon as they ask.";
openScreens({ batch: openBatch, permission: openPermission });
startMessages();
document.addEventListener("keydown", numberKeys);
document.addEventListener(SIGNED_OUT, (event) => signedOut(event.detail));
// the composer grows (a question, a narrow window): keep the newest messages in view
if (window.ResizeObserver) new ResizeObserver(() => follow()).observe($("dock"));
showNext();
connect();

// Drafts of the batch on screen, kept in sessionStorage so a reload keeps them: the one on
// screen under DRAFTS_KEY, and each batch under its own key, so the web desk keeps the
// drafts of an entry left for another.

import { state } from "./state.js";

const DRAFTS_KEY = "dsh-drafts";
const own = (rpcId) => `${DRAFTS_KEY}:${rpcId}`;

export function loadDrafts(batch) {
  for (const key of [DRAFTS_KEY, own(batch.rpc_id)]) {
    try {
      const stored = JSON.parse(sessionStorage.getItem(key) || "null");
      if (stored && stored.rpc_id === batch.rpc_id && stored.drafts.length === batch.questions.length) {
        return stored;
      }
    } catch (_) {
      /* a damaged draft is a fresh start */
    }
  }
  return {
    rpc_id: batch.rpc_id,
    index: 0,
    drafts: batch.questions.map(() => ({ selected: [], custom: "", skipped: false, note: "" })),
  };
}

export function saveDrafts() {
  const view = state.view;
  if (!view) return;
  const record = { rpc_id: view.batch.rpc_id, index: view.index, drafts: view.drafts };
  try {
    sessionStorage.setItem(DRAFTS_KEY, JSON.stringify(record));
    sessionStorage.setItem(own(record.rpc_id), JSON.stringify(record));
  } catch (_) {
    /* storage full or disabled: drafts live only in this page */
  }
}

export function forgetDrafts(rpcId) {
  sessionStorage.removeItem(own(rpcId));
  try {
    const stored = JSON.parse(sessionStorage.getItem(DRAFTS_KEY) || "null");
    if (stored && stored.rpc_id === rpcId) sessionStorage.removeItem(DRAFTS_KEY);
  } catch (_) {
    sessionStorage.removeItem(DRAFTS_KEY);
  }
}

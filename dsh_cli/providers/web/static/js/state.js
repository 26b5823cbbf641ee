// What the page holds: the pending batches and permission requests, and what is on screen.

export const state = {
  batches: new Map(), // rpc_id -> question/requested event, oldest first
  permissions: new Map(), // rpc_id -> permission/requested event, oldest first
  view: null, // the batch on screen: {batch, index, drafts, busy, error, waiting}
  asking: null, // the permission card on screen: {request, busy, error, reason, seen}
  working: false,
  offline: false,
  finished: null, // what the page says once the host has closed (or signed it out)
  signedOut: false, // the server refused the page's session (401): nothing retries
  lastOutcome: null,
  source: null, // the EventSource
  entries: [], // the web desk's list (inbox/list), in arrival order
  opened: null, // the web desk's entry on screen (its page id), or null for the list
  connection: null, // the web desk's id of this tab's event stream (replay/done): holds name it
};

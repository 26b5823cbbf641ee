// dsh web: the transcript, the message composer, the question composer and permission cards.
// Every piece of model-written text is inserted with textContent, never as HTML.
"use strict";

(function () {
  const CSRF = meta("dsh-csrf");
  const MODE = meta("dsh-mode");
  const DRAFTS_KEY = "dsh-drafts";
  const INCOMPLETE = "Please answer or skip this question first.";
  const RECOMMENDED = /\s*(?:\(\s*recommended\s*\)|（\s*recommended\s*）|\(\s*推荐\s*\)|（\s*推荐\s*）)\s*$/i;
  // display only: controls, bidi overrides/isolates and zero-width characters
  const UNSAFE = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u200B-\u200F\u202A-\u202E\u2060-\u2069\uFEFF]/g;
  const REFUSED = {
    "not-pending": "Not accepted: this batch is no longer pending (answered in another tab, or withdrawn).",
    "bad-response": "Not accepted: ",
    "wrong-session": "Not accepted: ",
  };
  // the words of dsh_cli/permissions/wording.py: a card explains itself as the terminal does
  const DECISIONS = [
    ["allow_once", "Allow once", "primary"],
    ["allow_session", "Allow for this session", ""],
    ["allow_always", "Always (this tool, until dsh permissions rm)", ""],
    ["deny", "Deny", "danger"],
  ];
  const DECIDED = {
    allow_once: "Allowed once",
    allow_session: "Allowed for this session",
    allow_always: "Allowed always for this tool as defined now (undo: dsh permissions rm)",
    deny: "Denied",
  };
  const MAX_DESCRIPTION = 160;
  function hintWords(hints) {
    const words = [];
    const destructive = hints.destructive === true; // "destructive" wins over "read only"
    if (destructive) words.push("may change or delete things");
    else if (hints.read_only === true) words.push("only reads");
    else if (hints.destructive === false) words.push("adds things, deletes nothing");
    if (hints.idempotent === true && hints.read_only !== true) words.push("safe to run twice");
    if (hints.open_world === true) words.push("reaches outside this computer");
    else if (hints.open_world === false) words.push("stays on this computer");
    return words;
  }
  const OUTCOMES = {
    answered: "Answered",
    cancelled: "Questions dismissed (cancelled)",
    declined: "Questions declined (declined)",
    aborted: "Questions withdrawn (aborted)",
    timeout: "Questions timed out (timeout)",
    discuss: "Questions left to discuss (discuss)",
  };

  const $ = (id) => document.getElementById(id);
  const transcript = $("transcript");
  const composer = $("composer");
  const messageForm = $("message-form");
  const messageBox = $("message");
  const statusLine = $("status");

  const batches = new Map(); // rpc_id -> question/requested event, oldest first
  let view = null; // the batch on screen: {batch, index, drafts, busy, settled}
  const permissions = new Map(); // rpc_id -> permission/requested event, oldest first
  let asking = null; // the permission card on screen: {request, busy, error, reason}
  let streaming = null; // {reasoning, text} elements of the assistant message being streamed
  const toolLines = new Map();
  let working = false;
  let offline = false;
  let finished = null; // what the page says once the host has closed
  let lastOutcome = null;
  let source = null;

  function meta(name) {
    const el = document.querySelector(`meta[name="${name}"]`);
    return el ? el.getAttribute("content") : "";
  }

  function clean(text) {
    return String(text == null ? "" : text).replace(UNSAFE, "");
  }

  function displayLabel(label) {
    const stripped = label.replace(RECOMMENDED, "");
    return stripped.trim() ? stripped : label;
  }

  function el(tag, props, children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key === "text") node.textContent = clean(value);
      else if (key === "class") node.className = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else if (key in node && typeof value !== "string") node[key] = value;
      else node.setAttribute(key, value === true ? "" : value);
    }
    for (const child of children || []) if (child) node.append(child);
    return node;
  }

  function setStatus(text, state) {
    statusLine.textContent = text;
    statusLine.dataset.state = state;
  }

  // ---------------------------------------------------------------- server

  async function post(path, body) {
    const response = await fetch(path, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-DSH-CSRF": CSRF },
      body: JSON.stringify(body),
      credentials: "same-origin",
    });
    let data = null;
    try {
      data = await response.json();
    } catch (_) {
      data = null;
    }
    if (!response.ok && !(data && data.type === "response/ack")) {
      const detail = data && data.message ? data.message : `HTTP ${response.status}`;
      throw new Error(detail);
    }
    return data;
  }

  function connect() {
    source = new EventSource("/api/events");
    source.addEventListener("open", () => {
      // a (re)connect replays pending batches and the transcript from the start
      transcript.replaceChildren();
      streaming = null;
      toolLines.clear();
      offline = false;
      refreshStatus();
      refreshGreeting();
    });
    source.addEventListener("error", () => {
      if (finished) return;
      offline = true;
      refreshStatus();
    });
    const types = [
      "session/started", "user/message", "assistant/delta", "assistant/reasoning",
      "assistant/message", "tool/started", "tool/result", "turn/completed",
      "question/requested", "question/resolved", "response/ack", "error", "replay/done",
      "host/closed",
      "permission/requested", "permission/resolved",
    ];
    for (const type of types) {
      source.addEventListener(type, (event) => {
        let data;
        try {
          data = JSON.parse(event.data);
        } catch (_) {
          return;
        }
        handle(data);
      });
    }
  }

  function handle(event) {
    switch (event.type) {
      case "session/started":
        $("session").textContent = clean(`${event.model} · ${event.session_id}`);
        break;
      case "user/message":
        endStream();
        append(el("div", { class: "msg user" }, [
          el("span", { class: "who", text: "you" }), el("div", { class: "body", text: event.content }),
        ]));
        setWorking(true);
        break;
      case "assistant/reasoning":
        stream().reasoning.hidden = false;
        stream().reasoning.textContent += clean(event.text);
        follow();
        break;
      case "assistant/delta":
        stream().text.textContent += clean(event.text);
        follow();
        break;
      case "assistant/message":
        finishMessage(event.content || "");
        break;
      case "tool/started":
        endStream();
        toolStarted(event);
        break;
      case "tool/result":
        toolResult(event);
        break;
      case "turn/completed":
        endStream();
        setWorking(false);
        break;
      case "question/requested":
        batches.set(event.rpc_id, event);
        if (view && view.batch.rpc_id === event.rpc_id) view.batch = event;
        showNext();
        break;
      case "question/resolved":
        resolved(event);
        break;
      case "permission/requested":
        permissions.set(event.rpc_id, event);
        if (asking && asking.request.rpc_id === event.rpc_id) asking.request = event;
        showNext();
        break;
      case "permission/resolved":
        permissionResolved(event);
        break;
      case "replay/done":
        for (const rpcId of Array.from(batches.keys())) {
          if (!event.pending.includes(rpcId)) batches.delete(rpcId);
        }
        for (const rpcId of Array.from(permissions.keys())) {
          if (!event.pending.includes(rpcId)) permissions.delete(rpcId);
        }
        if (view && !batches.has(view.batch.rpc_id)) closeView();
        if (asking && !permissions.has(asking.request.rpc_id)) closeView();
        showNext();
        break;
      case "error":
        append(el("div", { class: "msg error", role: "alert", text: `${event.code}: ${event.message}` }));
        setWorking(false);
        break;
      case "host/closed":
        hostClosed();
        break;
      default:
        break;
    }
  }

  // ---------------------------------------------------------------- transcript

  function append(node) {
    transcript.append(node);
    refreshGreeting();
    follow();
  }

  function refreshGreeting() {
    // the empty chat greets; it goes with the first message or question
    $("greeting").hidden = MODE !== "chat" || Boolean(view) || transcript.childElementCount > 0;
  }

  function refreshStatus() {
    // one place decides the header: closed, offline, a question, working, idle
    if (finished) setStatus("done", "done");
    else if (offline) setStatus("reconnecting…", "offline");
    else if (view) setStatus(view.busy && view.waiting ? view.waiting : "question waiting", "asking");
    else if (asking) setStatus(asking.busy ? "Sent. Waiting for dsh…" : "permission waiting", "asking");
    else setStatus(working ? "working…" : "connected", "connected");
  }

  function hostClosed() {
    // dsh is done with this page: say so instead of reconnecting for ever
    const texts = {
      answered: "The answer was sent to dsh. You can close this tab.",
      cancelled: "The questions were dismissed. You can close this tab.",
    };
    finished = (MODE === "questions" && texts[lastOutcome]) || "dsh has stopped. You can close this tab.";
    if (source) source.close();
    closeView();
    composer.hidden = true;
    messageForm.hidden = true;
    $("greeting").hidden = true;
    const idle = $("idle");
    idle.textContent = finished;
    idle.hidden = false;
    idle.dataset.state = "closed";
    refreshStatus();
  }

  function follow() {
    window.scrollTo({ top: document.body.scrollHeight });
  }

  function stream() {
    if (!streaming) {
      const reasoning = el("div", { class: "reasoning", hidden: true });
      const text = el("div", { class: "body" });
      append(el("div", { class: "msg assistant" }, [el("span", { class: "who", text: "dsh" }), reasoning, text]));
      streaming = { reasoning, text };
    }
    return streaming;
  }

  function endStream() {
    streaming = null;
  }

  function finishMessage(content) {
    if (streaming) {
      if (content) streaming.text.textContent = clean(content);
      if (!streaming.text.textContent && streaming.reasoning.hidden) {
        streaming.text.parentElement.remove();
      }
    } else if (content) {
      stream().text.textContent = clean(content);
    }
    endStream();
  }

  function shorten(text, size) {
    const flat = clean(text).replace(/\s+/g, " ").trim();
    return flat.length > size ? flat.slice(0, size - 1) + "…" : flat;
  }

  function toolStarted(event) {
    const questions = event.name === "ask_user_question" ? askedQuestions(event.arguments) : null;
    const state = el("span", { class: "state", text: "running" });
    const args = el("span", { class: "args", text: questions ? "" : shorten(event.arguments, 90) });
    const summary = el("summary", {}, [
      el("span", { class: "name", text: questions ? askedTitle(questions) : event.name }),
      args,
      state,
    ]);
    const body = el("pre", { class: "detail", text: event.arguments });
    const line = el("details", { class: "tool", "data-call": event.call_id }, [summary, body]);
    toolLines.set(event.call_id, { line, state, body, args, questions });
    append(line);
  }

  // ---------------------------------------------------------------- ask_user_question lines

  function askedQuestions(argumentsText) {
    // the arguments are the model's JSON text; anything unreadable keeps the generic line
    try {
      const parsed = JSON.parse(argumentsText);
      const questions = typeof parsed === "string" ? JSON.parse(parsed).questions : parsed.questions;
      return Array.isArray(questions) ? questions : null;
    } catch (_) {
      return null;
    }
  }

  function askedTitle(questions) {
    return questions.length === 1 ? "asked 1 question" : `asked ${questions.length} questions`;
  }

  function questionName(q, fallback) {
    return shorten((q && (q.header || q.question)) || fallback || "", 30);
  }

  function answerText(item, labels) {
    if (item.custom != null && String(item.custom).trim()) return String(item.custom).trim();
    if (item.selected && item.selected.length) return item.selected.map((l) => displayLabel(String(l))).join(", ");
    return labels && labels.unanswered ? labels.unanswered : "skipped";
  }

  function answerLine(questions, answer) {
    // the terminal's closing line: header-named answers, e.g. "Stack: Go + chi · Name: acme"
    const byId = new Map((questions || []).map((q) => [q.id, q]));
    return (answer.answers || []).map((item) => `${questionName(byId.get(item.id), item.id)}: ${answerText(item)}`)
      .join(" · ");
  }

  function askResult(entry, event) {
    if (!entry.questions || event.error) return;
    try {
      const answer = JSON.parse(event.content);
      if (answer && Array.isArray(answer.answers)) entry.args.textContent = shorten(answerLine(entry.questions, answer), 200);
    } catch (_) {
      /* not an answer batch: the state mark says enough */
    }
  }

  function toolResult(event) {
    let entry = toolLines.get(event.call_id);
    if (!entry) {
      toolStarted({ call_id: event.call_id, name: event.name, arguments: "" });
      entry = toolLines.get(event.call_id);
    }
    entry.line.classList.add(event.error ? "failed" : "done");
    entry.state.textContent = event.error ? `✗ ${clean(event.error.code || event.error.name)}` : "✓";
    entry.body.textContent = clean(`${entry.body.textContent}\n→ ${event.content}`.trim());
    askResult(entry, event);
  }

  function note(text, outcome) {
    append(el("div", { class: `note ${outcome || ""}`, "data-outcome": outcome, text }));
  }

  function setWorking(on) {
    working = on;
    document.body.classList.toggle("working", on);
    refreshStatus();
  }

  // ---------------------------------------------------------------- drafts

  function loadDrafts(batch) {
    try {
      const stored = JSON.parse(sessionStorage.getItem(DRAFTS_KEY) || "null");
      if (stored && stored.rpc_id === batch.rpc_id && stored.drafts.length === batch.questions.length) {
        return stored;
      }
    } catch (_) {
      /* a damaged draft is a fresh start */
    }
    return {
      rpc_id: batch.rpc_id,
      index: 0,
      drafts: batch.questions.map(() => ({ selected: [], custom: "", skipped: false, note: "" })),
    };
  }

  function saveDrafts() {
    if (!view) return;
    const record = { rpc_id: view.batch.rpc_id, index: view.index, drafts: view.drafts };
    try {
      sessionStorage.setItem(DRAFTS_KEY, JSON.stringify(record));
    } catch (_) {
      /* storage full or disabled: drafts live only in this page */
    }
  }

  function forgetDrafts(rpcId) {
    try {
      const stored = JSON.parse(sessionStorage.getItem(DRAFTS_KEY) || "null");
      if (stored && stored.rpc_id === rpcId) sessionStorage.removeItem(DRAFTS_KEY);
    } catch (_) {
      sessionStorage.removeItem(DRAFTS_KEY);
    }
  }

  // ---------------------------------------------------------------- question composer

  function showNext() {
    if (view || asking) return;
    if (batches.size) {
      const batch = batches.values().next().value;
      const stored = loadDrafts(batch);
      view = { batch, index: Math.min(stored.index, lastStep(batch)), drafts: stored.drafts,
               busy: false, settled: false };
      saveDrafts();
      composer.hidden = false;
      messageForm.hidden = true;
      $("idle").hidden = true;
      refreshGreeting();
      render(true);
      refreshStatus();
      follow();
    } else if (permissions.size) {
      asking = { request: permissions.values().next().value, busy: false, error: "", reason: "" };
      composer.hidden = false;
      messageForm.hidden = true;
      $("idle").hidden = true;
      renderPermission(true);
      refreshStatus();
      follow();
    } else {
      composer.hidden = true;
      composer.replaceChildren();
      messageForm.hidden = MODE !== "chat" || Boolean(finished);
      $("idle").hidden = MODE === "chat" && !finished;
      refreshGreeting();
      refreshStatus();
    }
  }

  function closeView() {
    view = null;
    asking = null;
    composer.replaceChildren();
  }

  function resolved(event) {
    const wasShown = view && view.batch.rpc_id === event.rpc_id;
    const batch = batches.get(event.rpc_id);
    batches.delete(event.rpc_id);
    forgetDrafts(event.rpc_id);
    lastOutcome = event.outcome;
    let text = OUTCOMES[event.outcome] || event.outcome;
    if (event.outcome === "answered" && event.answer) text += ": " + answerLine(batch && batch.questions, event.answer);
    // left to discuss: the questions stay in view above the message box
    if (event.outcome === "discuss" && batch) text += ": " + batch.questions.map((q) => q.question).join(" · ");
    note(text, event.outcome);
    if (wasShown) {
      const hadFocus = composer.contains(document.activeElement);
      closeView();
      showNext();
      if (hadFocus && !view) (messageForm.hidden ? $("dock") : messageBox).focus();
    }
  }

  function question() {
    return view.batch.questions[view.index];
  }

  function draft() {
    return view.drafts[view.index];
  }

  function complete(index) {
    const d = view.drafts[index];
    return d.skipped || d.custom.trim() !== "" || d.selected.length > 0;
  }

  function render(focus) {
    if (reviewing()) {
      renderReview(focus);
      return;
    }
    const q = question();
    const d = draft();
    const total = view.batch.questions.length;
    const last = view.index === total - 1;
    const options = q.options || [];
    const multi = Boolean(q.multi_select) && options.length > 0;
    composer.replaceChildren();
    composer.setAttribute("aria-busy", view.busy ? "true" : "false");

    const dots = el("ol", { class: "dots", "aria-hidden": "true" }, view.batch.questions.map((_, i) => el("li", {
      class: [i === view.index ? "current" : "", view.drafts[i].skipped ? "skipped" : complete(i) ? "answered" : ""].join(" "),
      onclick: () => go(i, true),
    })));
    const top = el("div", { class: "qc-top" }, [
      el("span", { class: "kicker", text: "dsh asks" }),
      q.header ? el("span", { class: "chip", text: q.header }) : null,
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

    const body = [...askerHeading(view.batch, q),
                  el("h2", { id: "qc-text", tabindex: "-1", text: q.question })];
    if (q.detail) body.push(el("p", { id: "qc-detail", class: "detail", text: q.detail }));
    body.push(...askerNotes(q));

    let group = null;
    if (options.length) {
      group = el("div", { class: multi ? "options multi" : "options single", role: "group",
                          "aria-labelledby": "qc-text", "aria-describedby": q.detail ? "qc-detail" : undefined });
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

    const otherId = "qc-other";
    const other = el("textarea", {
      id: otherId, rows: options.length ? 1 : 3, disabled: view.busy,
      placeholder: options.length ? "Type another answer…" : "Type your answer…",
      "aria-describedby": "qc-error",
    });
    other.value = d.custom;
    other.addEventListener("input", () => typed(other));
    other.addEventListener("keydown", enterKey);
    const overrides = el("p", { id: "qc-overrides", class: "hint",
                                text: "Your text replaces the checked options. To keep them, clear it and add a note instead.",
                                hidden: !(multi && d.custom.trim() && d.selected.length) });
    body.push(el("div", { class: "other", hidden: !takesText(q) }, [
      el("label", { for: otherId, text: options.length ? "Other" : "Your answer" }), other, overrides,
    ]));
    // an MCP server's form has no place for a note: offered only to the model's questions
    if (!view.batch.source) body.push(noteField(d));
    body.push(el("p", { id: "qc-error", class: "error", role: "alert", text: view.error || "" }));

    const primary = el("button", { type: "button", class: "primary", id: "qc-primary", disabled: view.busy,
                                   onclick: () => advance(), text: view.busy ? "Sending…" : !last ? "Next" : reviewed(view.batch) ? "Review" : "Submit" });
    const actions = el("div", { class: "actions" }, [
      canSkip(q) ? el("button", { type: "button", class: "quiet", id: "qc-skip", disabled: view.busy, onclick: skip,
                                  text: q.default ? "Skip (use the default)" : "Skip this question" }) : null,
      declineButton(),
      discussButton(),
      el("span", { class: "keys", "aria-hidden": "true", text: "Enter ↵ " + (!last ? "next" : reviewed(view.batch) ? "review" : "submit") + " · Shift+Enter new line" }),
      primary,
    ]);
    composer.append(top, el("div", { class: "qc-body" }, body), actions);

    if (focus) {
      if (!options.length) other.focus();
      else {
        const chosen = group.querySelector('[aria-pressed="true"], input:checked') || group.querySelector("button, input");
        chosen.focus();
      }
    }
  }

  // ---------------------------------------------------------------- an asker's fields (elicitation)

  function askerHeading(batch, q) {
    // who asks, when it is not the model: "git asks: Configure the deploy"; in a batch of
    // two forms, the message of this question's own form
    const source = batch.source;
    if (!source || !source.name) return [];
    const own = source.messages && q && Object.hasOwn(source.messages, q.id) ? source.messages[q.id] : null;
    const message = own || source.message;
    const text = message ? `${source.name} asks: ${message}` : `${source.name} asks`;
    return [el("p", { id: "qc-source", class: "source", text: clean(text) })];
  }

  function askerNotes(q) {
    const notes = [];
    if (q.warning) notes.push(el("p", { id: "qc-warning", class: "warning", role: "note", text: clean(q.warning) }));
    const parts = [];
    if (q.default) {
      parts.push(`Default: ${defaultText(q)} (used when you skip)`);
    } else if (q.required) {
      parts.push("Required");
    }
    if (q.multi_select && (q.min_items != null || q.max_items != null)) {
      parts.push(q.max_items != null ? `Choose ${q.min_items || 0}-${q.max_items}` : `Choose at least ${q.min_items}`);
    }
    if (parts.length) notes.push(el("p", { id: "qc-notes", class: "hint", text: clean(parts.join(" · ")) }));
    return notes;
  }

  function takesText(q) {
    return q.other !== false || !(q.options || []).length;
  }

  function canSkip(q) {
    return !q.required || Boolean(q.default);
  }

  function refusedAt(message) {
    // the seam names the failing answer ("answers[1].custom: expected a number"): show it there
    const found = /^answers\[(\d+)\]/.exec(message || "");
    return found ? Number(found[1]) : -1;
  }

  function declineButton() {
    // offered only for a batch that can be declined (an MCP server's form), on every step
    if (!view.batch.declinable) return null;
    return el("button", { type: "button", class: "quiet", id: "qc-decline", disabled: view.busy,
                          onclick: decline, text: "Decline" });
  }

  function reviewValue(q, item) {
    // a skip the server will fill with its default says so
    const skipped = !(item.custom != null && String(item.custom).trim()) && !(item.selected || []).length;
    if (!skipped || !q.default) return answerText(item);
    return `skipped (default: ${defaultText(q)})`;
  }

  function defaultText(q) {
    // the question's default as the human reads it: its text, or its labels
    return q.default.custom != null ? q.default.custom : (q.default.selected || []).join(", ");
  }

  function discussButton() {
    // only where the conversation goes on (a chat), and only for the model's own questions
    if (MODE !== "chat" || view.batch.source) return null;
    return el("button", { type: "button", class: "quiet", id: "qc-discuss", disabled: view.busy,
                          title: "Leave these questions and talk about them first", onclick: discuss,
                          text: "Discuss" });
  }

  async function discuss() {
    if (view.busy) return;
    await send({ type: "question/discuss", rpc_id: view.batch.rpc_id, session_id: view.batch.session_id },
               "Left to discuss. Waiting for dsh…");
  }

  async function decline() {
    if (view.busy) return;
    await send({ type: "question/decline", rpc_id: view.batch.rpc_id, session_id: view.batch.session_id },
               "Declined. Waiting for dsh…");
  }

  // ---------------------------------------------------------------- previews and notes

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
    block.dataset.label = option.label;
    block.classList.toggle("empty", !option.preview);
    block.textContent = option.preview ? clean(option.preview) : `No preview for ${clean(displayLabel(option.label))}`;
  }

  function noteField(d) {
    const box = el("input", { type: "text", id: "qc-note", disabled: view.busy, autocomplete: "off",
                              placeholder: "Anything to add to this answer (optional)…" });
    box.value = d.note || "";
    box.addEventListener("input", () => {
      draft().note = box.value;
      saveDrafts();
    });
    box.addEventListener("keydown", enterKey);
    return el("div", { class: "note-field" }, [el("label", { for: "qc-note", text: "Add a note" }), box]);
  }

  function optionBody(option) {
    const label = String(option.label);
    const parts = [el("span", { class: "label", text: displayLabel(label) })];
    if (RECOMMENDED.test(label)) parts.push(el("span", { class: "badge", text: "Recommended" }));
    if (option.description) parts.push(el("span", { class: "desc", text: option.description }));
    return parts;
  }

  function choice(option, i, d) {
    const pressed = d.selected.includes(option.label);
    return el("button", {
      type: "button", class: "option", "aria-pressed": pressed ? "true" : "false", disabled: view.busy,
      "data-label": option.label, onclick: () => choose(option.label),
    }, [el("span", { class: "key", "aria-hidden": "true", text: i < 9 ? String(i + 1) : "" }), el("span", { class: "text" }, optionBody(option))]);
  }

  function checkbox(option, i, d) {
    const box = el("input", { type: "checkbox", disabled: view.busy, "data-label": option.label });
    box.checked = d.selected.includes(option.label);
    box.addEventListener("change", () => toggle(option.label, box.checked));
    box.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        advance();
      }
    });
    return el("label", { class: "option" }, [
      el("span", { class: "key", "aria-hidden": "true", text: i < 9 ? String(i + 1) : "" }),
      box, el("span", { class: "text" }, optionBody(option)),
    ]);
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

  function edited() {
    draft().skipped = false;
    view.error = "";
    saveDrafts();
  }

  function choose(label) {
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
      composer.querySelectorAll("button.option").forEach((b) => b.setAttribute("aria-pressed", "false"));
    }
    edited();
    refreshState();
  }

  function refreshState() {
    // update in place while typing, so the caret and IME state are left alone
    const q = question();
    const d = draft();
    const overrides = $("qc-overrides");
    if (overrides) overrides.hidden = !(q.multi_select && d.custom.trim() && d.selected.length);
    const error = $("qc-error");
    if (error) error.textContent = view.error || "";
    const dots = composer.querySelectorAll(".dots li");
    dots.forEach((dot, i) => {
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
    if (!view || index < 0 || index > lastStep(view.batch)) return;
    view.index = index;
    view.error = "";
    saveDrafts();
    render(focus);
  }

  function advance() {
    if (view.busy) return;
    const total = view.batch.questions.length;
    if (view.index < total - 1) go(view.index + 1, true);
    else if (reviewed(view.batch) && !reviewing()) {
      if (!showMissing()) go(total, true);
    } else submit();
  }

  function skip() {
    if (view.busy) return;
    view.drafts[view.index] = { selected: [], custom: "", skipped: true, note: draft().note || "" };
    view.error = "";
    saveDrafts();
    advance();
  }

  function answers() {
    return view.batch.questions.map((q, i) => {
      const d = view.drafts[i];
      const custom = d.custom.trim();
      const item = d.skipped ? { id: q.id, selected: [] }
        : custom ? { id: q.id, selected: [], custom } : { id: q.id, selected: d.selected.slice() };
      const note = (d.note || "").trim();
      if (note) item.note = note; // sent only when given, as the seam returns it
      return item;
    });
  }

  function showMissing() {
    // the first incomplete question, focused with the reason; false when there is none
    const missing = view.drafts.findIndex((_, i) => !complete(i));
    if (missing < 0) return false;
    view.index = missing;
    view.error = INCOMPLETE;
    saveDrafts();
    render(true);
    return true;
  }

  async function submit() {
    if (showMissing()) return;
    await send({ type: "question/answer", rpc_id: view.batch.rpc_id, session_id: view.batch.session_id,
                 answers: answers() }, "Sent. Waiting for dsh…");
  }

  async function dismiss() {
    if (view.busy) return;
    await send({ type: "question/cancel", rpc_id: view.batch.rpc_id, session_id: view.batch.session_id },
               "Dismissed. Waiting for dsh…");
  }

  async function respond(frame) {
    // one frame to /api/respond: dsh's ack, or why dsh could not be reached
    try {
      return { ack: await post("/api/respond", frame), failure: null };
    } catch (error) {
      return { ack: null, failure: `Could not reach dsh: ${error.message}` };
    }
  }

  async function send(frame, waiting) {
    const current = view;
    current.busy = true;
    current.error = "";
    render(false);
    const { ack, failure } = await respond(frame);
    if (view !== current) return; // resolved while the reply was on its way
    if (ack && ack.accepted) {
      // stay busy: the composer leaves only when question/resolved arrives
      current.waiting = waiting;
      refreshStatus();
      return;
    }
    current.busy = false;
    const at = ack && ack.reason === "bad-response" ? refusedAt(ack.message) : -1;
    if (at >= 0 && at < current.batch.questions.length) current.index = at;
    if (ack) current.error = (REFUSED[ack.reason] || "Not accepted: ") + (ack.reason === "not-pending" ? "" : clean(ack.message || ack.reason));
    else current.error = failure;
    render(false);
    $("qc-primary").focus();
  }

  // ---------------------------------------------------------------- review step

  function reviewed(batch) {
    // a batch of two or more ends on a review step, and so does one that asks for it
    // (an MCP server's form, even of one question)
    return batch.questions.length > 1 || Boolean(batch.review);
  }

  function lastStep(batch) {
    // the review step is one past the last question
    return reviewed(batch) ? batch.questions.length : batch.questions.length - 1;
  }

  function reviewing() {
    return reviewed(view.batch) && view.index === view.batch.questions.length;
  }

  function renderReview(focus) {
    const total = view.batch.questions.length;
    composer.replaceChildren();
    composer.setAttribute("aria-busy", view.busy ? "true" : "false");
    const top = el("div", { class: "qc-top" }, [
      el("span", { class: "kicker", text: "dsh asks" }),
      el("nav", { class: "pager", "aria-label": "Questions" }, [
        el("button", { type: "button", class: "icon", "aria-label": "Previous question", disabled: view.busy,
                       onclick: () => go(total - 1, true), text: "‹" }),
        el("span", { class: "count", "aria-live": "polite", text: "Review" }),
      ]),
      el("button", { type: "button", class: "icon dismiss", "aria-label": "Dismiss all questions",
                     title: "Dismiss all questions", disabled: view.busy, onclick: dismiss, text: "✕" }),
    ]);
    const rows = el("ol", { class: "review", "aria-labelledby": "qc-text" }, view.batch.questions.map((q, i) => {
      const item = answers()[i];
      const open = !complete(i);
      return el("li", {}, [el("button", {
        type: "button", class: "review-row" + (open ? " open" : ""), disabled: view.busy, "data-index": String(i),
        "aria-label": `Change answer ${i + 1}`, onclick: () => go(i, true),
      }, [
        el("span", { class: "key", "aria-hidden": "true", text: i < 9 ? String(i + 1) : "" }),
        el("span", { class: "name", text: questionName(q, q.id) }),
        el("span", { class: "value" }, [
          document.createTextNode(clean(open ? "not answered yet" : reviewValue(q, item))),
          item.note ? el("span", { class: "review-note", text: `Note: ${item.note}` }) : null,
        ]),
      ])]);
    }));
    const body = [el("h2", { id: "qc-text", tabindex: "-1", text: "Review your answers" }), rows,
                  el("p", { id: "qc-error", class: "error", role: "alert", text: view.error || "" })];
    const primary = el("button", { type: "button", class: "primary", id: "qc-primary", disabled: view.busy,
                                   onclick: () => submit(), text: view.busy ? "Sending…" : "Submit" });
    const actions = el("div", { class: "actions" }, [
      declineButton(),
      discussButton(),
      el("span", { class: "keys", "aria-hidden": "true", text: "Enter ↵ submit · 1-9 or click a row to change it" }),
      primary,
    ]);
    composer.append(top, el("div", { class: "qc-body" }, body), actions);
    if (focus) primary.focus();
  }

  // ---------------------------------------------------------------- permission card

  function argumentsText(value, pretty) {
    if (typeof value === "string") return value;
    try {
      return JSON.stringify(value, null, pretty ? 2 : undefined);
    } catch (_) {
      return String(value);
    }
  }

  function renderPermission(focus) {
    const request = asking.request;
    const hints = request.hints || {};
    const destructive = hints.destructive === true;
    composer.replaceChildren();
    composer.setAttribute("aria-busy", asking.busy ? "true" : "false");
    const claimant = request.server ? "The server" : "The tool";
    const top = el("div", { class: "qc-top" }, [
      el("span", { class: "kicker", text: `${request.server ? clean(request.server) : "dsh"} asks permission` }),
      request.server ? el("span", { class: "chip", text: `server ${request.server}` }) : null,
    ]);
    const words = hintWords(hints);
    const body = [el("h2", { id: "qc-text", tabindex: "-1" }, [
      document.createTextNode("Run "), el("code", { class: "tool-name", text: request.tool }), document.createTextNode("?"),
    ])];
    const what = clean(request.description || "").replace(/\s+/g, " ").trim();
    if (what) body.push(el("p", { class: "hint pc-what", text: `What it does: ${shorten(what, MAX_DESCRIPTION)}` }));
    if (destructive) {
      // said once: the warning carries the claim, the hints line the rest
      body.push(el("p", { class: "warning", role: "note", id: "pc-warning",
                          text: `${claimant} says it may change or delete things that cannot be restored.` }));
    }
    body.push(el("details", { class: "tool pc-arguments" }, [
      el("summary", {}, [el("span", { class: "name", text: "arguments" }),
                         el("span", { class: "args", text: shorten(argumentsText(request.arguments, false), 90) })]),
      el("pre", { class: "detail", text: argumentsText(request.arguments, true) }),
    ]));
    const rest = destructive ? words.slice(1) : words;
    if (rest.length) body.push(el("p", { class: "hint pc-hints", text: `${claimant} says: ${rest.join(" · ")}` }));
    const reason = el("textarea", { id: "pc-reason", rows: 1, disabled: asking.busy, "aria-describedby": "qc-error",
                                    placeholder: "Reason (optional, sent to the model with Deny)…" });
    reason.value = asking.reason;
    reason.addEventListener("input", () => { asking.reason = reason.value; });
    body.push(el("div", { class: "other" }, [el("label", { for: "pc-reason", text: "Why (optional)" }), reason]));
    body.push(el("p", { id: "qc-error", class: "error", role: "alert", text: asking.error || "" }));
    const buttons = DECISIONS.map(([decision, label, kind]) => el("button", {
      type: "button", class: `${kind} decision`, "data-decision": decision, disabled: asking.busy,
      onclick: () => decide(decision), text: label,
    }));
    composer.append(top, el("div", { class: `qc-body${destructive ? " destructive" : ""}` }, body),
                    el("div", { class: "actions" }, buttons));
    if (focus) buttons[destructive ? 3 : 0].focus();
  }

  async function decide(decision) {
    if (!asking || asking.busy) return;
    const current = asking;
    current.busy = true;
    current.error = "";
    renderPermission(false);
    // every settling frame names the session of what it settles (the one ownership rule)
    const frame = { type: "permission/decision", rpc_id: current.request.rpc_id,
                    session_id: current.request.session_id, decision };
    if (decision === "deny" && current.reason.trim()) frame.message = current.reason.trim();
    const { ack, failure } = await respond(frame);
    if (asking !== current) return; // resolved while the reply was on its way
    if (ack && ack.accepted) {
      refreshStatus(); // the card leaves on permission/resolved
      return;
    }
    current.busy = false;
    if (ack) current.error = (REFUSED[ack.reason] || "Not accepted: ") + (ack.reason === "not-pending" ? "" : clean(ack.message || ack.reason));
    else current.error = failure;
    renderPermission(false);
  }

  function permissionResolved(event) {
    const request = permissions.get(event.rpc_id);
    const wasShown = asking && asking.request.rpc_id === event.rpc_id;
    permissions.delete(event.rpc_id);
    const tool = request ? request.tool : "the tool";
    let text = event.outcome === "decided" ? `${DECIDED[event.decision] || event.decision}: ${tool}`
      : `Permission for ${tool} ${event.outcome}`;
    if (event.message) text += ` (${event.message})`;
    note(text, event.decision === "deny" ? "cancelled" : event.outcome === "decided" ? "answered" : event.outcome);
    if (wasShown) {
      const hadFocus = composer.contains(document.activeElement);
      closeView();
      showNext();
      if (hadFocus && !view && !asking) (messageForm.hidden ? $("dock") : messageBox).focus();
    }
  }

  // ---------------------------------------------------------------- message composer

  function sendMessage(event) {
    if (event) event.preventDefault();
    const content = messageBox.value;
    if (!content.trim()) return;
    const error = $("message-error");
    error.textContent = "";
    post("/api/message", { content }).then(() => {
      if (messageBox.value === content) messageBox.value = "";
      grow();
    }).catch((failure) => {
      error.textContent = `Not sent: ${failure.message}`;
    });
  }

  function grow() {
    messageBox.style.height = "auto";
    messageBox.style.height = Math.min(messageBox.scrollHeight, 240) + "px";
  }

  // The placeholder cannot wrap: a phone (390 px) cut the full one mid-word. The longest
  // of these that fits the box is shown, measured in the box's own font.
  const placeholders = [messageBox.placeholder, "Message dsh…  (Enter sends)", "Message dsh…"];
  const measure = document.createElement("canvas").getContext("2d");

  function fitPlaceholder() {
    const style = getComputedStyle(messageBox);
    const room = messageBox.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    if (!measure || !(room > 0)) return;
    measure.font = style.font || `${style.fontSize} ${style.fontFamily}`;
    messageBox.placeholder = placeholders.find((text) => measure.measureText(text).width <= room)
      || placeholders[placeholders.length - 1];
  }

  if (window.ResizeObserver) new ResizeObserver(fitPlaceholder).observe(messageBox);
  messageForm.addEventListener("submit", sendMessage);
  messageBox.addEventListener("input", grow);
  messageBox.addEventListener("keydown", (event) => {
    if (event.key !== "Enter" || event.shiftKey || event.isComposing || event.keyCode === 229) return;
    sendMessage(event);
  });
  document.addEventListener("keydown", (event) => {
    // 1-9 choose an option while focus is not in a text field
    if (!view || view.busy || event.altKey || event.ctrlKey || event.metaKey) return;
    const target = event.target;
    if (target && (target.tagName === "TEXTAREA" || target.tagName === "INPUT" && target.type !== "checkbox")) return;
    if (!/^[1-9]$/.test(event.key)) return;
    const items = composer.querySelectorAll("button.option, input[type=checkbox], button.review-row");
    const item = items[Number(event.key) - 1];
    if (!item) return;
    event.preventDefault();
    item.focus();
    item.click();
  });

  // the composer grows (a question, a narrow window): keep the newest messages in view
  if (window.ResizeObserver) new ResizeObserver(() => follow()).observe($("dock"));

  showNext();
  connect();
})();

// dsh web: the transcript, the message composer and the question composer.
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
  const OUTCOMES = {
    answered: "Answered",
    cancelled: "Questions dismissed (cancelled)",
    declined: "Questions declined (declined)",
    aborted: "Questions withdrawn (aborted)",
    timeout: "Questions timed out (timeout)",
  };

  const $ = (id) => document.getElementById(id);
  const transcript = $("transcript");
  const composer = $("composer");
  const messageForm = $("message-form");
  const messageBox = $("message");
  const statusLine = $("status");

  const batches = new Map(); // rpc_id -> question/requested event, oldest first
  let view = null; // the batch on screen: {batch, index, drafts, busy, settled}
  let streaming = null; // {reasoning, text} elements of the assistant message being streamed
  const toolLines = new Map();
  let working = false;

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
    const source = new EventSource("/api/events");
    source.addEventListener("open", () => {
      // a (re)connect replays pending batches and the transcript from the start
      transcript.replaceChildren();
      streaming = null;
      toolLines.clear();
      setStatus("connected", "connected");
    });
    source.addEventListener("error", () => setStatus("reconnecting…", "offline"));
    const types = [
      "session/started", "user/message", "assistant/delta", "assistant/reasoning",
      "assistant/message", "tool/started", "tool/result", "turn/completed",
      "question/requested", "question/resolved", "response/ack", "error", "replay/done",
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
      case "replay/done":
        for (const rpcId of Array.from(batches.keys())) {
          if (!event.pending.includes(rpcId)) batches.delete(rpcId);
        }
        if (view && !batches.has(view.batch.rpc_id)) closeView();
        showNext();
        break;
      case "error":
        append(el("div", { class: "msg error", role: "alert", text: `${event.code}: ${event.message}` }));
        setWorking(false);
        break;
      default:
        break;
    }
  }

  // ---------------------------------------------------------------- transcript

  function append(node) {
    transcript.append(node);
    follow();
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
    const state = el("span", { class: "state", text: "running" });
    const summary = el("summary", {}, [
      el("span", { class: "name", text: event.name }),
      el("span", { class: "args", text: shorten(event.arguments, 90) }),
      state,
    ]);
    const body = el("pre", { class: "detail", text: event.arguments });
    const line = el("details", { class: "tool", "data-call": event.call_id }, [summary, body]);
    toolLines.set(event.call_id, { line, state, body });
    append(line);
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
  }

  function note(text, outcome) {
    append(el("div", { class: `note ${outcome || ""}`, "data-outcome": outcome, text }));
  }

  function setWorking(on) {
    working = on;
    document.body.classList.toggle("working", on);
    if (statusLine.dataset.state !== "offline") setStatus(on ? "working…" : "connected", "connected");
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
      drafts: batch.questions.map(() => ({ selected: [], custom: "", skipped: false })),
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
    if (!view && batches.size) {
      const batch = batches.values().next().value;
      const stored = loadDrafts(batch);
      view = { batch, index: Math.min(stored.index, batch.questions.length - 1), drafts: stored.drafts,
               busy: false, settled: false };
      saveDrafts();
      composer.hidden = false;
      messageForm.hidden = true;
      $("idle").hidden = true;
      render(true);
      setStatus("question waiting", "asking");
    } else if (!view) {
      composer.hidden = true;
      composer.replaceChildren();
      messageForm.hidden = MODE !== "chat";
      $("idle").hidden = MODE === "chat";
      if (statusLine.dataset.state === "asking") setStatus("connected", "connected");
    }
  }

  function closeView() {
    view = null;
    composer.replaceChildren();
  }

  function resolved(event) {
    const wasShown = view && view.batch.rpc_id === event.rpc_id;
    batches.delete(event.rpc_id);
    forgetDrafts(event.rpc_id);
    let text = OUTCOMES[event.outcome] || event.outcome;
    if (event.outcome === "answered" && event.answer) text += ": " + summarize(event.answer);
    note(text, event.outcome);
    if (wasShown) {
      const hadFocus = composer.contains(document.activeElement);
      closeView();
      showNext();
      if (hadFocus && !view) (messageForm.hidden ? $("dock") : messageBox).focus();
    }
  }

  function summarize(answer) {
    return (answer.answers || []).map((item) => {
      const value = item.custom != null ? `"${item.custom}"` : item.selected.length ? item.selected.join(", ") : "skipped";
      return `${item.id} = ${value}`;
    }).join("; ");
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
        el("button", { type: "button", class: "icon", "aria-label": "Next question", disabled: last || view.busy,
                       onclick: () => go(view.index + 1, true), text: "›" }),
      ]),
      total > 1 ? dots : null,
      el("button", { type: "button", class: "icon dismiss", "aria-label": "Dismiss all questions",
                     title: "Dismiss all questions", disabled: view.busy, onclick: dismiss, text: "✕" }),
    ]);

    const body = [...askerHeading(view.batch),
                  el("h2", { id: "qc-text", tabindex: "-1", text: q.question })];
    if (q.detail) body.push(el("p", { id: "qc-detail", class: "detail", text: q.detail }));
    body.push(...askerNotes(q));

    let group = null;
    if (options.length) {
      group = el("div", { class: multi ? "options multi" : "options single", role: "group",
                          "aria-labelledby": "qc-text", "aria-describedby": q.detail ? "qc-detail" : undefined });
      options.forEach((option, i) => group.append(multi ? checkbox(option, i, d) : choice(option, i, d)));
      group.addEventListener("keydown", arrowKeys);
      body.push(group);
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
    const overrides = el("p", { id: "qc-overrides", class: "hint", text: "Your text replaces the checked options.",
                                hidden: !(multi && d.custom.trim() && d.selected.length) });
    body.push(el("div", { class: "other", hidden: !takesText(q) }, [
      el("label", { for: otherId, text: options.length ? "Other" : "Your answer" }), other, overrides,
    ]));
    body.push(el("p", { id: "qc-error", class: "error", role: "alert", text: view.error || "" }));

    const primary = el("button", { type: "button", class: "primary", id: "qc-primary", disabled: view.busy,
                                   onclick: () => advance(), text: view.busy ? "Sending…" : last ? "Submit" : "Next" });
    const actions = el("div", { class: "actions" }, [
      canSkip(q) ? el("button", { type: "button", class: "quiet", id: "qc-skip", disabled: view.busy, onclick: skip,
                                  text: q.default ? "Skip (use the default)" : "Skip this question" }) : null,
      view.batch.declinable ? el("button", { type: "button", class: "quiet", id: "qc-decline", disabled: view.busy,
                                             onclick: decline, text: "Decline" }) : null,
      el("span", { class: "keys", "aria-hidden": "true", text: "Enter ↵ " + (last ? "submit" : "next") + " · Shift+Enter new line" }),
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

  function askerHeading(batch) {
    // who asks, when it is not the model: "git asks: Configure the deploy"
    const source = batch.source;
    if (!source || !source.name) return [];
    const text = source.message ? `${source.name} asks: ${source.message}` : `${source.name} asks`;
    return [el("p", { id: "qc-source", class: "source", text: clean(text) })];
  }

  function askerNotes(q) {
    const notes = [];
    if (q.warning) notes.push(el("p", { id: "qc-warning", class: "warning", role: "note", text: clean(q.warning) }));
    const parts = [];
    if (q.default) {
      const value = q.default.custom != null ? q.default.custom : (q.default.selected || []).join(", ");
      parts.push(`Default: ${value} (used when you skip)`);
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

  async function decline() {
    if (view.busy) return;
    await send({ type: "question/decline", rpc_id: view.batch.rpc_id, session_id: view.batch.session_id },
               "Declined. Waiting for dsh…");
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
    return el("label", { class: "option" }, [box, el("span", { class: "text" }, optionBody(option))]);
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
    if (!view || index < 0 || index >= view.batch.questions.length) return;
    view.index = index;
    view.error = "";
    saveDrafts();
    render(focus);
  }

  function advance() {
    if (view.busy) return;
    if (view.index < view.batch.questions.length - 1) go(view.index + 1, true);
    else submit();
  }

  function skip() {
    if (view.busy) return;
    view.drafts[view.index] = { selected: [], custom: "", skipped: true };
    view.error = "";
    saveDrafts();
    advance();
  }

  function answers() {
    return view.batch.questions.map((q, i) => {
      const d = view.drafts[i];
      const custom = d.custom.trim();
      if (d.skipped) return { id: q.id, selected: [] };
      if (custom) return { id: q.id, selected: [], custom };
      return { id: q.id, selected: d.selected.slice() };
    });
  }

  async function submit() {
    const missing = view.drafts.findIndex((_, i) => !complete(i));
    if (missing >= 0) {
      view.index = missing;
      view.error = INCOMPLETE;
      saveDrafts();
      render(true);
      return;
    }
    await send({ type: "question/answer", rpc_id: view.batch.rpc_id, session_id: view.batch.session_id,
                 answers: answers() }, "Sent. Waiting for dsh…");
  }

  async function dismiss() {
    if (view.busy) return;
    await send({ type: "question/cancel", rpc_id: view.batch.rpc_id }, "Dismissed. Waiting for dsh…");
  }

  async function send(frame, waiting) {
    const current = view;
    current.busy = true;
    current.error = "";
    render(false);
    let ack = null;
    let failure = null;
    try {
      ack = await post("/api/respond", frame);
    } catch (error) {
      failure = `Could not reach dsh: ${error.message}`;
    }
    if (view !== current) return; // resolved while the reply was on its way
    if (ack && ack.accepted) {
      // stay busy: the composer leaves only when question/resolved arrives
      setStatus(waiting, "asking");
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
    const items = composer.querySelectorAll("button.option, input[type=checkbox]");
    const item = items[Number(event.key) - 1];
    if (!item) return;
    event.preventDefault();
    item.focus();
    item.click();
  });

  showNext();
  connect();
})();

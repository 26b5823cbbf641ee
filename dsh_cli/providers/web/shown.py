"""What the page shows of each event, decided here so the page only renders it.

Every event the browser receives is the relay's event plus one ``shown`` object: each text
a human will read, already sanitised (``core/sanitize.py``), worded by the modules every
UI shares (``permissions/wording.py``, ``core/recommended.py``, the question vocabulary)
and cut where the page shows a short line. The page reads display text only from
``shown``; the event's own fields stay as the relay sends them, for what the page sends
back (ids, option labels). ``PageText`` remembers what a later event needs (a batch's
questions for its answer line, a tool call's questions for its result, a permission
request's tool), each until the event that ends it.
"""

from __future__ import annotations

import json
from typing import Any

from dsh_cli.core.decisions import DECIDED_WORDS
from dsh_cli.core.limits import WEB_REMEMBERED
from dsh_cli.core.outcomes import Outcome
from dsh_cli.core.recommended import display_label, is_recommended
from dsh_cli.core.sanitize import escape_invisible, one_line, sanitize, sanitize_line
from dsh_cli.interaction.vocabulary import ANSWER_FIRST, LABEL_JOINER, NOT_ANSWERED, SKIPPED

__all__ = ["PageText", "refusal_shown", "refusal_text"]

ASK_TOOL = "ask_user_question"
NAME_WIDTH = 30  # a question's name in a review row or an answer line
ARGS_WIDTH = 90  # a tool call's arguments on its one line
LINE_WIDTH = 200  # an answer line on a tool call's line
DECIDED: dict[str, str] = {decision: words[0].upper() + words[1:]
                           for decision, words in DECIDED_WORDS.items()}
DECIDED["allow_always"] += " for {scope} (undo: {undo})"
BUTTON_KIND = {"allow_once": "primary", "deny": "danger"}
SKIP_LABELS = ("Skip this question", "Skip (use the default)")  # without, with a default
NOT_PENDING_TEXT = ("Not accepted: this batch is no longer pending (answered in another tab, "
                    "or withdrawn).")
_MAX_REMEMBERED = WEB_REMEMBERED  # batches, calls and requests at once (a peer's flood)


def refusal_text(ack: dict[str, Any]) -> str:
    """Why a response was not accepted, as the page says it."""
    if ack.get("reason") == "not-pending":
        return NOT_PENDING_TEXT
    return "Not accepted: " + sanitize_line(str(ack.get("message") or ack.get("reason") or ""))


def refusal_shown(ack: dict[str, Any]) -> dict[str, Any]:
    """A refused ack's ``shown``: its words, and ``at``, the answer it names (else None)."""
    from dsh_cli.interaction.validation import failing_answer

    named = failing_answer(str(ack.get("message") or "")) \
        if ack.get("reason") == "bad-response" else None
    return {"error": refusal_text(ack), "at": named}


class PageText:
    """Adds ``shown`` to each event on its way to the page."""

    def __init__(self) -> None:
        self._batches: dict[str, list[dict[str, Any]]] = {}  # rpc_id -> questions
        self._calls: dict[str, list[dict[str, Any]]] = {}  # call_id -> asked questions
        self._requests: dict[str, Any] = {}  # permission rpc_id -> its PermissionRequest

    def add(self, data: dict[str, Any], last_answers: dict[str, list[str]] | None = None
            ) -> dict[str, Any]:
        """``data`` with its ``shown`` object (a copy; events without text get none)."""
        maker = getattr(self, "_" + str(data.get("type", "")).replace("/", "_"), None)
        if maker is None:
            return data
        try:
            shown = maker(data, last_answers) if data.get("type") == "question/requested" \
                else maker(data)
        except (KeyError, TypeError, ValueError, AttributeError):
            shown = None  # a malformed event shows nothing rather than breaking the feed
        return data if shown is None else {**data, "shown": shown}

    # -- the transcript ---------------------------------------------------------------

    def _session_started(self, data: dict[str, Any]) -> dict[str, Any]:
        return {"title": sanitize_line(f"{data.get('model')} · {data.get('session_id')}")}

    def _user_message(self, data: dict[str, Any]) -> dict[str, Any]:
        return {"content": sanitize(str(data.get("content") or ""))}

    _assistant_message = _user_message

    def _assistant_delta(self, data: dict[str, Any]) -> dict[str, Any]:
        return {"text": sanitize(str(data.get("text") or ""))}

    _assistant_reasoning = _assistant_delta

    def _error(self, data: dict[str, Any]) -> dict[str, Any]:
        return {"text": sanitize_line(f"{data.get('code')}: {data.get('message')}")}

    def _tool_started(self, data: dict[str, Any]) -> dict[str, Any]:
        arguments = str(data.get("arguments") or "")
        questions = _asked_questions(arguments) if data.get("name") == ASK_TOOL else None
        if questions is not None:
            self._remember(self._calls, str(data.get("call_id")), questions)
            count = len(questions)
            name = f"asked {count} question{'s' if count != 1 else ''}"
            return {"name": name, "args": "", "detail": sanitize(arguments)}
        return {"name": sanitize_line(str(data.get("name") or "")),
                "args": one_line(arguments, ARGS_WIDTH), "detail": sanitize(arguments)}

    def _tool_result(self, data: dict[str, Any]) -> dict[str, Any]:
        error = data.get("error")
        shown: dict[str, Any] = {"content": sanitize(str(data.get("content") or ""))}
        if error:
            shown["state"] = "✗ " + sanitize_line(str(error.get("code") or error.get("name")))
        else:
            shown["state"] = "✓"
        questions = self._calls.pop(str(data.get("call_id")), None)
        if questions is not None and not error:
            try:
                answer = json.loads(str(data.get("content")))
            except ValueError:
                answer = None
            if isinstance(answer, dict) and isinstance(answer.get("answers"), list):
                shown["args"] = one_line(answer_line(questions, answer), LINE_WIDTH)
        return shown

    # -- questions --------------------------------------------------------------------

    def _question_requested(self, data: dict[str, Any],
                            last_answers: dict[str, list[str]] | None) -> dict[str, Any]:
        from dsh_cli.interaction import AskUserQuestionRequest

        self._remember(self._batches, str(data["rpc_id"]), list(data["questions"]))
        source = data.get("source")
        named = _named(source)  # an elicitation form's; a desk's source says who, not what
        request = AskUserQuestionRequest.model_validate(
            {"questions": data["questions"], "source": source if named else None,
             "review": data.get("review") is True})
        questions = []
        for item, raw in zip(request.questions, data["questions"], strict=True):
            heading = request.heading(item.id) if named else None
            last = set((last_answers or {}).get(item.id) or [])
            questions.append({
                "heading": sanitize_line(heading) if heading else None,
                "header": sanitize_line(item.header) if item.header else None,
                "question": sanitize(item.question),
                "detail": sanitize(item.detail) if item.detail else None,
                "warning": sanitize_line(item.warning) if item.warning else None,
                "notes": _notes(item),
                "name": _question_name(raw, item.id),
                "default": sanitize_line(item.default_text() or "") or None,
                # the rules the terminal keeps too, decided once in the seam's vocabulary
                "can_skip": item.can_skip,
                "takes_text": item.takes_text,
                "skip_label": SKIP_LABELS[item.default is not None] if item.can_skip else None,
                "skipped": sanitize_line(item.skipped_text()),  # a skip, read back
                "options": [{
                    "label": sanitize_line(display_label(option.label)),
                    "recommended": is_recommended(option.label),
                    "last": option.label in last,
                    "description": sanitize(option.description) if option.description else None,
                    "preview": sanitize(option.preview) if option.preview else None,
                } for option in item.options or []],
            })
        # a form (an MCP server's) takes no note and is not discussed; ``joiner`` joins the
        # labels of an answer the page reads back before it is sent
        # ``words``: what the page says of a question left open, in the terminal's words
        return {"questions": questions, "form": named, "review": request.reviewed,
                "joiner": LABEL_JOINER,
                "words": {"answer_first": f"Please {ANSWER_FIRST}.", "open": NOT_ANSWERED}}

    def _question_resolved(self, data: dict[str, Any]) -> dict[str, Any]:
        questions = self._batches.pop(str(data.get("rpc_id")), None)
        outcome = Outcome.of_event(data.get("outcome"))
        text = outcome.shown() if outcome else sanitize_line(str(data.get("outcome")))
        answer = data.get("answer")
        if outcome is Outcome.ANSWERED and isinstance(answer, dict):
            text += ": " + answer_line(questions or [], answer)
        if outcome is Outcome.DISCUSSED and questions:
            text += ": " + " · ".join(sanitize_line(str(q.get("question"))) for q in questions)
        return {"note": text}

    # -- permissions ------------------------------------------------------------------

    def _permission_requested(self, data: dict[str, Any]) -> dict[str, Any]:
        from dsh_cli.permissions import wording
        from dsh_cli.permissions.vocabulary import Hints, PermissionRequest

        hints = data.get("hints") or {}
        # a desk's request is another agent's, granted per input where it runs
        per_input = data.get("scope") == "input"
        cwd = (data.get("source") or {}).get("cwd") if per_input else None
        request = PermissionRequest(
            tool=str(data["tool"]), arguments=data.get("arguments"), server=data.get("server"),
            hints=Hints(hints.get("read_only"), hints.get("destructive"),
                        hints.get("idempotent"), hints.get("open_world")),
            description=data.get("description"), scope="input" if per_input else "definition",
            cwd=cwd if isinstance(cwd, str) else None)
        self._remember(self._requests, str(data["rpc_id"]), request)
        claimant = "The server" if request.server else "The tool"
        warning, _, words = wording.hint_words(request.hints, request.server)
        server = sanitize_line(request.server) if request.server else None
        what = wording.description(request)
        return {
            "kicker": f"{server or 'dsh'} asks permission",
            "chip": f"server {server}" if server else None,
            "tool": escape_invisible(request.tool),
            "what": f"What it does: {what}" if what else None,
            "warning": (f"{claimant} says it may change or delete things that cannot be "
                        "restored.") if warning else None,
            # said once: with the warning, the hints line says the rest
            "hints": f"{claimant} says: {' · '.join(words[1:] if warning else words)}"
                     if (words[1:] if warning else words) else None,
            "arguments": _granted(request.arguments),
            "choices": [{"decision": decision, "label": _button(label),
                         "kind": BUTTON_KIND.get(decision, "")}
                        for decision, label in wording.choice_labels(request, reason_key=None)],
        }

    def _permission_resolved(self, data: dict[str, Any]) -> dict[str, Any]:
        from dsh_cli.permissions import wording

        request = self._requests.pop(str(data.get("rpc_id")), None)
        name = escape_invisible(request.tool) if request is not None else "the tool"
        decision = data.get("decision")
        if data.get("outcome") == "decided" and isinstance(decision, str):
            scope = wording.always_scope(request) if request is not None \
                else "this tool as defined now"
            words = DECIDED.get(decision, sanitize_line(decision)).format(
                scope=scope, undo=wording.UNDO)
            text = f"{words}: {name}"
        else:
            text = f"Permission for {name} {sanitize_line(str(data.get('outcome')))}"
        if data.get("message"):
            text += f" ({sanitize_line(str(data['message']))})"
        # the note looks like a question's that ended the same way: a denial as dismissed
        style = "cancelled" if decision == "deny" else "answered" \
            if data.get("outcome") == "decided" else sanitize_line(str(data.get("outcome")))
        return {"note": text, "style": style}

    def _remember(self, table: dict[str, Any], key: str, value: Any) -> None:
        table[key] = value
        while len(table) > _MAX_REMEMBERED:
            del table[next(iter(table))]


def answer_line(questions: list[dict[str, Any]], answer: dict[str, Any]) -> str:
    """The closing line: header-named answers, e.g. ``Stack: Go + chi · Name: acme``."""
    by_id = {str(q.get("id")): q for q in questions if isinstance(q, dict)}
    parts = []
    for item in answer.get("answers") or []:
        if not isinstance(item, dict):
            continue
        name = _question_name(by_id.get(str(item.get("id"))), str(item.get("id")))
        parts.append(f"{name}: {answer_text(item)}")
    return " · ".join(parts)


def answer_text(item: dict[str, Any]) -> str:
    """One answer as read back: the typed text, else the labels chosen, else ``skipped``."""
    custom = item.get("custom")
    if custom is not None and str(custom).strip():
        return sanitize_line(str(custom).strip())
    selected = item.get("selected") or []
    if selected:
        return LABEL_JOINER.join(sanitize_line(display_label(str(label))) for label in selected)
    return SKIPPED


def _question_name(question: dict[str, Any] | None, fallback: str) -> str:
    """A question's short name: its header, else its text, else its id."""
    found = (question or {}).get("header") or (question or {}).get("question") or fallback
    return one_line(str(found or ""), NAME_WIDTH)


def _named(source: Any) -> bool:
    return isinstance(source, dict) and bool(source.get("name"))


def _notes(item: Any) -> str | None:
    """The asker's rules in words: the default (or required), a multi-select's count."""
    parts = []
    default = item.default_text()
    if default is not None:
        parts.append(f"Default: {default} (used when you skip)")
    elif item.required:
        parts.append("Required")
    if item.multi_select and (item.min_items is not None or item.max_items is not None):
        low, high = item.min_items or 0, item.max_items
        parts.append(f"Choose {low}-{high}" if high is not None else f"Choose at least {low}")
    return sanitize_line(" · ".join(parts)) if parts else None


def _asked_questions(arguments: str) -> list[dict[str, Any]] | None:
    """The questions of an ``ask_user_question`` call's arguments (a model's JSON text)."""
    try:
        parsed = json.loads(arguments)
        if isinstance(parsed, str):
            parsed = json.loads(parsed)
    except ValueError:
        return None
    questions = parsed.get("questions") if isinstance(parsed, dict) else None
    if not isinstance(questions, list):
        return None
    return [q for q in questions if isinstance(q, dict)]


def _granted(arguments: Any) -> str:
    """What a grant covers, whole: pretty JSON, each line with its invisible characters
    escaped (never cut, never folded)."""
    if isinstance(arguments, str):
        text = arguments
    else:
        try:
            text = json.dumps(arguments, indent=2, ensure_ascii=False)
        except (TypeError, ValueError):
            text = repr(arguments)
    return "\n".join(escape_invisible(line) for line in text.split("\n"))


def _button(label: str) -> str:
    """A choice's words as a button: capitalised, the command unquoted (no backticks)."""
    plain = label.replace("`", "")
    return plain[:1].upper() + plain[1:]

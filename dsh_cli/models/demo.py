"""The built-in offline demo model: what a newcomer sees first, with no key and no network.

On any request it asks a realistic batch (a single-select with a recommended option, a
multi-select with descriptions, an optionless free-text question), then answers in prose
that reflects exactly what was answered, typed, skipped or refused. When the notes server of
``dsh demo`` offers ``mcp__notes__write_note``, it first saves the plan as a note (a tool call
that asks permission), then says whether the note was saved or the write was refused.
A message with the word "async" gets one question asked with ``delivery: "async"`` instead
(``docs/async-questions.md``): the demo works on, and answers the answer when it arrives.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from typing import Any

from dsh_cli.core.sanitize import one_line
from dsh_cli.models.base import (
    Completion,
    ModelToolCall,
    RetryHook,
    StreamItem,
    TextDelta,
    ignore_retry,
)

__all__ = ["DEMO_QUESTIONS", "WRITE_NOTE", "DemoModel"]

WRITE_NOTE = "mcp__notes__write_note"

DEMO_QUESTIONS: list[dict[str, Any]] = [
    {
        "id": "stack",
        "header": "Stack",
        "question": "Which stack should the project use?",
        "options": [
            {"label": "Python + FastAPI (Recommended)",
             "description": "Typed, async, batteries included"},
            {"label": "Node.js + Express", "description": "One language from browser to server"},
            {"label": "Go + chi", "description": "One static binary, fast cold starts"},
        ],
    },
    {
        "id": "features",
        "header": "Features",
        "question": "Which features should the starter include?",
        "detail": "Used to generate the initial scaffold; more can be added later.",
        "multi_select": True,
        "options": [
            {"label": "Auth", "description": "Sign-in with OAuth and sessions"},
            {"label": "Billing", "description": "Subscriptions through a payment provider"},
            {"label": "Admin UI", "description": "An internal dashboard for support staff"},
            {"label": "CI", "description": "Tests and lint on every push"},
        ],
    },
    {"id": "name", "header": "Name", "question": "What should the project be called?"},
]

LICENSE_QUESTION: dict[str, Any] = {
    "id": "license", "header": "License", "question": "Which license should the project use?",
    "options": [{"label": "MIT", "description": "Short and permissive"},
                {"label": "Apache-2.0", "description": "Permissive, with a patent grant"},
                {"label": "GPL-3.0", "description": "Changes stay open"}],
}

# said first, so nobody mistakes the script for a model that read their message
_INTRO = ("I am dsh's offline demo, a scripted model: whatever you type, I ask these same "
          "three questions to show how dsh asks (say “async” in a message to see a question "
          "that does not hold me up). Before I set this up I need three decisions from you: "
          "the stack, the features, and a name.")
_ASYNC_INTRO = ("I will ask you about the license without waiting for the answer (an async "
                "question): it is drawn when my turn ends. Answer it then, or leave it "
                "pending (ctrl-t; /discuss in plain mode) and come back with f2 or /answer; "
                "/pending lists it.")
_ASYNC_WORD = re.compile(r"\basync\b", re.IGNORECASE)
# the user message that brings an async batch's outcome (interaction/later.py words it)
_ARRIVAL = re.compile(r"^(?:The user answered your async question|Your async question) "
                      r"\(ticket (\S+)\)")
_HEADERS = {"stack": "Stack", "features": "Features", "name": "Name"}
_REFUSALS = {
    "ASK_CANCELLED": "You dismissed the questions, so I have not set anything up. "
                     "Ask again whenever you are ready.",
    "NO_PROVIDER": "Nobody could answer my questions here (NO_PROVIDER), so I stopped before "
                   "choosing anything for you. Run in a terminal, or pass --answers FILE.",
    "ASK_TIMEOUT": "The questions timed out with no answer, so I have left everything as it is.",
    "ASK_ABORTED": "The questions were interrupted before they were answered, so nothing changed.",
    "INVALID_ANSWER": "The answers I received did not fit the questions, so I did not act on "
                      "them.",
}
_CHUNKS = re.compile(r"\S+\s*|\s+")


class DemoModel:
    """A deterministic, offline stand-in for a real model."""

    name = "demo"

    def __init__(self, *, delay: float = 0.0) -> None:
        self.delay = delay
        self.on_retry: RetryHook = ignore_retry  # nothing here is ever retried

    async def stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> AsyncIterator[StreamItem]:
        last = messages[-1] if messages else {}
        offered = {t.get("function", {}).get("name") for t in tools}
        can_ask = "ask_user_question" in offered
        arrival = _ARRIVAL.match(str(last.get("content") or "")) if last.get(
            "role") == "user" else None
        calls: list[ModelToolCall]
        if arrival is not None:
            text, calls = _on_arrival(arrival.group(1), str(last.get("content"))), []
        elif last.get("role") == "tool" and _ticket(last) is not None:
            text, calls = (f"Asked (ticket {_ticket(last)}); I carry on meanwhile, and your "
                           "answer reaches me as a message."), []
        elif last.get("role") == "tool" and _called(messages, last) == WRITE_NOTE:
            text, calls = _after_note(messages, last), []
        elif last.get("role") == "tool" and WRITE_NOTE in offered and _answered(last):
            turn = sum(1 for m in messages if m.get("role") == "assistant") + 1
            text, note = _note(last.get("content", ""), _topic(messages))
            calls = [ModelToolCall(id=f"demo_{turn}", name=WRITE_NOTE,
                                   arguments=json.dumps(note, ensure_ascii=False))]
        elif last.get("role") == "tool":
            text, calls = _summary(last.get("content", ""), _topic(messages)), []
        elif can_ask and _ASYNC_WORD.search(str(last.get("content") or "")):
            turn = sum(1 for m in messages if m.get("role") == "assistant") + 1
            arguments = json.dumps({"questions": [LICENSE_QUESTION], "delivery": "async"},
                                   ensure_ascii=False)
            text = _ASYNC_INTRO
            calls = [ModelToolCall(id=f"demo_{turn}", name="ask_user_question",
                                   arguments=arguments)]
        elif can_ask:
            turn = sum(1 for m in messages if m.get("role") == "assistant") + 1
            arguments = json.dumps({"questions": DEMO_QUESTIONS}, ensure_ascii=False)
            text = _INTRO
            calls = [ModelToolCall(id=f"demo_{turn}", name="ask_user_question",
                                   arguments=arguments)]
        else:
            text, calls = _without_questions(_topic(messages)), []
        for chunk in _CHUNKS.findall(text):
            if self.delay:
                await asyncio.sleep(self.delay)
            yield TextDelta(chunk)
        yield Completion(content=text, tool_calls=calls)


def _topic(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            return one_line(str(message.get("content") or ""), 60)
    return "your project"


def _display(label: str) -> str:
    from dsh_cli.core.recommended import display_label

    return display_label(label)


def _line(item: dict[str, Any]) -> tuple[str, str]:
    header = _HEADERS.get(item.get("id", ""), str(item.get("id")))
    if item.get("custom") is not None:
        return header, f"{item['custom']} (your own answer)"
    selected = item.get("selected") or []
    if selected:
        return header, ", ".join(_display(label) for label in selected)
    return header, "skipped"


def _summary(content: str, topic: str) -> str:
    try:
        result = json.loads(content)
    except (TypeError, json.JSONDecodeError):
        result = {}
    error = result.get("error") if isinstance(result, dict) else None
    if isinstance(error, dict):
        code = str(error.get("code", ""))
        return _REFUSALS.get(code, f"The questions failed ({code or error.get('name')}: "
                                   f"{error.get('message')}), so I did not act.")
    answers = {item.get("id"): item for item in result.get("answers", [])}
    lines = [f"- {header}: {value}" for header, value in
             (_line(answers[key]) for key in ("stack", "features", "name") if key in answers)]
    return f"Here is the plan for “{topic}”:\n" + "\n".join(lines) + "\n" + _next_step(answers)


def _next_step(answers: dict[str, dict[str, Any]]) -> str:
    name_item = answers.get("name", {})
    name = name_item.get("custom") or "untitled-project"
    stack_item = answers.get("stack", {})
    stack = stack_item.get("custom") or ", ".join(
        _display(label) for label in stack_item.get("selected") or []) or "the default stack"
    features = answers.get("features", {})
    chosen = features.get("custom") or ", ".join(features.get("selected") or [])
    extras = f" with {chosen}" if chosen else " with no extra features yet"
    return (f"Next I would scaffold {name} on {stack}{extras}. (This is the offline demo "
            "model: nothing was written.)")


def _called(messages: list[dict[str, Any]], result: dict[str, Any]) -> str | None:
    """The name of the tool whose result ``result`` is."""
    for message in reversed(messages):
        for call in message.get("tool_calls") or []:
            if call.get("id") == result.get("tool_call_id"):
                return str(call.get("function", {}).get("name"))
    return None


def _answered(result: dict[str, Any]) -> bool:
    """Whether a tool result is an answered question batch (not an error)."""
    try:
        data = json.loads(result.get("content") or "")
    except (TypeError, ValueError):
        return False
    return isinstance(data, dict) and isinstance(data.get("answers"), list)


def _name(content: str) -> str:
    answers = {item.get("id"): item for item in json.loads(content).get("answers", [])}
    name = str(answers.get("name", {}).get("custom") or "untitled-project")
    name = re.sub(r"[^A-Za-z0-9 ._-]+", "-", name).strip(" .-_")[:60]
    return name or "untitled-project"


def _note(content: str, topic: str) -> tuple[str, dict[str, str]]:
    """What to say while saving the plan, and ``write_note``'s arguments."""
    name = _name(content)
    plan = _summary(content, topic).rsplit("\n", 1)[0]  # the plan, without the next step
    # a newcomer is about to be asked permission for a tool they never set up: say whose
    return (f"I will save this plan as the note “{name}” so it is not lost, with the notes "
            "server dsh demo started for me (an MCP server: a program that gives me tools). "
            "Its tool asks you first.",
            {"name": name, "text": plan})


def _after_note(messages: list[dict[str, Any]], result: dict[str, Any]) -> str:
    """The plan again, and whether the note was saved or its write refused."""
    answers: dict[str, Any] = next((m for m in reversed(messages) if m.get("role") == "tool"
                    and _called(messages, m) == "ask_user_question"), {})
    plan = _summary(answers.get("content", ""), _topic(messages)).rsplit("\n", 1)[0]
    try:
        data = json.loads(result.get("content") or "")
    except (TypeError, ValueError):
        data = None
    error = data.get("error") if isinstance(data, dict) else None
    if not isinstance(error, dict):
        saved = " ".join(str(result.get("content") or "").split())
        return f"{plan}\nThe plan is saved as a note ({saved})."
    code = str(error.get("code", ""))
    if code == "PERMISSION_DENIED":
        return (f"{plan}\nYou did not let me write the note ({error.get('message')}), so "
                "nothing was saved.")
    return f"{plan}\nThe note could not be saved ({code}: {error.get('message')})."


def _ticket(result: dict[str, Any]) -> str | None:
    """The ticket of an async call's result (``{"accepted": true, "ticket": …}``), or None."""
    try:
        data = json.loads(result.get("content") or "")
    except (TypeError, ValueError):
        return None
    if isinstance(data, dict) and data.get("accepted") is True:
        return str(data.get("ticket"))
    return None


def _on_arrival(ticket: str, content: str) -> str:
    """What the demo says when an async batch's outcome arrives as a message."""
    try:
        data = json.loads(content[content.index("{"):])
    except ValueError:
        data = {}
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict):
        return (f"The license question (ticket {ticket}) ended without an answer "
                f"({error.get('code')}), so I leave the license out for now.")
    answers = {item.get("id"): item for item in data.get("answers", [])
               if isinstance(item, dict)}
    _, license_text = _line(answers.get("license", {}))
    return (f"Your answer to the license question arrived (ticket {ticket}): {license_text}. "
            "It came as a message naming the ticket, and nothing waited for it.")


def _without_questions(topic: str) -> str:
    return (f"I would need a few decisions before setting up “{topic}”, but questions are "
            "turned off (--no-ask), so I will stop here.")

"""A permission prompt's words, shared by every UI: who asks, what, what each choice covers.

A prompt must explain itself to someone who does not know MCP (``spec/permissions.md``):
who asks (the agent, or the server), what the tool does (its description, sanitised and
cut), the server's hints in words and as the server's claim, and choices that say what
they cover ("always" names its scope and how to undo it). Every string here is sanitised;
what is granted (the tool's name, the arguments) is shown whole, with every character that
would not show as itself escaped (``escape_invisible``), so nothing of it hides.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

from dsh_cli.core.sanitize import escape_invisible, one_line, sanitize_line

if TYPE_CHECKING:
    from dsh_cli.permissions.vocabulary import Decision, Hints, PermissionRequest

__all__ = ["MAX_DESCRIPTION", "UNDO", "always_scope", "arguments", "choice_labels",
           "description", "hint_words", "title", "who"]

MAX_DESCRIPTION = 160  # characters of a tool's description shown in a prompt
UNDO = "dsh permissions rm"


def who(request: PermissionRequest) -> str:
    """Who asks: the agent (``approve_tool_use``), else the MCP server, else dsh."""
    name = request.agent or request.server or "dsh"
    return one_line(name, 60) or "dsh"


def title(request: PermissionRequest) -> str:
    """``Claude Code wants to run Bash``."""
    return f"{who(request)} wants to run {escape_invisible(request.tool)}"


def arguments(request: PermissionRequest) -> list[str]:
    """Each argument as ``name: value`` on one line, whole: values in JSON (a string quoted,
    a newline ``\\n``), any other invisible character escaped. Never cut: it is what is granted."""
    given = request.arguments
    if isinstance(given, dict):
        return [f"{escape_invisible(str(name))}: {escape_invisible(_value_text(value))}"
                for name, value in given.items()]
    if given in (None, "", {}):
        return []
    return [escape_invisible(_value_text(given))]


def _value_text(value: Any) -> str:
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    try:
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    except (TypeError, ValueError):
        return repr(value)


def description(request: PermissionRequest) -> str | None:
    """The tool's own description, on one line and cut; None when it has none."""
    return one_line(request.description or "", MAX_DESCRIPTION) or None


def hint_words(hints: Hints, server: str | None) -> tuple[bool, str | None, list[str]]:
    """``(warning, "the server says:", phrases)`` for the hints given; no phrases for none."""
    words = []
    destructive = hints.destructive is True  # "destructive" wins over "read only"
    if destructive:
        words.append("may change or delete things")
    elif hints.read_only is True:
        words.append("only reads")
    elif hints.destructive is False:
        words.append("adds things, deletes nothing")
    if hints.idempotent is True and hints.read_only is not True:
        words.append("safe to run twice")
    if hints.open_world is True:
        words.append("reaches outside this computer")
    elif hints.open_world is False:
        words.append("stays on this computer")
    if not words:
        return False, None, []
    return destructive, f"the {'server' if server else 'tool'} says:", words


def _where(request: PermissionRequest) -> str:
    path = request.cwd or "this directory"
    home = os.path.expanduser("~")
    if home not in ("", "/") and (path == home or path.startswith(home + os.sep)):
        path = "~" + path[len(home):]
    return sanitize_line(path)


def always_scope(request: PermissionRequest) -> str:
    """What "always" covers, in words, for the summary line ("allowed always for …")."""
    if request.scope == "input":
        return f"this input in {_where(request)}"
    return "this tool as defined now"


def choice_labels(request: PermissionRequest, *, short: bool = False,
                  reason_key: str | None = "tab") -> list[tuple[Decision, str]]:
    """The four choices in words; ``short`` for a narrow screen (still distinct)."""
    this = "this input" if request.scope == "input" else "this tool"
    why = f" ({reason_key}: say why)" if reason_key and not short else \
        f" ({reason_key}: why)" if reason_key else ""
    if short:
        where = ", here" if request.scope == "input" else ""
        return [("allow_once", "allow once"), ("allow_session", "allow this session"),
                ("allow_always", f"always ({this}{where})"), ("deny", f"deny{why}")]
    scope = f"{this}, here" if request.scope == "input" else this
    session = "allow this input for this session" if request.scope == "input" \
        else "allow for this session"
    return [("allow_once", "allow once"), ("allow_session", session),
            ("allow_always", f"always ({scope}, until `{UNDO}`)"), ("deny", f"deny{why}")]

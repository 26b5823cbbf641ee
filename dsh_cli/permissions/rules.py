"""Permission rules in Claude Code's syntax, and the order they are applied in.

A rule is a tool name or a pattern: ``mcp__git`` (every tool of the server named exactly
``git``), ``mcp__git__git_status`` (one tool), ``mcp__git__*`` (a glob over that server's
tools), ``Bash``-style plain names for other tools. Evaluation: deny, then ask, then allow,
then the default: a tool the server calls read-only (and not destructive) is allowed,
everything else asks. ``ask_user_question`` never needs permission.

``mcp__SERVER__TOOL`` is ambiguous once names hold ``_`` (server ``git_`` tool ``x`` and
server ``git`` tool ``_x`` are both ``mcp__git___x``), so a rule is matched against the
request's real server and tool. Where the server is not known (another agent's tool through
``approve_tool_use``), every reading of the name is tried: deny and ask apply when any
reading matches, allow only when every reading does, so an ambiguous name is never allowed
by a rule meant for another server.

Another agent's tool may be narrowed by its input, as Claude Code writes it:
``Bash(git status)`` is that command exactly, ``Bash(git status:*)`` any command that starts
with those words. The command is read as the shell reads it (``permissions.shell``): an
allow rule covers one simple command of plain words only (``git status && curl … | sh`` is
asked); a deny or ask rule matches any command in it. The other tools' specifiers
(``Read(~/.ssh/**)``, ``Edit(//etc/**)``, ``WebFetch(domain:…)``) are ``specifiers``'.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from dsh_cli.permissions import specifiers
from dsh_cli.permissions.shell import built_program, covers
from dsh_cli.permissions.vocabulary import Hints

__all__ = ["NEVER_ASKED", "Rules", "Verdict", "matches"]

Verdict = Literal["allow", "ask", "deny"]
NEVER_ASKED = frozenset({"ask_user_question"})
_PREFIX = "mcp__"
_GLOB = "*?["


def _readings(tool: str, server: str | None = None) -> list[tuple[str, str]]:
    """The ``(server, tool)`` pairs ``tool`` can stand for: one when ``server`` is known."""
    if not tool.startswith(_PREFIX):
        return []
    if server is not None:
        head = f"{_PREFIX}{server}__"
        return [(server, tool[len(head):])] if tool.startswith(head) else []
    body = tool[len(_PREFIX):]
    return [(body[:at], body[at + 2:]) for at in range(1, len(body) - 2)
            if body.startswith("__", at)]


def _names(rule: str, tool: str, reading: tuple[str, str] | None) -> bool:
    """Whether ``rule`` names ``tool`` read as ``reading`` (None: not an MCP tool)."""
    if rule == tool:
        return True
    if reading is None or not rule.startswith(_PREFIX):
        return any(char in rule for char in _GLOB) and fnmatch.fnmatchcase(tool, rule)
    server, remote = reading
    body = rule[len(_PREFIX):]
    if fnmatch.fnmatchcase(server, body):  # ``mcp__git``: every tool of that server
        return True
    return any(fnmatch.fnmatchcase(server, body[:at]) and fnmatch.fnmatchcase(remote, body[at + 2:])
               for at in range(1, len(body) - 2) if body.startswith("__", at))


_SPECIFIED = specifiers.SPECIFIED  # ``Tool(specifier)``: the tool narrowed by its input


def _specified(rule: str, tool: str, arguments: Mapping[str, Any] | None, *,
               every: bool) -> bool | None:
    """For a ``Tool(specifier)`` rule, whether it covers this call; None for other rules."""
    found = _SPECIFIED.fullmatch(rule)
    if found is None:
        return None
    name, spec = found.groups()
    # Read/Edit paths, WebFetch domains, specifiers dsh does not read (``specifiers``)
    decided = specifiers.covers(name, spec, tool, arguments, every=every)
    if decided is not None:
        return decided
    spec = specifiers.bash_command(spec)  # Claude Code's ``rm *`` is ``rm:*``
    command = (arguments or {}).get("command")
    if name != tool or not isinstance(command, str) or not spec.strip():
        return False
    return covers(spec.strip(), command, every=every)


def _match(rule: str, tool: str, server: str | None, *, every: bool,
           arguments: Mapping[str, Any] | None = None) -> bool:
    rule = rule.strip()
    if not rule:
        return False
    specified = _specified(rule, tool, arguments, every=every)
    if specified is not None:
        return specified
    pairs = _readings(tool, server)
    if not pairs:  # a plain ``Read`` names every tool that reads files too
        return _names(rule, tool, None) or specifiers.names_family(rule, tool)
    found = (_names(rule, tool, pair) for pair in pairs)
    return all(found) if every else any(found)


def matches(rule: str, tool: str, server: str | None = None) -> bool:
    """Whether ``rule`` names ``tool`` of ``server`` (exactly, as its server, or as a glob);
    with no server, under every reading of the name."""
    return _match(rule, tool, server, every=True)


@dataclass(frozen=True)
class Rules:
    """The allow / ask / deny lists from config and flags."""

    allow: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    allow_all: bool = False  # --yes: everything allowed for this run

    def merged(self, *, allow: Iterable[str] = (), ask: Iterable[str] = (),
               deny: Iterable[str] = (), allow_all: bool = False) -> Rules:
        """These rules with more added (flags on top of config)."""
        return Rules((*self.allow, *allow), (*self.ask, *ask), (*self.deny, *deny),
                     self.allow_all or allow_all)

    def verdict(self, tool: str, hints: Hints, server: str | None = None,
                arguments: Mapping[str, Any] | None = None) -> tuple[Verdict, str]:
        """What to do with a call of ``tool`` of ``server`` with ``arguments``, and why (the
        rule, or the default)."""
        if tool in NEVER_ASKED:
            return "allow", f"{tool} never needs permission"
        if (rule := _first_match(self.deny, tool, server, arguments, every=False)) is not None:
            return "deny", f"the rule deny {rule!r}"
        if self.allow_all:
            return "allow", "--yes allows every tool for this run"
        if (rule := _first_match(self.ask, tool, server, arguments, every=False)) is not None:
            return "ask", f"the rule ask {rule!r}"
        if (rule := _first_match(self.allow, tool, server, arguments, every=True)) is not None:
            if _built_program(tool, arguments):  # even a bare ``Bash`` cannot say what it runs
                return "ask", "its program is built as the command runs (no rule can allow it)"
            return "allow", f"the rule allow {rule!r}"
        if hints.read_only and not hints.destructive:  # a contradiction is destructive
            return "allow", "the server says the tool only reads"
        return "ask", "no rule allows it"


def _built_program(tool: str, arguments: Mapping[str, Any] | None) -> bool:
    """Whether a Bash call's command runs a program named only as it runs (``rm$x``)."""
    command = (arguments or {}).get("command") if isinstance(arguments, Mapping) else None
    return tool == "Bash" and isinstance(command, str) and built_program(command)


def _first_match(rules: tuple[str, ...], tool: str, server: str | None,
                 arguments: Mapping[str, Any] | None, *, every: bool) -> str | None:
    return next((rule for rule in rules
                 if _match(rule, tool, server, every=every, arguments=arguments)), None)

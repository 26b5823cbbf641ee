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
asked); a deny or ask rule matches any command in it.
"""

from __future__ import annotations

import difflib
import fnmatch
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from dsh_cli.permissions.shell import covers
from dsh_cli.permissions.vocabulary import Hints

__all__ = ["NEVER_ASKED", "Rules", "Verdict", "matches", "rule_warnings"]

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


# ``Tool(specifier)``: the tool narrowed by its input's command
_SPECIFIED = re.compile(r"([A-Za-z0-9_.-]+)\((.*)\)", re.S)


def _specified(rule: str, tool: str, arguments: Mapping[str, Any] | None, *,
               every: bool) -> bool | None:
    """For a ``Tool(specifier)`` rule, whether it covers this call; None for other rules."""
    found = _SPECIFIED.fullmatch(rule)
    if found is None:
        return None
    name, spec = found.groups()
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
    if not pairs:
        return _names(rule, tool, None)
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
            return "allow", f"the rule allow {rule!r}"
        if hints.read_only and not hints.destructive:  # a contradiction is destructive
            return "allow", "the server says the tool only reads"
        return "ask", "no rule allows it"


def _first_match(rules: tuple[str, ...], tool: str, server: str | None,
                 arguments: Mapping[str, Any] | None, *, every: bool) -> str | None:
    return next((rule for rule in rules
                 if _match(rule, tool, server, every=every, arguments=arguments)), None)


def rule_warnings(rules: Rules, servers: Mapping[str, Iterable[str] | None]) -> list[str]:
    """One ``dsh: warning:`` line per MCP rule that cannot match, with the close match.

    ``servers`` maps each configured server to the names of its tools (None when they are
    not known: it did not start). A rule for a server that is not configured at all is
    left alone (it may be meant for another project); one that is malformed, in the wrong
    case or a near miss of a real name is reported; a deny rule says that it denies nothing.
    """
    candidates: list[str] = []
    known: list[tuple[str, str | None]] = []
    for server, tools in servers.items():
        candidates.append(_PREFIX + server)
        names = list(tools or ())
        known.extend([(server, name) for name in names] or [(server, None)])
        candidates.extend(f"{_PREFIX}{server}__{name}" for name in names)
    lines = []
    for kind in ("deny", "ask", "allow"):
        for rule in getattr(rules, kind):
            problem = _problem(rule.strip(), known, candidates)
            if problem is not None:
                lines.append(f"dsh: warning: the rule {kind} {rule!r} {problem}"
                             + (" (nothing is denied by it)" if kind == "deny" else ""))
    return lines


def _problem(rule: str, known: list[tuple[str, str | None]],
             candidates: list[str]) -> str | None:
    """Why ``rule`` matches nothing here, naming the close match; None when it may match."""
    if not rule:
        return "is empty and matches nothing"
    if not rule.lower().startswith(_PREFIX):
        return None  # a plain tool name: another agent's tool (approve_tool_use) may be meant
    if rule.startswith(_PREFIX) and _may_match(rule, known):
        return None
    close = _close(rule, candidates)
    if close is not None:
        return f"matches no tool: did you mean {close!r}?"
    if not rule.startswith(_PREFIX):
        return f"matches no tool: rules are case-sensitive and start with {_PREFIX!r}"
    if rule == _PREFIX or rule.endswith("__") or "____" in rule:
        return "matches no tool: write mcp__SERVER, mcp__SERVER__TOOL or mcp__SERVER__*"
    return None


def _may_match(rule: str, known: list[tuple[str, str | None]]) -> bool:
    """Whether ``rule`` names a known tool, or may name a tool of a server not listed."""
    body = rule[len(_PREFIX):]
    heads = [body, *(body[:at] for at in range(1, len(body) - 2) if body.startswith("__", at))]
    return any(_names(rule, f"{_PREFIX}{server}__{name}", (server, name)) if name is not None
               else any(fnmatch.fnmatchcase(server, head) for head in heads)
               for server, name in known)


def _close(rule: str, candidates: list[str]) -> str | None:
    """The real name ``rule`` most likely meant: the same but for case or ``_``, else a near one."""
    def folded(name: str) -> str:
        return name.lower().rstrip("_")

    same = [name for name in candidates if folded(name) == folded(rule)]
    if same:
        return same[0]
    near = difflib.get_close_matches(rule, candidates, n=1, cutoff=0.8)
    return near[0] if near else None

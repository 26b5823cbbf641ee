"""Permission rules in Claude Code's syntax, and the order they are applied in.

A rule is a tool name or a pattern: ``mcp__git`` (every tool of a server),
``mcp__git__git_status`` (one tool), ``mcp__git__*`` (a glob), ``Bash``-style plain names
for dsh's own tools. Evaluation: deny, then ask, then allow, then the default: a tool
annotated read-only is allowed, everything else asks. ``ask_user_question`` never needs
permission.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from dsh_cli.permissions.vocabulary import Hints

__all__ = ["NEVER_ASKED", "Rules", "Verdict", "matches"]

Verdict = Literal["allow", "ask", "deny"]
NEVER_ASKED = frozenset({"ask_user_question"})


def matches(rule: str, tool: str) -> bool:
    """Whether ``rule`` names ``tool`` (exactly, as its server prefix, or as a glob)."""
    rule = rule.strip()
    if not rule:
        return False
    if rule == tool or (rule.startswith("mcp__") and rule.count("__") == 1
                        and tool.startswith(rule + "__")):
        return True
    return any(char in rule for char in "*?[") and fnmatch.fnmatchcase(tool, rule)


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

    def verdict(self, tool: str, hints: Hints) -> tuple[Verdict, str]:
        """What to do with a call of ``tool``, and why (the rule, or the default)."""
        if tool in NEVER_ASKED:
            return "allow", f"{tool} never needs permission"
        if (rule := _first_match(self.deny, tool)) is not None:
            return "deny", f"the rule deny {rule!r}"
        if self.allow_all:
            return "allow", "--yes allows every tool for this run"
        if (rule := _first_match(self.ask, tool)) is not None:
            return "ask", f"the rule ask {rule!r}"
        if (rule := _first_match(self.allow, tool)) is not None:
            return "allow", f"the rule allow {rule!r}"
        if hints.read_only:
            return "allow", "the tool says it only reads"
        return "ask", "no rule allows it"


def _first_match(rules: tuple[str, ...], tool: str) -> str | None:
    return next((rule for rule in rules if matches(rule, tool)), None)

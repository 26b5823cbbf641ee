"""Rules that cannot match any tool offered here, each reported in one ``dsh: warning:`` line.

Rules have two readers. dsh's own agent (``dsh``, ``dsh run``, ``dsh web``) is offered
``ask_user_question`` (never asked) and the tools of the MCP servers it started;
``approve_tool_use`` (``dsh mcp``) is asked about another agent's tools: Claude Code's
built-in ones (``Bash``, ``Read``, …, each a capitalised name) and those of its own MCP
servers, which dsh cannot list. Flags serve the agent only; ``config.toml`` serves both, so
a rule of it is reported only when neither reader can use it. Each report names the close
match (the right case, ``mcp__raw`` for a bare server name ``raw``) and what the rule
does instead: a deny rule that matches nothing denies nothing; one whose specifier dsh
cannot read covers the whole tool (``specifiers``).
"""

from __future__ import annotations

import difflib
import fnmatch
from collections.abc import Callable, Collection, Iterable, Mapping

from dsh_cli.core.lines import warning
from dsh_cli.permissions import specifiers
from dsh_cli.permissions.rules import NEVER_ASKED, Rules, matches

__all__ = ["CLAUDE_CODE_TOOLS", "agent_warnings", "approve_warnings"]

# Claude Code's built-in tools, as its permission rules name them (a newer one is let be)
CLAUDE_CODE_TOOLS = frozenset({
    "Agent", "AskUserQuestion", "Bash", "BashOutput", "Edit", "ExitPlanMode", "Glob", "Grep",
    "KillBash", "KillShell", "LS", "ListMcpResourcesTool", "MultiEdit", "NotebookEdit",
    "NotebookRead", "PowerShell", "Read", "ReadMcpResourceTool", "SlashCommand", "Skill",
    "Task", "TodoWrite", "WebFetch", "WebSearch", "Write"})
_PREFIX = "mcp__"
_GLOB = "*?["
_MALFORMED = "matches no tool: write mcp__SERVER, mcp__SERVER__TOOL or mcp__SERVER__*"

# why a rule fails: its text, and whether it matches nothing or covers its whole tool
Problem = tuple[str, bool]


def agent_warnings(rules: Rules, servers: Mapping[str, Iterable[str] | None], *,
                   shared: Collection[str] = (), commands: Collection[str] = ()) -> list[str]:
    """The warnings for dsh's own agent; ``servers`` maps each configured server to its tools'
    names (None: it did not start), ``shared`` are the rules ``approve_tool_use`` reads too,
    ``commands`` the tools whose input has a ``command`` (their specifier is a command's)."""
    tools = {server: None if names is None else list(names) for server, names in servers.items()}
    shared = {rule.strip() for rule in shared}

    def problem(rule: str) -> Problem | None:
        mine = _agent_problem(rule, tools, shared=rule in shared, commands=commands)
        if mine is None or rule not in shared:
            return mine
        theirs = _claude_problem(rule)  # None: approve_tool_use may be what it is for
        if theirs is None:
            return None
        return mine if f"did you mean '{_PREFIX}" in mine[0] else theirs  # dsh's own tool

    return _lines(rules, problem)


def approve_warnings(rules: Rules) -> list[str]:
    """The warnings for ``approve_tool_use``, whose rules name Claude Code's tools."""
    return _lines(rules, _claude_problem)


def _lines(rules: Rules, problem: Callable[[str], Problem | None]) -> list[str]:
    lines: list[str] = []
    for kind in ("deny", "ask", "allow"):
        for rule in getattr(rules, kind):
            found = problem(rule.strip()) if rule.strip() else ("is empty and matches nothing",
                                                                False)
            if found is None:
                continue
            text, whole = found
            line = warning(f"the rule {kind} {rule!r} {text}{_effect(kind, rule, whole)}")
            if line not in lines:
                lines.append(line)
    return lines


def _effect(kind: str, rule: str, whole: bool) -> str:
    if not whole:
        return " (nothing is denied by it)" if kind == "deny" else ""
    tool = specifiers.split(rule.strip())[0]
    return {"deny": f" (so it denies every {tool} call)",
            "ask": f" (so every {tool} call is asked)"}.get(kind, " (so it allows nothing)")


def _agent_problem(rule: str, servers: Mapping[str, list[str] | None], *,
                   shared: bool, commands: Collection[str] = ()) -> Problem | None:
    name, spec = specifiers.split(rule)
    if name in NEVER_ASKED:
        return f"matches nothing: {name} never needs permission", False
    known = [(server, tool) for server, names in servers.items()
             for tool in (names if names is not None else [None])]
    candidates = [*(_PREFIX + server for server in servers),
                  *(f"{_PREFIX}{server}__{tool}" for server, tool in known if tool)]
    if name.lower().startswith(_PREFIX):
        if name.startswith(_PREFIX) and _may_match(name, known):
            return _specifier(name, spec, runs_commands=name in commands)
        close = _close(name, candidates)
        if close is not None:
            return f"matches no tool: did you mean {close!r}?", False
        if not name.startswith(_PREFIX):
            return f"matches no tool: rules are case-sensitive and start with {_PREFIX!r}", False
        if name == _PREFIX or name.endswith("__") or "____" in name:
            return _MALFORMED, False
        # a server configured elsewhere: config.toml may be meant for another project
        return None if shared else ("matches no tool: no server it names is configured", False)
    if any(char in name for char in _GLOB) and any(
            fnmatch.fnmatchcase(candidate, name) for candidate in candidates):
        return None
    claude = ("of Claude Code, whose calls reach dsh through approve_tool_use (a rule for "
              "them goes in config.toml)")
    if name in CLAUDE_CODE_TOOLS:
        return f"matches no tool of dsh's agent: a tool {claude}", False
    for server in servers:
        if name.lower() == server.lower():
            return (f"matches no tool: did you mean {_PREFIX + server!r} (or "
                    f"{f'{_PREFIX}{server}__*'!r}, its tools)?"), False
    for server, tool in known:
        if tool is not None and name.lower() == tool.lower():
            return f"matches no tool: did you mean {f'{_PREFIX}{server}__{tool}'!r}?", False
    meant = _claude_name(name)
    if meant is not None:
        return (f"matches no tool of dsh's agent: did you mean {meant!r}? That is a tool "
                f"{claude}"), False
    return ("matches no tool of dsh's agent (its tools are mcp__SERVER__TOOL; "
            "ask_user_question never needs permission)"), False


def _claude_problem(rule: str) -> Problem | None:
    name, spec = specifiers.split(rule)
    if name.lower().startswith(_PREFIX):  # Claude Code's own servers: dsh cannot list them
        if not name.startswith(_PREFIX):
            return f"matches no tool: rules are case-sensitive and start with {_PREFIX!r}", False
        if name == _PREFIX or name.endswith("__") or "____" in name:
            return _MALFORMED, False
        return _specifier(name, spec)
    if name in CLAUDE_CODE_TOOLS:
        return _specifier(name, spec)
    if any(char in name for char in _GLOB):
        return None
    meant = _claude_name(name)
    if meant is not None:
        shown = meant if spec is None else f"{meant}({spec})"
        return f"matches no tool: did you mean {shown!r}? (tool names are case-sensitive)", False
    if not name[:1].isupper():
        return (f"matches no tool: Claude Code's tools start with a capital letter (Bash, "
                f"Read, …); an MCP server's are {_PREFIX + name!r} (all of them) or "
                f"{f'{_PREFIX}{name}__*'!r}"), False
    return None  # a capitalised name: maybe a tool newer than this list


def _specifier(name: str, spec: str | None, *, runs_commands: bool = False) -> Problem | None:
    if spec is None:
        return None
    found = specifiers.problem(name, spec, runs_commands=runs_commands)
    return None if found is None else (found, True)


def _claude_name(name: str) -> str | None:
    """The Claude Code tool ``name`` most likely means: the same but for case, else a near one."""
    same = [tool for tool in CLAUDE_CODE_TOOLS if tool.lower() == name.lower()]
    if same:
        return same[0]
    near = difflib.get_close_matches(name, sorted(CLAUDE_CODE_TOOLS), n=1, cutoff=0.85)
    return near[0] if near else None


def _may_match(rule: str, known: list[tuple[str, str | None]]) -> bool:
    """Whether ``rule`` names a known tool, or may name a tool of a server not listed."""
    body = rule[len(_PREFIX):]
    heads = [body, *(body[:at] for at in range(1, len(body) - 2) if body.startswith("__", at))]
    return any(matches(rule, f"{_PREFIX}{server}__{name}", server) if name is not None
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

"""Routing: which team's humans an entry goes to, and whether a human may see an entry.

``[[hub.routes]]`` of the hub's config (``settings.py`` reads it) is parsed once, here,
into ``Routes``; a route matches an ask by the agent's name, its machine, its working
directory and the tool (a permission request's tool; ``ask_user_question`` for a
question), each a glob (``*`` within one path segment, ``**`` across them, ``?`` one
character), and names a team. The first route whose every given glob matches wins; when
none does, the entry goes to ``default_team``, or to no team: every human sees it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dsh_cli.core.errors import ConfigError
from dsh_cli.hub import tokens
from dsh_cli.hub.records import Entry, HubStoreError, Token

__all__ = ["MATCHES", "QUESTION_TOOL", "ROUTES", "Route", "Routes", "parse_routes", "route",
           "tool_of", "visible"]

QUESTION_TOOL = "ask_user_question"  # the tool a question batch is routed as
MATCHES = ("agent", "machine", "cwd", "tool")  # what a route may match, in this order
ROUTES = 1000  # routes one config may hold: each ask tries them in turn
GLOB_CHARACTERS = 4096  # a glob as long as the longest path it could match


@dataclass(frozen=True)
class Route:
    """One ``[[hub.routes]]``: the globs it matches (None: anything) and its team."""

    team: str
    agent: str | None = None
    machine: str | None = None
    cwd: str | None = None
    tool: str | None = None

    def matches(self, asked: Mapping[str, str]) -> bool:
        """Whether every glob this route gives matches what the ask says of itself."""
        for name in MATCHES:
            glob = getattr(self, name)
            if glob is not None and not _compiled(glob).fullmatch(asked[name]):
                return False
        return True


@dataclass(frozen=True)
class Routes:
    """The hub's routes in order, and the team of an entry none of them matches."""

    routes: tuple[Route, ...] = ()
    default_team: str | None = None


def route(routes: Routes, agent: str, machine: str, cwd: str, tool: str) -> str | None:
    """The team an ask goes to: its first matching route's, else the default (or None)."""
    asked = {"agent": agent, "machine": machine, "cwd": cwd, "tool": tool}
    for rule in routes.routes:
        if rule.matches(asked):
            return rule.team
    return routes.default_team


def tool_of(kind: str, batch: Mapping[str, Any]) -> str:
    """The tool an entry is routed as: its permission request's tool, else
    ``ask_user_question`` (a question batch; a request naming no tool is routed as "")."""
    if kind != "permission":
        return QUESTION_TOOL
    tool = batch.get("tool")
    return tool if isinstance(tool, str) else ""


def visible(entry: Entry, human: Token) -> bool:
    """Whether ``human`` may see (and so claim and answer) ``entry``: an entry of their
    team, or of no team. An agent's token sees no entry through a desk."""
    if human.kind != "human":
        return False
    return entry.team is None or entry.team == human.team


def parse_routes(value: Any, default_team: Any, source: str) -> Routes:
    """``[[hub.routes]]`` and ``default_team`` as ``Routes``; a bad one is a ``ConfigError``
    of one line naming the route (``source`` says where it was read)."""
    if default_team is not None:
        default_team = _team(default_team, f"{source}: [hub] default_team")
    if value is None:
        value = []
    if not isinstance(value, list):
        raise ConfigError(f"{source}: [hub] routes must be an array of tables "
                            "([[hub.routes]])")
    if len(value) > ROUTES:
        raise ConfigError(f"{source}: [hub] has {len(value)} routes, at most {ROUTES}")
    return Routes(tuple(_route(item, f"{source}: [[hub.routes]] #{number}")
                        for number, item in enumerate(value, start=1)), default_team)


def _route(item: Any, where: str) -> Route:
    if not isinstance(item, dict):
        raise ConfigError(f"{where} must be a table (team = \"...\" and what it matches)")
    for key in item:
        if key != "team" and key not in MATCHES:
            import difflib

            close = difflib.get_close_matches(key, ("team", *MATCHES), n=1)
            hint = f' (did you mean "{close[0]}"?)' if close else ""
            raise ConfigError(f'{where}: unknown key "{key}"{hint}; a route has team and '
                                f"any of {', '.join(MATCHES)}")
    if "team" not in item:
        raise ConfigError(f"{where} names no team (team = \"...\")")
    globs = {}
    for name in MATCHES:
        glob = item.get(name)
        if glob is None:
            continue
        if not isinstance(glob, str) or not glob or len(glob) > GLOB_CHARACTERS:
            raise ConfigError(f"{where}: {name} must be a glob of 1 to {GLOB_CHARACTERS} "
                                "characters (like \"/srv/payments/**\")")
        globs[name] = glob
    return Route(_team(item["team"], where), **globs)


def _team(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"{where}: a team must be a string")
    try:
        return tokens.check_name(value, "team name")
    except HubStoreError as error:
        raise ConfigError(f"{where}: {error.message}") from None


@functools.lru_cache(maxsize=ROUTES * len(MATCHES))
def _compiled(glob: str) -> re.Pattern[str]:
    """``glob`` as a regular expression, made once per glob (the routes are few and fixed).

    ``**`` is any run of characters, ``/`` included, and ``dir/**`` matches ``dir`` itself
    too; ``*`` is any run within one segment; ``?`` one character but ``/``; everything
    else stands for itself (no ``[...]`` classes: a path may hold brackets).
    """
    parts, index = [], 0
    while index < len(glob):
        if glob.startswith("/**", index) and (index + 3 == len(glob) or glob[index + 3] == "/"):
            parts.append("(?:/.*)?")  # "/**" at the end, or "/**/": zero segments too
            index += 3
        elif glob.startswith("**", index):
            parts.append(".*")
            index += 2
        elif glob[index] == "*":
            parts.append("[^/]*")
            index += 1
        elif glob[index] == "?":
            parts.append("[^/]")
            index += 1
        else:
            parts.append(re.escape(glob[index]))
            index += 1
    return re.compile("".join(parts), re.DOTALL)

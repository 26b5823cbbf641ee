"""Routing: which team's humans an entry goes to, and whether a human may see an entry.

``[[hub.routes]]`` of the hub's config (``settings.py`` reads it) is parsed once, here,
into ``Routes``; a route matches an ask by the agent's name, its machine, its working
directory and the tool (a permission request's tool; ``ask_user_question`` for a
question), each a glob (``*`` any run within one ``/``-separated segment, ``?`` one
character, a ``**`` segment any number of segments), and names a team. The first route
whose every given glob matches wins; when none does, the entry goes to ``default_team``,
or to no team: every human sees it.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dsh_cli.core.errors import ConfigError
from dsh_cli.hub import tokens
from dsh_cli.hub.records import Entry, HubStoreError, Token

__all__ = ["MATCHES", "QUESTION_TOOL", "ROUTES", "Route", "Routes", "parse_routes", "route",
           "teams_of", "tool_of", "visible"]

QUESTION_TOOL = "ask_user_question"  # the tool a question batch is routed as
MATCHES = ("agent", "machine", "cwd", "tool")  # what a route may match, in this order
ROUTES = 1000  # routes one config may hold: each ask tries them in turn
# a route's glob: long enough for any real path, short enough that matching one against an
# agent's longest path (4,096 characters) stays within ~a million segment comparisons
GLOB_CHARACTERS = 1024


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
            if glob is not None and not _matches(glob, asked[name]):
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


def teams_of(human: Token) -> list[str]:
    """The teams whose pending entries ``human``'s desk reads (besides the unteamed ones):
    ``visible``'s rule as the store's indexed read takes it."""
    return [] if human.team is None else [human.team]


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
def _compiled(glob: str) -> tuple[re.Pattern[str] | None, ...]:
    """``glob`` as one pattern per ``/``-separated segment (None for a ``**`` segment),
    made once per glob (the routes are few and fixed).

    Within a segment ``*`` is any run and ``?`` one character, as ``fnmatch`` translates
    them: each ``*`` an atomic group, so a segment matches in one pass however many stars
    it has; ``[`` stands for itself (a path may hold brackets).
    """
    return tuple(None if part == "**" else re.compile(fnmatch.translate(part.replace("[", "[[]")))
                 for part in glob.split("/"))


_NOTHING = re.compile(r"(?!)")  # past the glob's last segment: no segment matches


def _matches(glob: str, value: str) -> bool:
    """Whether ``value`` matches ``glob`` whole, segment by segment: a ``**`` segment is any
    number of segments (none too, so ``dir/**`` matches ``dir``).

    The classic wildcard walk, at the level of segments: on a mismatch it goes back only to
    the last ``**`` and lets it take one more segment, so the work is at most the product
    of the two segment counts, never the exponential backtracking a single regular
    expression of several ``.*`` does on an agent's long path (minutes for 1 KB).
    """
    patterns, parts = _compiled(glob), value.split("/")
    at = part = 0
    star, mark = -1, 0
    while part < len(parts):
        here = patterns[at] if at < len(patterns) else _NOTHING
        if here is None:
            star, mark = at, part
            at += 1
        elif here.match(parts[part]):
            at, part = at + 1, part + 1
        elif star >= 0:
            at, mark = star + 1, mark + 1
            part = mark
        else:
            return False
    return all(pattern is None for pattern in patterns[at:])

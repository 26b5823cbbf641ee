"""The ``[hub]`` table of the hub's config, read once into typed values.

``config.hub_table`` finds the table (in dsh's ``config.toml``, or the file ``dsh hub serve
--config`` names); this turns it into ``HubSettings``: the routes, the per-agent caps,
how long settled entries are kept, the browser desk's public URL. Any bad or unknown key is
a ``ConfigError`` of one line: a mistyped ``[[hub.routes]]`` silently ignored would show
every team's entries to every human.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from dsh_cli.core.errors import ConfigError
from dsh_cli.core.limits import HUB_PENDING_BYTES, HUB_PENDING_ENTRIES, MCP_MESSAGE_BYTES
from dsh_cli.hub.records import AgentCaps
from dsh_cli.hub.retention import DEFAULT_RETENTION_DAYS
from dsh_cli.hub.routes import Routes, parse_routes

__all__ = ["DEFAULT_RETENTION_DAYS", "HUB_KEYS", "RETENTION_DAYS", "HubSettings",
           "checked_retention", "hub_settings"]

RETENTION_DAYS = 36_500.0  # the longest retention a hub takes: a hundred years
HUB_KEYS = ("routes", "default_team", "pending_entries", "pending_bytes", "retention_days",
            "public_url")


@dataclass(frozen=True)
class HubSettings:
    """What ``[hub]`` configures: routing, each agent's caps, retention (0: keep all)."""

    routes: Routes = field(default_factory=Routes)
    caps: AgentCaps = field(default_factory=AgentCaps)
    retention_days: float = DEFAULT_RETENTION_DAYS
    public_url: str | None = None  # where browsers reach the hub (checked by public_url.py)


def hub_settings(table: dict[str, Any], source: str) -> HubSettings:
    """``table`` (``[hub]`` of ``source``) as ``HubSettings``; defaults for what it omits."""
    import difflib

    for key in table:
        if key not in HUB_KEYS:
            close = difflib.get_close_matches(key, HUB_KEYS, n=1)
            hint = f' (did you mean "{close[0]}"?)' if close else ""
            raise ConfigError(f'{source}: unknown key "{key}" in [hub]{hint}')
    defaults = AgentCaps()
    caps = AgentCaps(
        entries=_whole(table, "pending_entries", 1, HUB_PENDING_ENTRIES, defaults.entries,
                       source),
        # below one MCP message's bytes, a batch the agent may send could never be kept
        bytes=_whole(table, "pending_bytes", MCP_MESSAGE_BYTES, HUB_PENDING_BYTES,
                     defaults.bytes, source))
    public = table.get("public_url")
    if public is not None and not isinstance(public, str):
        raise ConfigError(f"{source}: [hub] public_url must be a URL (a string), not {public!r}")
    return HubSettings(parse_routes(table.get("routes"), table.get("default_team"), source),
                       caps, checked_retention(table.get("retention_days"),
                                                f"{source}: [hub] retention_days"), public)


def _whole(table: dict[str, Any], key: str, low: int, high: int, default: int,
           source: str) -> int:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ConfigError(f"{source}: [hub] {key} must be a whole number from {low:,} to "
                          f"{high:,}, not {value!r}")
    return value


def checked_retention(value: Any, source: str) -> float:
    """A retention in days as ``[hub] retention_days`` or ``--retention`` (``source``) gives
    it, checked; None: the default."""
    if value is None:
        return DEFAULT_RETENTION_DAYS
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(value) or not 0 <= value <= RETENTION_DAYS:
        raise ConfigError(f"{source} must be a number of days from 0 "
                          f"(keep everything) to {RETENTION_DAYS:,.0f}, not {value!r}")
    return float(value)

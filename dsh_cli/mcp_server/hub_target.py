"""Where ``dsh mcp --hub URL`` forwards to, and with which agent token.

The URL and the token are read as every ``--hub`` reads them (``core/hub_address.py``); a
URL whose path does not end in ``/mcp`` gets it (``https://hub.example`` →
``https://hub.example/mcp``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from dsh_cli.core.hub_address import hub_endpoint, hub_token

__all__ = ["HubTarget", "check_token_file", "hub_target", "hub_url"]

@dataclass(frozen=True)
class HubTarget:
    """The hub's ``/mcp`` URL, how it may be shown, and the agent token."""

    url: str
    shown: str  # user information masked
    token: str

    def __repr__(self) -> str:  # a token is never printed, even in a traceback
        return f"HubTarget(url={self.shown!r}, token=***)"


def hub_target(url: str, *, token_file: str | None, insecure_http: bool,
               environ: Mapping[str, str] = os.environ) -> HubTarget:
    """The target of ``--hub URL``; ``ConfigError`` for a bad URL or token, ``UsageError``
    for plain http off this machine without ``--insecure-http``."""
    from dsh_cli.core.urls import masked

    target = hub_url(url, insecure_http=insecure_http)
    return HubTarget(target, masked(target), hub_token(token_file, whose="agent",
                                                       environ=environ))


def hub_url(url: str, *, insecure_http: bool) -> str:
    """``URL``'s ``/mcp`` endpoint, checked as ``hub_target`` checks it."""
    parsed = hub_endpoint(url, insecure_http=insecure_http, whose="agent")
    target = parsed.url.rstrip("/")
    if not parsed.path.rstrip("/").endswith("/mcp"):
        target += "/mcp"
    return target


def check_token_file(path: str) -> None:
    """``ConfigError`` unless ``path`` holds a token ``--hub-token-file`` would take."""
    hub_token(path, whose="agent", environ={})

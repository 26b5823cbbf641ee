"""Where ``dsh mcp --hub URL`` forwards to, and with which agent token.

The URL is parsed once by the HTTP client's own parser (``core/urls.py``); a URL whose path
does not end in ``/mcp`` gets it (``https://hub.example`` → ``https://hub.example/mcp``).
Plain http goes only to this machine unless ``--insecure-http``: the token travels in every
request. The token comes from ``DSH_HUB_TOKEN`` or ``--hub-token-file PATH``, never from the
command line (where ``ps`` shows it to every user of the machine).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from dsh_cli.core.errors import ConfigError, UsageError
from dsh_cli.core.limits import HUB_TOKEN_BYTES

__all__ = ["TOKEN_VARIABLE", "HubTarget", "check_token_file", "hub_target", "hub_url"]

TOKEN_VARIABLE = "DSH_HUB_TOKEN"


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
    return HubTarget(target, masked(target), _token(token_file, environ))


def hub_url(url: str, *, insecure_http: bool) -> str:
    """``URL``'s ``/mcp`` endpoint, checked as ``hub_target`` checks it."""
    from dsh_cli.core.urls import endpoint

    parsed = endpoint(url, "--hub")
    if parsed.scheme == "http" and not parsed.loopback and not insecure_http:
        raise UsageError(f"--hub {parsed.shown}: plain http only to this machine (the agent "
                         "token would cross the network unencrypted); use https, or "
                         "--insecure-http if something else encrypts the way")
    target = parsed.url.rstrip("/")
    if not parsed.path.rstrip("/").endswith("/mcp"):
        target += "/mcp"
    return target


def check_token_file(path: str) -> None:
    """``ConfigError`` unless ``path`` holds a token ``--hub-token-file`` would take."""
    _token(path, {})


def _token(token_file: str | None, environ: Mapping[str, str]) -> str:
    if token_file is not None:
        where = f"--hub-token-file {token_file}"
        token = _read_token(Path(token_file))
    else:
        where = TOKEN_VARIABLE
        token = environ.get(TOKEN_VARIABLE, "").strip()
        if not token:
            raise ConfigError(f"no hub token: set {TOKEN_VARIABLE} or give --hub-token-file "
                              "PATH (`dsh hub token add NAME --agent` makes one)")
    # it goes into an Authorization header: visible ASCII only, no spaces
    if not token.isascii() or not token.isprintable() or " " in token:
        raise ConfigError(f"{where}: the hub token must be one word of visible ASCII")
    return token


def _read_token(path: Path) -> str:
    """The file's one line, read bounded (a token is far shorter than the cap)."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(HUB_TOKEN_BYTES + 1)
    except OSError as error:
        raise ConfigError(f"--hub-token-file {path}: {error.strerror or error}") from None
    if len(raw) > HUB_TOKEN_BYTES:
        raise ConfigError(f"--hub-token-file {path}: over {HUB_TOKEN_BYTES} bytes; a hub token "
                          "is one line")
    text = raw.decode("utf-8", "replace").strip()
    if not text:
        raise ConfigError(f"--hub-token-file {path}: the file is empty")
    if "\n" in text:
        raise ConfigError(f"--hub-token-file {path}: a hub token is one line")
    return text

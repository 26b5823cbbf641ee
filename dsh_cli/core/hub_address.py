"""Where a hub is and whose token reaches it: read once for every command that goes there.

``dsh mcp --hub`` (an agent's token), ``dsh attach --hub`` and ``dsh history --hub`` (a
human's) take the hub's URL and a token the same way: the URL parsed by the one URL parser
(``core/urls.py``), plain http only to this machine unless ``--insecure-http`` (the token
travels in every request); the token from ``DSH_HUB_TOKEN`` or ``--hub-token-file PATH``'s one
line, never from the command line, where ``ps`` shows it to every user of the machine.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from dsh_cli.core.errors import ConfigError, UsageError
from dsh_cli.core.limits import HUB_TOKEN_BYTES
from dsh_cli.core.urls import Endpoint, endpoint

__all__ = ["TOKEN_VARIABLE", "hub_endpoint", "hub_token"]

TOKEN_VARIABLE = "DSH_HUB_TOKEN"


def hub_endpoint(url: str, *, insecure_http: bool, whose: Literal["agent", "human"]) -> Endpoint:
    """``--hub URL`` parsed; ``ConfigError`` for no http(s) URL with a host, ``UsageError`` for
    user:password@ in it or plain http off this machine without ``--insecure-http``."""
    parsed = endpoint(url, "--hub")
    if parsed.has_userinfo:
        raise UsageError(f"--hub {parsed.shown}: a hub URL carries no user:password@ (the "
                         f"token comes from {TOKEN_VARIABLE} or --hub-token-file)")
    if parsed.scheme == "http" and not parsed.loopback and not insecure_http:
        raise UsageError(f"--hub {parsed.shown}: plain http only to this machine (the {whose} "
                         "token would cross the network unencrypted); use https (a reverse "
                         "proxy in front of the hub), or --insecure-http if something else "
                         "encrypts the way")
    return parsed


def hub_token(token_file: str | None, *, whose: Literal["agent", "human"],
              environ: Mapping[str, str] = os.environ) -> str:
    """The token: ``--hub-token-file``'s one line, else ``DSH_HUB_TOKEN``; ``ConfigError``
    saying what is wrong (never the token itself)."""
    if token_file is not None:
        where = f"--hub-token-file {token_file}"
        token = _read_token(Path(token_file), where)
    else:
        where, token = TOKEN_VARIABLE, environ.get(TOKEN_VARIABLE, "").strip()
        if not token:
            raise ConfigError(f"no hub token: set {TOKEN_VARIABLE} or give --hub-token-file "
                              f"PATH (`dsh hub token add NAME --{whose}` makes one)")
    # it goes into an Authorization header: one word of visible ASCII
    if not token.isascii() or not token.isprintable() or " " in token:
        raise ConfigError(f"{where}: the hub token must be one word of visible ASCII")
    return token


def _read_token(path: Path, where: str) -> str:
    """The file's one line, read bounded (a token is far shorter than the cap)."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(HUB_TOKEN_BYTES + 1)
    except OSError as error:
        raise ConfigError(f"{where}: {error.strerror or error}") from None
    if len(raw) > HUB_TOKEN_BYTES:
        raise ConfigError(f"{where}: over {HUB_TOKEN_BYTES} bytes; a hub token is one line")
    text = raw.decode("utf-8", "replace").strip()
    if not text:
        raise ConfigError(f"{where}: the file is empty")
    if "\n" in text:
        raise ConfigError(f"{where}: a hub token is one line")
    return text

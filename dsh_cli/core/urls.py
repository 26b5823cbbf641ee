"""Every URL dsh sends a request to, parsed once, by the parser of the client that sends it.

The model's base URL (``--base-url``, ``DSH_BASE_URL``, ``base_url`` in ``config.toml``) and
every OAuth endpoint are parsed here with ``httpx2.URL``, the URL class of the httpx that
the ``openai`` client and the MCP SDK make their requests with, so what dsh checks is what
is requested. A URL that does not parse, or is not http(s) with a host, is one
``ConfigError`` (``CONFIG_ERROR``) naming the key it came from. User information
(``user:secret@``) is never shown: ``Endpoint.shown`` and ``Endpoint.where`` mask it as
``***``, and ``masked`` does so for any text that may quote a URL.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dsh_cli.core.errors import ConfigError

__all__ = ["MASK", "Endpoint", "endpoint", "masked", "parse_endpoint", "where"]

MASK = "***"
# user information in a URL anywhere in a text: scheme://USERINFO@, up to the authority's
# last "@" (as the parser takes a stray "@" in a password: user:pa@ss@host); the authority
# ends at "/", "?", "#", and a space ends a URL in a message
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/?#\s]*@")


@dataclass(frozen=True)
class Endpoint:
    """A parsed http(s) URL: what the request goes to, and how a human may see it."""

    url: str  # as given (stripped): what the client is handed
    scheme: str
    host: str  # lower case; an IPv6 address without its brackets
    port: int | None  # None: the scheme's own
    path: str
    has_userinfo: bool

    @property
    def where(self) -> str:
        """``host[:port]`` for a message, user information masked: ``***@host:9``."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        port = f":{self.port}" if self.port is not None else ""
        return f"{MASK + '@' if self.has_userinfo else ''}{host}{port}"

    @property
    def shown(self) -> str:
        """The whole URL for a message, user information masked."""
        return masked(self.url)

    @property
    def keeps_secrets(self) -> bool:
        """Whether a credential may travel here: https, or plain http on this machine."""
        return self.scheme == "https" or (self.scheme == "http" and self.loopback)

    @property
    def loopback(self) -> bool:
        """Whether the host is this machine (127.0.0.0/8, ::1, localhost)."""
        import ipaddress

        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return self.host == "localhost"


def masked(text: str) -> str:
    """``text`` with the user information of every URL in it replaced by ``***``."""
    return _USERINFO.sub(lambda match: f"{match.group(1)}{MASK}@", text)


def where(text: str) -> str:
    """``host[:port]`` of the URL ``text`` for a message (masked); a text that is no URL,
    masked, as it is."""
    parsed = parse_endpoint(text)
    return parsed.where if parsed is not None else masked(text)


def parse_endpoint(text: str) -> Endpoint | None:
    """``text`` as an http(s) URL with a host; None: it is not one."""
    import httpx2

    stripped = text.strip()
    try:
        url = httpx2.URL(stripped)
        port = url.port
    except (httpx2.InvalidURL, TypeError, ValueError):
        return None
    if url.scheme not in ("http", "https") or not url.host:
        return None
    if port is not None and not 0 < port < 65536:
        return None
    return Endpoint(stripped, url.scheme, url.host.lower(), port, url.path,
                    bool(url.userinfo))


def endpoint(text: str, key: str) -> Endpoint:
    """``text``, the value of ``key``, as an http(s) URL; ``ConfigError`` naming ``key``."""
    parsed = parse_endpoint(text)
    if parsed is None:
        from dsh_cli.core.sanitize import one_line

        raise ConfigError(f"{key}: {one_line(masked(text.strip()), 200)!r} is not an "
                          "http(s) URL with a host")
    return parsed

"""The hub's public URL: where humans' browsers reach it, read once into what the page checks.

``dsh hub serve --public-url URL`` (else ``[hub] public_url``, else the bound loopback URL)
names the one origin the browser desk answers for: its login links start with it, a
request's ``Host`` must name it (a page of another site that resolved its own name to the
hub's address, DNS rebinding, sends its own), a POST's ``Origin`` must be it, and the
session cookie is ``Secure`` when it is https. A public URL is an origin: no path, query or
user information; plain http only on this machine unless ``--insecure-http``.
"""

from __future__ import annotations

from dataclasses import dataclass

from dsh_cli.core.errors import ConfigError
from dsh_cli.core.urls import endpoint

__all__ = ["PublicUrl", "public_url"]

DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True)
class PublicUrl:
    """The browser desk's origin, and the ``Host`` values that name it."""

    origin: str  # scheme://host[:port], as a browser sends it in Origin
    hosts: frozenset[str]  # the Host header values taken (lower case)

    @property
    def secure(self) -> bool:
        return self.origin.startswith("https://")

    @property
    def scheme(self) -> str:
        return self.origin.split("://", 1)[0]

    @property
    def cookie_name(self) -> str:
        """The session cookie's name: ``__Host-`` (Secure, this host only) on https; on
        http, one per port (a browser sends a host's cookies to all its ports)."""
        if self.secure:
            return "__Host-dsh_hub"
        port = self.origin.rsplit(":", 1)[1] if self.origin.count(":") > 1 else "80"
        return f"dsh_hub_{port}"


def public_url(text: str, key: str, *, insecure_http: bool = False) -> PublicUrl:
    """``text`` (the value of ``key``) as the hub's public URL; ``ConfigError`` saying why not."""
    parsed = endpoint(text, key)
    if parsed.has_userinfo or parsed.path not in ("", "/") or "?" in text or "#" in text:
        raise ConfigError(f"{key} {parsed.shown}: a public URL is scheme://host[:port] only "
                          "(no user, path, query or fragment)")
    if parsed.scheme == "http" and not parsed.loopback and not insecure_http:
        raise ConfigError(f"{key} {parsed.shown}: plain http only on this machine (the login "
                          "cookie would cross the network unencrypted); use https (a TLS "
                          "reverse proxy in front of the hub), or --insecure-http")
    host = f"[{parsed.host}]" if ":" in parsed.host else parsed.host
    port = parsed.port if parsed.port not in (None, DEFAULT_PORTS[parsed.scheme]) else None
    where = f"{host}:{port}" if port is not None else host
    hosts = {where}
    if parsed.loopback and host in ("127.0.0.1", "localhost"):  # the same place, both names
        hosts |= {name + (f":{port}" if port is not None else "")
                  for name in ("127.0.0.1", "localhost")}
    return PublicUrl(f"{parsed.scheme}://{where}", frozenset(hosts))

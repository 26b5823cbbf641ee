"""``dsh hub serve``: one hub process, serving agents, desks and history until stopped.

It reads the ``[hub]`` settings (routes, each agent's caps, retention: ``settings.py``),
opens the store, starts its ``HubWatch`` and the retention loop, builds the agents' side
and the app (``app.py``: ``/mcp``, ``/history`` and the routes given; ``web.py``: the
browser desk at the public URL, ``--public-url``, else ``[hub] public_url``, else the bound
URL) and serves it
with uvicorn on ``host:port`` (the bound URL is one stderr line,
``dsh: hub http://HOST:PORT``). Plain HTTP binds only to a loopback address unless
``insecure_http`` (TLS is a reverse proxy's job). A signal stops it cleanly: the calls that
wait are ended and their entries withdrawn, then the watch and the store are closed.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dsh_cli.core.errors import USAGE, HarnessError, format_line
from dsh_cli.core.lines import notice
from dsh_cli.core.tasks import close_task
from dsh_cli.hub.context import HubContext

__all__ = ["DEFAULT_PORT", "HubOptions", "LoopbackOnly", "check_host", "serve"]

DEFAULT_PORT = 8750


@dataclass(frozen=True)
class HubOptions:
    """What ``dsh hub serve``'s command line asks for."""

    store: str | None = None
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    insecure_http: bool = False
    replica: str | None = None
    config: str | None = None  # the file of the [hub] table (default: dsh's config.toml)
    retention_days: float | None = None  # None: the [hub] setting's
    public_url: str | None = None  # None: [hub] public_url, else the bound URL


class LoopbackOnly(HarnessError):
    """Plain HTTP asked for on an address other machines reach, without ``--insecure-http``."""


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a name: it may resolve anywhere


def check_host(host: str, insecure_http: bool) -> None:
    """Refuse plain HTTP off loopback unless the operator said so (``--insecure-http``)."""
    if not insecure_http and not _loopback(host):
        raise LoopbackOnly(
            f"{host} is not a loopback address: the hub speaks plain HTTP, so put a TLS "
            "reverse proxy in front of it on 127.0.0.1, or pass --insecure-http to serve "
            "tokens and answers unencrypted on this network", USAGE)


def _say(line: str) -> None:
    sys.stderr.write(line.rstrip("\n") + "\n")
    sys.stderr.flush()


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError:
        sock.close()
        raise
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


async def serve(options: HubOptions, *,
                extra_routes: Callable[[HubContext], Sequence[Any]] | None = None,
                say: Callable[[str], None] = _say) -> int:
    """Serve one hub process until cancelled (a signal); the exit status. ``extra_routes``
    makes the other routes (``/desk``, ``/history``) for the process's ``HubContext``."""
    import asyncio

    from dsh_cli.config import hub_table, load_settings
    from dsh_cli.hub.app import agents_side, create_app
    from dsh_cli.hub.history import history_routes
    from dsh_cli.hub.public_url import public_url
    from dsh_cli.hub.records import HubStoreError
    from dsh_cli.hub.retention import keep_pruning
    from dsh_cli.hub.settings import hub_settings
    from dsh_cli.hub.store import HubStore
    from dsh_cli.hub.watch import HubWatch
    from dsh_cli.hub.web import HumanDesks, page_door
    from dsh_cli.mcp_server.server import serve_asgi

    try:
        check_host(options.host, options.insecure_http)
        settings = load_settings()
        table, source = hub_table(Path(options.config) if options.config else None)
        hub_config = hub_settings(table, source)
        given = options.public_url or hub_config.public_url
        key = "--public-url" if options.public_url else f"{source}: [hub] public_url"
        public = public_url(given, key, insecure_http=options.insecure_http) \
            if given is not None else None
        store = await asyncio.to_thread(HubStore.open, options.store, replica=options.replica,
                                        caps=hub_config.caps)
    except HarnessError as error:
        say(format_line(error.code, error.message))
        return 2 if error.code == USAGE else 1
    async with contextlib.AsyncExitStack() as stack:
        stack.callback(store.close)
        watch = HubWatch(store, report=say)
        try:
            await watch.start()
        except HubStoreError as error:
            say(format_line(error.code, error.message))
            return 1
        stack.push_async_callback(watch.close)
        hub = HubContext(store, watch, routes=hub_config.routes, report=say)
        days = (options.retention_days if options.retention_days is not None
                else hub_config.retention_days)
        pruning = asyncio.ensure_future(keep_pruning(store, days, report=say))
        stack.push_async_callback(close_task, pruning)
        agents = agents_side(hub, question_timeout=settings.question_timeout)
        stack.push_async_callback(agents.close)  # before the watch closes: withdrawn first
        try:
            sock = _bind(options.host, options.port)
        except OSError as error:
            say(format_line(USAGE, f"cannot listen on {options.host}:{options.port}: "
                                   f"{error.strerror}"))
            return 2
        routes = [*history_routes(hub), *(extra_routes(hub) if extra_routes is not None else ())]
        desks = HumanDesks(hub)
        hub.stopping.append(desks.stopping)
        stack.push_async_callback(desks.close)  # before the watch closes: claims let go
        if public is None:  # plain http only where check_host let it be served
            public = public_url(url_of(sock), "the bound URL", insecure_http=True)
        app = page_door(create_app(hub, agents, extra_routes=routes), hub, public, desks)
        await serve_asgi(agents.server, app, sock,
                         started=lambda: say(notice(f"hub {url_of(sock)}")),
                         stopping=hub.stop_streams)
    return 0

"""Forks the conformance suite's clients from one process that imported dsh's MCP client once.

``python client_runner.py SOCKET`` imports ``dsh_client`` and every module dsh's MCP client
imports (in a function too: the MCP SDK builds its pydantic classes at import, ~1.2 CPU-s in
every client), then listens on SOCKET (a ``SOCK_SEQPACKET`` Unix socket). ``batch_client.py``,
the command the suite starts for each scenario, sends its arguments, environment and standard
descriptors; the runner forks a child that becomes that client (``dsh_client.main`` on the
scenario's server) and tells ``batch_client.py`` its exit code when it ends. A
``batch_client.py`` that goes away (the suite's timeout) takes its child with it (SIGKILL).
Each scenario still has a dsh client process of its own; it only does not import again.
"""

from __future__ import annotations

import ast
import asyncio
import gc
import importlib
import json
import os
import pkgutil
import selectors
import signal
import socket
import sys
import threading
import traceback
from pathlib import Path

from batch_client import CODE  # the reply, then the child's exit code (128 + a signal's)

MAX_MESSAGE = 1 << 20  # the request: arguments and environment as JSON


def preload() -> None:
    """``dsh_client`` and every module of dsh's MCP client, with each module one names."""
    import dsh_client  # noqa: F401

    import dsh_cli.mcp_client as package

    for info in pkgutil.walk_packages(package.__path__, "dsh_cli.mcp_client."):
        importlib.import_module(info.name)
    named: set[str] = set()
    for source in Path(package.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(source.read_bytes())):
            if isinstance(node, ast.Import):
                named.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                named.add(node.module)
    for name in sorted(named):
        try:
            importlib.import_module(name)
        except ImportError:  # an optional module: the child imports (or misses) it itself
            pass


def serve(path: str) -> None:
    """Fork a client for each request on ``path`` until SIGTERM (the children end with it);
    says ``ready`` on stdout once it listens."""
    assert threading.active_count() == 1, "a fork copies one thread: no others may run"
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGTERM, lambda *_: None)  # ends the loop through the wake-up pipe
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    staging = f"{path}.{os.getpid()}"
    listener.bind(staging)
    listener.listen(64)
    os.rename(staging, path)  # clients see the socket only once it is listening
    print("ready", flush=True)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "listener")
    selector.register(wake_read, selectors.EVENT_READ, "stop")
    children: dict[int, tuple[int, socket.socket]] = {}  # pidfd -> (pid, its client's link)
    try:
        while True:
            for key, _ in selector.select():
                if key.data == "stop":
                    return
                if key.data == "listener":
                    link, _ = listener.accept()
                    selector.register(link, selectors.EVENT_READ, "request")
                elif key.data == "request":
                    link = key.fileobj  # type: ignore[assignment]
                    selector.unregister(link)
                    links = [other for _, other in children.values()]
                    pid = start(link, [listener, wake_read, wake_write, selector, *links])
                    if pid is None:
                        link.close()
                        continue
                    pidfd = os.pidfd_open(pid)
                    children[pidfd] = pid, link
                    selector.register(pidfd, selectors.EVENT_READ, "ended")
                    selector.register(link, selectors.EVENT_READ, "gone")
                elif key.data == "gone":  # the client's batch_client.py ended first
                    pid = next(pid for pid, link in children.values() if link is key.fileobj)
                    os.kill(pid, signal.SIGKILL)
                    selector.unregister(key.fileobj)
                else:  # a child ended: its code to its batch_client.py
                    pidfd = key.fd
                    pid, link = children.pop(pidfd)
                    selector.unregister(pidfd)
                    os.close(pidfd)
                    if link in selector.get_map():
                        selector.unregister(link)  # still heard for going away
                    _, status = os.waitpid(pid, 0)
                    tell(link, os.waitstatus_to_exitcode(status))
    finally:
        for pid, _link in children.values():
            os.kill(pid, signal.SIGKILL)


def tell(link: socket.socket, code: int) -> None:
    """The child's exit code to its ``batch_client.py`` (which may be gone); the link closed."""
    try:
        link.send(f"{CODE}{code if code >= 0 else 128 - code}".encode())
    except OSError:
        pass
    finally:
        link.close()


def start(link: socket.socket, owned: list) -> int | None:
    """Fork the client ``link`` asks for; its pid (None when the request is unreadable)."""
    try:
        message, fds, _flags, _address = socket.recv_fds(link, MAX_MESSAGE, 3)
        request = json.loads(message)
    except (OSError, ValueError):
        return None
    if len(fds) != 3:
        for fd in fds:
            os.close(fd)
        return None
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid:
        for fd in fds:
            os.close(fd)
        return pid
    code = 1
    try:
        become(request, fds, [link, *owned])
        import dsh_client

        code = asyncio.run(dsh_client.main(sys.argv[-1], os.environ.get(
            "MCP_CONFORMANCE_SCENARIO", "")))
    except BaseException:  # the child's end, said as a client's would be
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def become(request: dict, fds: list[int], owned: list) -> None:
    """In the child: the server's descriptors closed, the client's taken on."""
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    for thing in owned:
        if isinstance(thing, int):
            os.close(thing)
        else:
            thing.close()
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    sys.argv = list(request["argv"])


if __name__ == "__main__":
    preload()
    gc.collect()
    gc.freeze()  # the children's collections then leave the shared pages unwritten
    serve(sys.argv[1])
    os._exit(0)  # nothing to finalize: skip tearing down the imported SDKs

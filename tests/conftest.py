"""Every test gets its own DSH_HOME and a clean environment (no real keys, no real model)."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import sys

import pytest
from harness.dsh_under_test import (
    CLEARED,
    compile_checkout,
    prepare,
    start_fork_server,
    stop_fork_server,
)

_FORK_SERVER = pytest.StashKey["object"]()


def pytest_configure(config):
    """Every child process runs this checkout's dsh (``harness/dsh_under_test.py``), forked by
    the fork server of the process running the test (``harness/forkserver.py``)."""
    prepare()
    if not hasattr(config, "workerinput"):  # once per run, not once per xdist worker
        compile_checkout()
    # in the processes that run tests (each process's ``DSH`` folder goes at its end)
    server = None
    if hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None):
        server = start_fork_server()
    config.stash[_FORK_SERVER] = server


def pytest_unconfigure(config):
    stop_fork_server(config.stash.get(_FORK_SERVER, None))


@pytest.hookimpl(wrapper=True)
def pytest_collection(session):
    """Test modules are rewritten for their asserts once, then read from pytest's cache.

    Where the environment turns bytecode off (``PYTHONDONTWRITEBYTECODE``), pytest rewrote
    every test module in every worker of every run: ~11 s of CPU per worker. Only the
    collection writes; the tests themselves run with the environment's setting.
    """
    off = sys.dont_write_bytecode
    sys.dont_write_bytecode = False
    try:
        return (yield)
    finally:
        sys.dont_write_bytecode = off


@pytest.fixture(autouse=True)
def dsh_home(tmp_path_factory, monkeypatch):
    """A fresh state directory per test; keys and model settings cleared."""
    home = tmp_path_factory.mktemp("dsh-home")
    monkeypatch.setenv("DSH_HOME", str(home))
    for name in CLEARED:
        monkeypatch.delenv(name, raising=False)
    return home


_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _check_loopback(address) -> None:
    if isinstance(address, tuple) and address:
        host = address[0]
        try:
            loopback = ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = host == "localhost"
        if not loopback:
            raise OSError(f"tests may only connect to loopback, not {host!r}")


@pytest.fixture(autouse=True)
def closed_network(monkeypatch):
    """In-process code may reach only servers the tests start on 127.0.0.1."""

    def connect(sock, address):
        _check_loopback(address)
        return _real_connect(sock, address)

    def connect_ex(sock, address):
        _check_loopback(address)
        return _real_connect_ex(sock, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)


@pytest.fixture
def run():
    """``run(coro)``: ``asyncio.run`` with a ceiling, so a broken seam fails, never hangs."""

    def run_bounded(coro, ceiling=5.0):
        async def bounded():
            return await asyncio.wait_for(coro, ceiling)

        return asyncio.run(bounded())

    return run_bounded


@pytest.fixture
def server():
    """A fake OpenAI-compatible server on 127.0.0.1 (``tests/fakes/openai_server.py``)."""
    from fakes.openai_server import FakeOpenAI

    with FakeOpenAI() as fake:
        yield fake

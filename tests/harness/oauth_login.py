"""The OAuth-protected server of the login tests and the ``dsh`` commands they run against it.

The server is ``tests/fakes/oauth_mcp_server.py`` (a real process on 127.0.0.1); every dsh
is a real subprocess. ``age_login`` makes an access token's time pass on both sides (the
server's and the token file's) instead of sleeping through it.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx2
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from harness.dsh_under_test import DSH

FAKE = Path(__file__).resolve().parents[1] / "fakes" / "oauth_mcp_server.py"
GREETING = "hello from the protected server"
NOTED = "noted, with the write scope"
CEILING = 60


@dataclass
class ProtectedServer:
    """The running fake: its URL, and the pipes that tell it time has passed."""

    url: str
    process: subprocess.Popen[str]

    def expire_access_tokens(self) -> None:
        """Every access token it issued so far is expired (its answer says it is done)."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write("expire\n")
        self.process.stdin.flush()
        assert self.process.stdout.readline() == "expired\n"

    def mode(self, *options: str) -> None:
        """From the next request on it serves as if started with ``options`` (its answer says
        the mode is set)."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(f"mode {json.dumps(list(options))}\n")
        self.process.stdin.flush()
        assert self.process.stdout.readline() == "mode set\n"


@contextlib.contextmanager
def running_protected_server(*options: str) -> Iterator[ProtectedServer]:
    """The OAuth-protected MCP server while it runs."""
    process = subprocess.Popen([sys.executable, str(FAKE), *options], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), url
        yield ProtectedServer(url, process)
    finally:
        process.kill()
        process.wait(timeout=10)


@contextlib.contextmanager
def protected_server(*options: str) -> Iterator[str]:
    """The OAuth-protected MCP server's URL while it runs."""
    with running_protected_server(*options) as server:
        yield server.url


@contextlib.contextmanager
def in_mode(server: ProtectedServer, *options: str) -> Iterator[ProtectedServer]:
    """``server`` (one a module or the session shares) in the mode ``options`` name, and back
    in its plain mode after: what a server started with ``options`` was to one test."""
    server.mode(*options)
    try:
        yield server
    finally:
        server.mode()


def age_login(server: ProtectedServer, home: Path) -> None:
    """The stored access token is past its expiry, for the server and for the next dsh.

    What sleeping past ``expires_in`` did: the server refuses the token, and the token file's
    ``expires_at`` (wall clock, which a new dsh process compares) lies in the past.
    """
    server.expire_access_tokens()
    tokens = home / "mcp-tokens.json"
    document = json.loads(tokens.read_text())
    for entry in document.values():
        assert entry["expires_at"] > time.time()  # the login said when it expires
        entry["expires_at"] = time.time() - 1
    tokens.write_text(json.dumps(document))


def servers_file(tmp_path: Path, url: str) -> str:
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({"mcpServers": {"prot": {"type": "http", "url": url}}}))
    return str(path)


def entry_file(tmp_path: Path, url: str, oauth: dict) -> str:
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({"mcpServers": {"prot": {"type": "http", "url": url,
                                                        "oauth": oauth}}}))
    return str(path)


def dsh(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([DSH, *args], capture_output=True, text=True, timeout=CEILING,
                          stdin=subprocess.DEVNULL)


def listed(servers: str) -> dict:
    result = dsh("mcp", "list", "--mcp-config", servers, "--json")
    server = json.loads(result.stdout)[0]
    # mcp list's status says whether every server started
    assert result.returncode == (0 if server["started"] else 1), result.stderr
    return server


def mcp_list(servers: str, **environ: str) -> tuple[dict, str]:
    """``dsh mcp list --json``'s one server and everything dsh wrote on stderr."""
    result = subprocess.run([DSH, "mcp", "list", "--mcp-config", servers, "--json"],
                            capture_output=True, text=True, timeout=CEILING,
                            stdin=subprocess.DEVNULL, env={**os.environ, **environ})
    [server] = json.loads(result.stdout)
    return server, result.stderr


def log_in(servers: str, *, follow: bool = True, timeout: str = "30",
           ) -> subprocess.CompletedProcess[str]:
    """``dsh mcp login prot``; with ``follow`` the test is the browser that says yes."""
    process = subprocess.Popen([DSH, "mcp", "login", "prot", "--mcp-config", servers,
                                "--no-open", "--timeout", timeout], stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    first = process.stderr.readline()
    if follow:
        url = first.rsplit(" ", 1)[-1].strip()
        assert "/authorize?" in url and "code_challenge_method=S256" in url, first
        page = httpx2.get(url, follow_redirects=True, timeout=CEILING)
        assert page.status_code == 200 and "logged in" in page.text
    out, err = process.communicate(timeout=CEILING)
    return subprocess.CompletedProcess(process.args, process.returncode, out, first + err)


def grants(record: Path) -> list[str]:
    return record.read_text().split() if record.exists() else []


def pem(key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey) -> str:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


def public_pem_file(key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey, path: Path) -> str:
    path.write_bytes(key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    return str(path)

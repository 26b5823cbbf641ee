"""The rig for the real agents (Claude Code, Codex CLI, Gemini CLI) with ``dsh mcp`` as their
MCP server; ``conftest.py`` makes fixtures of it.

Each agent runs as a child with ``HOME`` in a temporary folder, its model at the scripted
server of ``model_server.py`` on 127.0.0.1, update checks and telemetry off, and every
proxy variable pointing at ``Leaks``: a listener on 127.0.0.1 that refuses and records any
request an agent tries to send somewhere else. ``install_dsh`` is the one place that adds
dsh to an agent's configuration: it runs ``dsh mcp install AGENT``, then adds only what
this offline test run needs.
"""

from __future__ import annotations

import functools
import json
import os
import queue
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import tomlkit
from harness.dsh_under_test import DSH, ROOT

AGENTS = ("claude", "codex", "gemini")
RUN_CEILING = 120.0  # seconds; a wedged agent fails its test instead of hanging the suite
BATCH = {"questions": [{"id": "db", "question": "Which database?",
                        "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}]}]}


def install_dsh(agent: str, home: Path, project: Path, *, args: tuple[str, ...] = (),
                env: dict[str, str] | None = None, entry: dict[str, Any] | None = None) -> None:
    """``dsh mcp install AGENT`` run for real with HOME and cwd the test's; then test-only keys.

    Only what an offline test run needs is added on top of what install wrote: ``ARGS`` after
    ``mcp`` and ``env`` in the server's entry (Codex passes a server only a few variables of
    its own environment, so ``PYTHONPATH`` is named there; ``DSH_HOME`` is install's own,
    run with the desk's ``DSH_HOME`` as a user would), and ``entry``,
    keys a test sets in that entry. Every key that lets the agent list and call the tool is
    install's own.
    """
    environ = {key: value for key, value in os.environ.items()
               if key not in ("XDG_CONFIG_HOME", "DSH_HOME")}
    extra = dict(env or {})
    if "DSH_HOME" in extra:  # install run as the user would, with the DSH_HOME of the desk
        environ["DSH_HOME"] = extra["DSH_HOME"]
    done = subprocess.run([DSH, "mcp", "install", agent], cwd=project,
                          env={**environ, "HOME": str(home)}, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    if agent == "codex":
        path = home / ".codex" / "config.toml"
        document = tomlkit.parse(path.read_text(encoding="utf-8"))
        server = document["mcp_servers"]["dsh"]  # type: ignore[index]
        server["args"] = [*server["args"], *args]  # type: ignore[index]
        # DSH_HOME in the entry is install's own (Codex passes a server none of its own)
        extra.pop("DSH_HOME", None)
        server.setdefault("env", {}).update(extra)  # type: ignore[union-attr]
        server.update(entry or {})  # type: ignore[union-attr]
        path.write_text(tomlkit.dumps(document), encoding="utf-8")
        return
    path = home / (".claude.json" if agent == "claude" else ".gemini/settings.json")
    document = json.loads(path.read_text(encoding="utf-8"))
    server = document["mcpServers"]["dsh"]
    server["args"] = [*server["args"], *args]
    server["env"] = extra
    server.update(entry or {})
    _write_json(path, document)


def _write_json(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2), encoding="utf-8")


def _merge_json(path: Path, value: dict[str, Any]) -> None:
    current = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    _write_json(path, {**current, **value})


def _append(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as file:
        file.write(text)


def model_settings(agent: str, home: Path, model_url: str) -> dict[str, str]:
    """Point AGENT at the scripted model with everything that phones home off; its env."""
    if agent == "claude":
        return {"ANTHROPIC_BASE_URL": model_url, "ANTHROPIC_API_KEY": "sk-ant-fake",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1",
                "DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1",
                # 2.1.332 offers MCP tools only through its ToolSearch tool, which a real
                # model calls first; the scripted one calls the tool it is offered
                "ENABLE_TOOL_SEARCH": "false",
                # the TUI fetches a model catalog and clones the official plugin marketplace
                "CLAUDE_CODE_MODEL_CATALOG": "off",
                "CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL": "1"}
    if agent == "codex":
        _append(home / ".codex" / "config.toml", "\n".join([
            'model = "fake-model"', 'model_provider = "fake"',
            "check_for_update_on_startup = false",
            "[analytics]", "enabled = false",
            # Plugins and apps fetch from github.com and chatgpt.com at start-up.
            "[features]", "apps = false", "plugins = false", "remote_plugin = false",
            "[model_providers.fake]", 'name = "fake"', f'base_url = "{model_url}/v1"',
            'wire_api = "responses"', 'env_key = "FAKE_MODEL_KEY"',
            "request_max_retries = 0", "stream_max_retries = 0", ""]) + "\n")
        return {"CODEX_HOME": str(home / ".codex"), "FAKE_MODEL_KEY": "fake"}
    if agent == "gemini":
        _merge_json(home / ".gemini" / "settings.json", {
            # With GOOGLE_GEMINI_BASE_URL and no auth type, 0.61 picks its "gateway" auth,
            # which `gemini -p` then refuses ("Invalid auth method selected").
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            # A named model: "auto" first asks a classifier model for a route, and retries
            # it with back-off when the answer is not its JSON.
            "model": {"name": "gemini-2.5-pro"},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            "general": {"disableAutoUpdate": True, "disableUpdateNag": True}})
        return {"GEMINI_API_KEY": "fake", "GOOGLE_GEMINI_BASE_URL": model_url}
    raise ValueError(f"no such agent: {agent}")


class Leaks:
    """A refusing proxy on 127.0.0.1: every request that reaches it is one an agent meant
    for the internet; ``hosts`` records where to."""

    def __init__(self) -> None:
        self.hosts: list[str] = []
        self._server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._server.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self._server.accept()
            except OSError:
                return
            with connection:
                connection.settimeout(2)
                try:
                    head = connection.recv(4096).decode("latin-1").split("\r\n")[0]
                    self.hosts.append(head.split(" ")[1] if " " in head else head)
                    connection.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n"
                                       b"Connection: close\r\n\r\n")
                except OSError:
                    pass

    def close(self) -> None:
        self._server.close()


@dataclass
class Agent:
    """One agent, installed under its own HOME, ready to run one prompt."""

    name: str
    program: str
    home: Path
    project: Path
    dsh_home: Path
    leaks: Leaks
    model_url: str
    settings: dict[str, str]

    def env(self) -> dict[str, str]:
        """The agent's whole environment: nothing of the test runner's but PATH and locale."""
        paths = [str(Path(DSH).parent), str(Path(sys.executable).parent),
                 os.environ.get("PATH", "")]
        env = {"HOME": str(self.home), "PATH": os.pathsep.join(paths), "LANG": "C.UTF-8",
               "TERM": "dumb", "NO_COLOR": "1", "CI": "1",
               "XDG_CONFIG_HOME": str(self.home / ".config"),
               "XDG_CACHE_HOME": str(self.home / ".cache"),
               "XDG_DATA_HOME": str(self.home / ".local" / "share"),
               "DSH_HOME": str(self.dsh_home), "PYTHONPATH": str(ROOT),
               "HTTPS_PROXY": self.leaks.url, "HTTP_PROXY": self.leaks.url,
               "https_proxy": self.leaks.url, "http_proxy": self.leaks.url,
               "ALL_PROXY": self.leaks.url, "NO_PROXY": "127.0.0.1,localhost",
               "no_proxy": "127.0.0.1,localhost"}
        env.update(self.settings)
        return env

    def install(self, *args: str, **entry: Any) -> None:
        """dsh as this agent's MCP server (``dsh mcp ARGS``); ENTRY overrides install's keys."""
        env = {"DSH_HOME": str(self.dsh_home), "PYTHONPATH": str(ROOT)}
        if self.name == "gemini":
            # Gemini CLI refuses PYTHONPATH in an entry ("Blocked dangerous environment
            # variable override"); it passes its own environment on, which has it.
            del env["PYTHONPATH"]
        install_dsh(self.name, self.home, self.project, args=args, env=env, entry=entry)

    def argv(self, prompt: str, extra: tuple[str, ...] = ()) -> list[str]:
        """The agent's documented non-interactive form."""
        if self.name == "claude":
            return [self.program, "-p", prompt, "--output-format", "json", *extra]
        if self.name == "codex":
            return [self.program, "exec", "--skip-git-repo-check", *extra, prompt]
        return [self.program, "-p", prompt, "--skip-trust", "--output-format", "json", *extra]

    def start(self, prompt: str, *extra: str) -> subprocess.Popen[str]:
        return subprocess.Popen(self.argv(prompt, extra), cwd=self.project, env=self.env(),
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)


def finish(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    """Wait for an agent (bounded); its exit status, stdout and stderr."""
    try:
        out, err = process.communicate(timeout=RUN_CEILING)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        pytest.fail(f"the agent did not finish in {RUN_CEILING} s:\n{out[-2000:]}\n{err[-2000:]}")
    return process.returncode, out, err


class JsonlDesk:
    """``dsh attach --jsonl ARGS`` as a child: its events on a queue, frames written to it."""

    def __init__(self, dsh_home: Path, *args: str, env: dict[str, str] | None = None) -> None:
        env = {**{key: value for key, value in os.environ.items()
                  if key != "XDG_RUNTIME_DIR"}, **(env or {})}
        env["DSH_HOME"] = str(dsh_home)
        self.process = subprocess.Popen([DSH, "attach", "--jsonl", *args], env=env, text=True,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self._events: queue.Queue[dict[str, Any] | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._events.put(json.loads(line))
        self._events.put(None)

    def event(self, kind: str, agent: subprocess.Popen[str] | None = None,
              timeout: float = RUN_CEILING) -> dict[str, Any]:
        """The next event of ``kind`` (others skipped); fails once ``agent`` has ended."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                event = self._events.get(timeout=0.2)
            except queue.Empty:
                if agent is not None and agent.poll() is not None:
                    out, err = agent.communicate()
                    pytest.fail(f"the agent ended ({agent.returncode}) before a {kind} event "
                                f"at the desk:\n{out[-3000:]}\n{err[-3000:]}")
                if time.monotonic() > deadline:
                    pytest.fail(f"no {kind} event at the desk within {timeout} s")
                continue
            assert event is not None, "the desk ended early"
            if event["type"] == kind:
                return event

    def send(self, frame: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(frame) + "\n")
        self.process.stdin.flush()

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


@functools.cache
def _version(program: str) -> tuple[int, str]:
    with tempfile.TemporaryDirectory() as home:
        try:
            done = subprocess.run([program, "--version"], capture_output=True, text=True,
                                  env={"HOME": home, "PATH": os.environ.get("PATH", "")},
                                  timeout=60)
        except (OSError, subprocess.TimeoutExpired) as error:
            return -1, str(error)
    return done.returncode, (done.stderr or done.stdout).strip()[-300:]


def runnable(program: str) -> str:
    """PROGRAM when ``PROGRAM --version`` runs here; else the test skips, saying why (an
    engine this Node lacks, a native binary its install script did not put in place)."""
    status, said = _version(program)
    if status != 0:
        pytest.skip(f"{Path(program).name} cannot run here ({status}): {said}")
    return program

"""What ``dsh mcp install`` writes for each agent, as that agent documents its config.

Each agent's files, keys and values were checked against the agent itself (the shipped
schema or source of the version named), not written from memory:

- Claude Code (2.1.197, the zod schemas in its binary): the server in ``~/.claude.json``
  (user) or ``.mcp.json`` (project) under ``mcpServers``, ``timeout`` its per-call tool
  timeout in ms; ``permissions.allow`` and ``env`` in ``~/.claude/settings.json`` or
  ``.claude/settings.json``; a project's server is approved by ``enabledMcpjsonServers`` in
  ``.claude/settings.local.json`` (where ``claude`` writes it; the shared file cannot),
  and counts only once the user has trusted the project.
  ``claude -p`` connects its servers in the background and may send its first model
  request without them, unless ``MCP_CONNECTION_NONBLOCKING`` is false ("0"); then it
  waits ``MCP_CONNECT_TIMEOUT_MS`` (default 5000) for them (both read in the binary).
- Codex (``codex-rs/core/config.schema.json``): ``[mcp_servers.dsh]`` in
  ``~/.codex/config.toml`` or ``.codex/config.toml`` (trusted projects), with
  ``required`` (``codex exec`` waits for the server before its first request; without it
  the tools can be missing, as ``tests/agents`` found with 0.171.0),
  ``startup_timeout_sec`` (default 10), ``tool_timeout_sec`` (default 60) and
  ``tools.ask_user_question.approval_mode = "approve"`` (``get_user_answer`` the same);
  the project's file is read only once Codex trusts the project. A server gets only
  ``HOME``, ``LOGNAME``, ``PATH``, ``SHELL``, ``USER``, ``LANG``, ``LC_ALL``, ``TERM``,
  ``TMPDIR``, ``TZ`` (and CA-bundle variables) of Codex's environment plus its ``env``
  table (``create_env_for_mcp_server`` in ``codex-rs/rmcp-client``; 0.171.0 run with a
  probe server saw no ``DSH_HOME``), so a ``DSH_HOME`` set at install goes into
  ``[mcp_servers.dsh.env]``. Claude Code 2.1.197 and Gemini CLI 0.61.0 pass their whole
  environment on (Gemini less a few credentials), as
  the same probe saw; their entries get no ``env``.
- Gemini CLI (0.61.0, its settings schema): ``mcpServers`` in ``~/.gemini/settings.json``
  or ``.gemini/settings.json``; ``timeout`` in ms (default 10 minutes), ``trust: true``
  skips its confirmation for this server's tools. It starts no MCP server in a folder it
  does not trust: ``gemini -p`` exits 55 there; ``--skip-trust`` (which sets it) or
  ``GEMINI_CLI_TRUST_WORKSPACE=true`` trusts the folder for a run.
- opencode (``packages/opencode/src/config/mcp.ts``, ``permission.ts``): ``mcp.dsh`` of
  type ``local`` with the command as one array and ``timeout`` in ms (default 5000), in
  ``~/.config/opencode/opencode.json`` or ``opencode.json``; ``permission`` keyed by the
  tool's name there, ``dsh_ask_user_question`` (and ``dsh_get_user_answer``).
- Cursor (cursor.com/docs/mcp): ``mcpServers`` in ``~/.cursor/mcp.json`` or
  ``.cursor/mcp.json``; no timeout or permission key is documented.
- VS Code (code.visualstudio.com, MCP configuration reference): ``servers`` with
  ``type: "stdio"`` in the user profile's ``mcp.json`` or ``.vscode/mcp.json``.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from dsh_cli.core.hub_address import TOKEN_VARIABLE
from dsh_cli.mcp_server.install.documents import Format, Setting

__all__ = ["AGENTS", "HUMAN_TIMEOUT", "NOTES", "PROGRAMS", "STARTUP_WAIT", "Edit", "dsh_command",
           "edits_for", "on_path"]

Scope = Literal["user", "project"]

SERVER = "dsh"
# the tools an agent's permission layer is told to let run: the question, and the fetch of
# an async one's answer (it only reads what the human answered)
TOOLS = ("ask_user_question", "get_user_answer")
HUMAN_TIMEOUT = 3600  # seconds a tool call may wait for a human: an hour, not the agents' 60 s
STARTUP_WAIT = 30  # seconds an agent may wait for dsh mcp to start on a loaded machine


@dataclass(frozen=True)
class Edit:
    """The settings one file gets."""

    path: Path
    format: Format
    settings: tuple[Setting, ...]


def dsh_command() -> list[str]:
    """The absolute command of this dsh: the agent's PATH may not have the venv on it."""
    script = Path(sys.argv[0])
    if script.name == "dsh" and script.is_file():
        return [os.path.abspath(script)]
    return [sys.executable, "-m", "dsh_cli"]


def on_path(command: list[str]) -> bool:
    """Whether ``dsh`` on PATH is this dsh: then a project's file can name it as ``dsh``."""
    import shutil

    found = shutil.which("dsh")
    return (len(command) == 1 and found is not None
            and os.path.realpath(found) == os.path.realpath(command[0]))


def _server(keys: tuple[str, ...], fields: dict[str, object]) -> tuple[Setting, ...]:
    return tuple(Setting((*keys, name), value) for name, value in fields.items())


def _claude(scope: Scope, home: Path, project: Path, argv: list[str]) -> list[Edit]:
    server = _server(("mcpServers", SERVER), {
        "type": "stdio", "command": argv[0], "args": argv[1:],
        "timeout": HUMAN_TIMEOUT * 1000})
    settings = (*(Setting(("permissions", "allow"), f"mcp__{SERVER}__{tool}", "add")
                  for tool in TOOLS),
                # without "0", `claude -p` does not wait for servers at all
                Setting(("env", "MCP_CONNECTION_NONBLOCKING"), "0"),
                Setting(("env", "MCP_CONNECT_TIMEOUT_MS"), str(STARTUP_WAIT * 1000)))
    if scope == "user":
        return [Edit(home / ".claude.json", "json", server),
                Edit(home / ".claude" / "settings.json", "json", settings)]
    # a project's own settings cannot approve its .mcp.json: the approval is the user's,
    # in the project's local settings, where claude itself writes it
    return [Edit(project / ".mcp.json", "json", server),
            Edit(project / ".claude" / "settings.json", "json", settings),
            Edit(project / ".claude" / "settings.local.json", "json",
                 (Setting(("enabledMcpjsonServers",), SERVER, "add"),))]


def _codex(scope: Scope, home: Path, project: Path, argv: list[str]) -> list[Edit]:
    base = home if scope == "user" else project
    keys = ("mcp_servers", SERVER)
    settings = (*_server(keys, {"command": argv[0], "args": argv[1:],
                                "required": True, "startup_timeout_sec": STARTUP_WAIT,
                                "tool_timeout_sec": HUMAN_TIMEOUT}),
                *(Setting((*keys, "tools", tool, "approval_mode"), "approve") for tool in TOOLS))
    from dsh_cli.core.home import HOME_VARIABLE, dsh_home

    if "--hub" in argv and "--hub-token-file" not in argv:
        # the forwarder's token is in the agent's environment, which Codex passes a server
        # only by name (``env_vars``; its binary reads the key)
        settings = (*settings, Setting((*keys, "env_vars"), TOKEN_VARIABLE, "add"))
    home_dir = dsh_home()
    if home_dir is not None:
        # Codex passes a server only HOME, PATH and a few more of its own environment
        # (codex-rs rmcp-client DEFAULT_ENV_VARS): without this its dsh mcp would look for
        # the desk in another directory than the dsh attach started with DSH_HOME
        settings = (*settings, Setting((*keys, "env", HOME_VARIABLE), os.path.abspath(home_dir)))
    return [Edit(base / ".codex" / "config.toml", "toml", settings)]


def _gemini(scope: Scope, home: Path, project: Path, argv: list[str]) -> list[Edit]:
    base = home if scope == "user" else project
    return [Edit(base / ".gemini" / "settings.json", "json", _server(("mcpServers", SERVER), {
        "command": argv[0], "args": argv[1:],
        "timeout": HUMAN_TIMEOUT * 1000, "trust": True}))]


def _opencode(scope: Scope, home: Path, project: Path, argv: list[str]) -> list[Edit]:
    config = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    path = config / "opencode" / "opencode.json" if scope == "user" else project / "opencode.json"
    return [Edit(path, "json", (
        *_server(("mcp", SERVER), {"type": "local", "command": argv,
                                   "enabled": True, "timeout": HUMAN_TIMEOUT * 1000}),
        *(Setting(("permission", f"{SERVER}_{tool}"), "allow") for tool in TOOLS)))]


def _cursor(scope: Scope, home: Path, project: Path, argv: list[str]) -> list[Edit]:
    base = home if scope == "user" else project
    return [Edit(base / ".cursor" / "mcp.json", "json", _server(("mcpServers", SERVER), {
        "command": argv[0], "args": argv[1:]}))]


def _vscode_user_dir(home: Path) -> Path:
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / "Code" / "User"
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA") or home / "AppData" / "Roaming") / "Code" / "User"
    return Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config") / "Code" / "User"


def _vscode(scope: Scope, home: Path, project: Path, argv: list[str]) -> list[Edit]:
    path = (_vscode_user_dir(home) / "mcp.json" if scope == "user"
            else project / ".vscode" / "mcp.json")
    return [Edit(path, "json", _server(("servers", SERVER), {
        "type": "stdio", "command": argv[0], "args": argv[1:]}))]


# what the agent needs beyond its files, said after installing (checked as the docstring says)
_GEMINI_TRUST = ("Gemini CLI starts MCP servers only in a folder it trusts (user-level ones "
                 "too): trust the folder in gemini, or run `gemini -p … --skip-trust`")
NOTES = {
    ("claude", "project"): "Claude Code uses a project's .mcp.json once you have trusted the "
                           "project: run `claude` there once",
    ("codex", "project"): "Codex reads a project's .codex/config.toml only in a project it "
                          "trusts",
    ("gemini", "user"): _GEMINI_TRUST,
    ("gemini", "project"): _GEMINI_TRUST,
}

# the program each agent is started as (Cursor's and VS Code's command-line launchers)
PROGRAMS = {"claude": "claude", "codex": "codex", "gemini": "gemini", "opencode": "opencode",
            "cursor": "cursor", "vscode": "code"}

# the agent's name on the command line -> its name for people, and its edits
AGENTS = {
    "claude": ("Claude Code", _claude),
    "codex": ("Codex", _codex),
    "gemini": ("Gemini CLI", _gemini),
    "opencode": ("opencode", _opencode),
    "cursor": ("Cursor", _cursor),
    "vscode": ("VS Code", _vscode),
}


def edits_for(agent: str, scope: Scope, *, home: Path, project: Path,
              command: list[str], mcp_args: tuple[str, ...] = ()) -> list[Edit]:
    """The files ``agent`` reads dsh from, and what each gets: the server is
    ``COMMAND mcp MCP_ARGS`` (``--hub URL …`` for a forwarder)."""
    return AGENTS[agent][1](scope, home, project, [*command, "mcp", *mcp_args])

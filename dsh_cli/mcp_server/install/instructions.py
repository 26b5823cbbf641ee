"""The line an agent's instructions file gets so its model asks through dsh, not its own tool.

Claude Code, Codex and Gemini CLI each have a question tool of their own, drawn in their own
terminal (checked in the versions ``tests/npm`` pins and their docs): Claude Code's
``AskUserQuestion`` (instructions in ``~/.claude/CLAUDE.md``, a project's ``CLAUDE.md``),
Codex's ``request_user_input`` (``~/.codex/AGENTS.md``, a project's ``AGENTS.md``), Gemini
CLI's ``ask_user`` (``~/.gemini/GEMINI.md``, a project's ``GEMINI.md``). A model that has
both tools needs to be told which one reaches the human at the desk.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dsh_cli.mcp_server.install.agents import SERVER

__all__ = ["INSTRUCTIONS", "MARKER", "Instructions", "instructions_for", "try_it"]

# what the line always says: its presence means the file already tells the model (a line the
# user reworded keeps it, and is not added again)
MARKER = f"`ask_user_question` tool of the `{SERVER}` MCP server"


@dataclass(frozen=True)
class Instructions:
    """Where an agent reads its instructions, and the tool of its own the line turns from."""

    user: tuple[str, ...]  # under HOME
    project: str  # in the project's root
    own_tool: str

    def line(self) -> str:
        return (f"When you need to ask me something, use the {MARKER} (I answer it at my dsh "
                f"desk), not your own {self.own_tool}.")


INSTRUCTIONS = {
    "claude": Instructions((".claude", "CLAUDE.md"), "CLAUDE.md", "AskUserQuestion"),
    "codex": Instructions((".codex", "AGENTS.md"), "AGENTS.md", "request_user_input"),
    "gemini": Instructions((".gemini", "GEMINI.md"), "GEMINI.md", "ask_user"),
}

_TRY_PROMPT = ("Use the ask_user_question tool of the dsh MCP server to ask me which colour "
               "the logo should be (red, green or blue), then say what I chose.")
# each agent's non-interactive form, as tests/agents runs it
_TRY = {
    "claude": ["claude", "-p", _TRY_PROMPT],
    "codex": ["codex", "exec", "--skip-git-repo-check", _TRY_PROMPT],
    "gemini": ["gemini", "-p", _TRY_PROMPT, "--skip-trust"],
}


def instructions_for(agent: str, scope: str, *, home: Path,
                     project: Path) -> tuple[Path, Instructions] | None:
    """The instructions file of ``agent`` in ``scope`` and what goes in it; None: no own tool."""
    found = INSTRUCTIONS.get(agent)
    if found is None:
        return None
    path = home.joinpath(*found.user) if scope == "user" else project / found.project
    return path, found


def try_it(agent: str) -> list[str] | None:
    """One command that makes the real agent ask a question at the desk."""
    return _TRY.get(agent)

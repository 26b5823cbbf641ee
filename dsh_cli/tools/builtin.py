"""The tools every session starts with, by name: adding a built-in tool is one row here."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from dsh_cli.tools.ask_user_question import AskUserQuestionTool
from dsh_cli.tools.registry import Tool

__all__ = ["BUILTIN_TOOLS", "builtin_tools"]

# name -> factory; a session gets a fresh instance of each (a tool may keep per-session state)
BUILTIN_TOOLS: dict[str, Callable[[], Tool[Any]]] = {
    AskUserQuestionTool.name: AskUserQuestionTool,
}


def builtin_tools(without: Collection[str] = ()) -> list[Tool[Any]]:
    """A fresh instance of every built-in tool, in table order, except those ``without``."""
    return [factory() for name, factory in BUILTIN_TOOLS.items() if name not in without]

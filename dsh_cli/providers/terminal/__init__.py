"""The interactive question UI on a terminal (prompt-toolkit, imported only when asking).

    state.py      a batch's state machine: every key of spec/terminal.md, no prompt-toolkit;
                  only what the human did
    viewport.py   what the screen shows of a batch: scroll offsets, page sizes, built rows
    text.py       styled text wrapped by display width (CJK, emoji)
    render.py     the screen of a state as styled lines; only visible option rows are built
    preview.py    an option's preview as styled lines, windowed, only the lines shown sanitised
    runs.py       a window that writes a line's marked last fragment as one cell (speed)
    keys.py       the flat key-binding table
    provider.py   TerminalProvider (the application and its countdown) and terminal_provider
    reflow.py     which terminals rewrap rows on a resize, and where the frame then starts
    typeahead.py  echo off from command start until the UI owns the terminal, and the keys
                  typed before it dropped, for questions and permissions alike (stdlib only)
    permission.py the permission prompt: what it grants shown whole, "always" confirmed

Names load on first use, so ``typeahead`` can run before the seam and pydantic are imported.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dsh_cli.providers.terminal.provider import TerminalProvider, terminal_provider

__all__ = ["TerminalProvider", "terminal_provider"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from dsh_cli.providers.terminal import provider

        return getattr(provider, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

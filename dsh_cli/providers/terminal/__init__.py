"""The interactive question UI on a terminal (prompt-toolkit, imported only when asking).

    state.py     a batch's state machine: every key of spec/terminal.md, no prompt-toolkit
    text.py      styled text wrapped by display width (CJK, emoji)
    render.py    the screen of a state as styled lines; only visible option rows are built
    keys.py      the flat key-binding table
    provider.py  TerminalProvider (the application and its countdown) and terminal_provider
"""

from dsh_cli.providers.terminal.provider import TerminalProvider, terminal_provider

__all__ = ["TerminalProvider", "terminal_provider"]

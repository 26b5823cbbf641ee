"""Key bindings: one flat table, each key one ``BatchState`` method (the state keeps modes;
the keys that scroll also get the screen's ``Viewport``)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dsh_cli.providers.terminal.state import BatchState
    from dsh_cli.providers.terminal.viewport import Viewport

__all__ = ["build_key_bindings"]


def build_key_bindings(state: BatchState, view: Viewport, *, on_key: Callable[[], None],
                       on_done: Callable[[Any], None],
                       on_ctrl_c: Callable[[], None] | None = None,
                       on_ctrl_d: Callable[[Any], None] | None = None) -> Any:
    """Bindings that call ``on_key()`` first (it stops a countdown), then the state.

    ``ctrl-c`` cancels the batch unless ``on_ctrl_c`` takes it (``dsh run``: interrupt);
    ``ctrl-d`` declines a declinable batch, else ``on_ctrl_d(app)`` takes it (the desk).
    """
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.keys import Keys

    bindings = KeyBindings()

    def bind(*keys: str, action: Callable[[Any], None], eager: bool = True) -> None:
        @bindings.add(*keys, eager=eager)
        def _(event: Any) -> None:
            on_key()
            if state.confirming and keys != ("escape",) and keys != ("c-c",):
                state.dismiss()  # "any other key to go back": the key does nothing else
            else:
                if keys not in _KEEP_WARNING:
                    state.draft.replacing = False  # the Other-text warning is answered
                action(event)
            if state.done:
                on_done(event.app)

    table: dict[str, Callable[[], None]] = {
        "up": functools.partial(state.up, view), "down": functools.partial(state.down, view),
        "left": state.left, "right": state.right,
        "space": state.space, "enter": state.enter, "c-j": state.enter,
        "tab": state.focus_other, "c-s": state.skip, "escape": state.escape,
        "c-t": state.discuss,
        "c-c": on_ctrl_c or state.cancel,
        "backspace": state.backspace, "delete": state.delete,
        "home": state.home, "c-a": state.home, "end": state.end, "c-e": state.end,
        "c-u": state.kill_before,
        "pageup": functools.partial(state.page, -1, view),
        "pagedown": functools.partial(state.page, 1, view),
        "s-down": functools.partial(state.scroll_preview, 1, view),
        "s-up": functools.partial(state.scroll_preview, -1, view),
    }
    for key, method in table.items():
        bind(key, action=_ignoring_event(method))
    close = on_ctrl_d
    bind("c-d", action=lambda event: close(event.app) if close and not state.declinable
         else state.decline())
    for number in range(10):
        bind(str(number), action=_ignoring_event(functools.partial(state.digit, number)))
    bind(Keys.BracketedPaste, action=lambda event: state.insert(event.data))
    # Not eager: an eager catch-all would swallow the terminal's cursor-position reply
    # (prompt-toolkit's own binding handles it) and leave a "no CPR" warning on screen.
    bind(Keys.Any, action=lambda event: _printable(state, view, event.data), eager=False)
    return bindings


# the keys that answer the warning "the text replaces the ticked options" (``n`` is Any)
_KEEP_WARNING = {("enter",), ("c-j",), ("escape",), ("<any>",)}  # "<any>": Keys.Any


def _ignoring_event(method: Callable[[], None]) -> Callable[[Any], None]:
    """A key handler that calls ``method``: the state machine needs no event."""
    return lambda event: method()


def _printable(state: BatchState, view: Viewport, data: str) -> None:
    if data and data.isprintable():
        state.letter(data, view)

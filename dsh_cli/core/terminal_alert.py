"""The terminal alert: a bell, or a desktop notification the terminal shows.

``encode`` is the one place an alert's bytes are written: the bell, OSC 9 (iTerm2, Warp,
VS Code, Windows Terminal), OSC 777 (Ghostty, WezTerm, foot, rxvt-unicode, VTE) and OSC 99
(kitty), each optionally wrapped for tmux's passthrough (``tmux_wrap``). Which one a
terminal understands is the caller's choice (``desk.notify.protocol``, ``--notify``).
"""

from __future__ import annotations

import base64

from dsh_cli.core.sanitize import sanitize_line

__all__ = ["BELL", "KINDS", "encode", "tmux_wrap"]

BELL = "\a"
KINDS = ("osc99", "osc777", "osc9", "bell")


def encode(kind: str, title: str, body: str | None = None, *, tmux: bool = False) -> str:
    """The escape for ``kind`` carrying ``title`` and ``body`` (OSC 9 shows the title alone
    when there is no body), each on one safe line; ``tmux`` wraps it. Any other kind is the
    bell."""
    # ";" separates fields in OSC 777 and starts ConEmu's OSC 9 subcommands: never in a field
    title = sanitize_line(title).replace(";", ",")
    text = None if body is None else sanitize_line(body).replace(";", ",")
    if kind == "osc99":
        # base64 (e=1): kitty reads the payload as is, so no byte of it can end the OSC early
        def part(key: str, text: str, done: int) -> str:
            data = base64.b64encode(text.encode()).decode()
            return f"\x1b]99;i=dsh:d={done}:p={key}:e=1;{data}\x1b\\"
        sequence = part("title", title, 0) + part("body", text or "", 1)
    elif kind == "osc777":
        sequence = f"\x1b]777;notify;{title};{text or ''}\x07"
    elif kind == "osc9":
        sequence = f"\x1b]9;{title}\x07" if text is None else f"\x1b]9;{title}: {text}\x07"
    else:
        return BELL  # the bell passes tmux as it is
    return tmux_wrap(sequence) if tmux else sequence


def tmux_wrap(sequence: str) -> str:
    """``sequence`` for tmux's passthrough (``allow-passthrough on``): escapes doubled."""
    return "\x1bPtmux;" + sequence.replace("\x1b", "\x1b\x1b") + "\x1b\\"

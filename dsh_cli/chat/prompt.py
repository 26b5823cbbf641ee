"""Where the chat reads the human's next message: a prompt-toolkit prompt, or plain lines.

Both have ``async read() -> str | None``: the line typed, or None when the human is done
(ctrl-d on an empty line, end of input).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from dsh_cli.core.files import create_private_file
from dsh_cli.core.sanitize import sanitize_line

if TYPE_CHECKING:
    from prompt_toolkit import PromptSession
    from prompt_toolkit.key_binding import KeyBindings

    from dsh_cli.providers.line_reader import LineReader

__all__ = ["PROMPT", "PlainPrompt", "TerminalPrompt", "history_path"]

PROMPT = "› "
PLAIN_PROMPT = "> "


def history_path() -> Path:
    """The prompt history file, in the data directory."""
    from dsh_cli.config import data_dir

    return data_dir() / "history"


class TerminalPrompt:
    """A prompt-toolkit line editor with persistent history (up arrow, ctrl-r)."""

    def __init__(self, *, history: Path | None = None, input: Any = None, output: Any = None,
                 message: str = PROMPT) -> None:
        self.history = history
        self.input = input
        self.output = output
        self.message = message
        self._session: PromptSession[str] | None = None
        self._kept = ""  # what was typed when an async answer or f2 ended the read

    def _prompt_session(self) -> PromptSession[str]:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.history import FileHistory, InMemoryHistory

        if self.history is not None:
            create_private_file(self.history)  # the history may hold anything typed
            history: Any = FileHistory(str(self.history))
        else:
            history = InMemoryHistory()
        return PromptSession(history=history, input=self.input, output=self.output,
                             key_bindings=self._keys())

    def _keys(self) -> KeyBindings:
        bindings = _newline_keys()

        @bindings.add("f2")
        def _(event: Any) -> None:  # draw a pending async question; the line is kept
            self._kept = event.current_buffer.text
            event.app.exit(result="/answer")

        return bindings

    def interrupt(self) -> None:
        """End the read now with "" (an async answer arrived), keeping the typed text."""
        app = getattr(self._session, "app", None)
        if app is None or not app.is_running:
            return
        text = app.current_buffer.text
        try:
            app.exit(result="")
        except Exception:  # it was ending anyway: the line typed is what it returns
            return
        self._kept = text

    async def read(self) -> str | None:
        if self._session is None:
            self._session = self._prompt_session()
        while True:
            kept, self._kept = self._kept, ""
            try:
                return await self._session.prompt_async(self.message, default=kept)
            except EOFError:
                return None
            except KeyboardInterrupt:
                continue  # ctrl-c on the prompt drops the line, as a shell does


def _newline_keys() -> KeyBindings:
    """alt-enter (esc then enter) puts a new line in the message; enter still sends."""
    from prompt_toolkit.key_binding import KeyBindings

    bindings = KeyBindings()

    @bindings.add("escape", "enter")
    def _(event: Any) -> None:
        event.current_buffer.insert_text("\n")

    return bindings


class PlainPrompt:
    """Plain line reading for screen readers, ``TERM=dumb`` and pipes: no cursor movement.

    ``lines`` is the ``LineReader`` the plain question provider reads from too, so the
    prompt and the questions take turns on one input instead of racing for its lines.
    """

    def __init__(self, lines: LineReader, output: TextIO, *, message: str = PLAIN_PROMPT,
                 echo: bool = False) -> None:
        self.lines = lines
        self.output = output
        self.message = message
        # piped input is not echoed by a terminal: echo it so the transcript reads well
        self.echo = echo

    async def read(self) -> str | None:
        self.output.write(self.message)
        self.output.flush()
        line = await self.lines.readline()
        if line is None or self.echo:
            self.output.write("\n" if line is None else sanitize_line(line) + "\n")
            self.output.flush()
        return line

"""A real ``TerminalProvider`` asking one batch on a terminal of a fixed size, keys by pipe."""

from __future__ import annotations

import asyncio
import io

from prompt_toolkit.application import create_app_session
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output.vt100 import Vt100_Output

from dsh_cli.interaction import (
    AskUserQuestionItem,
    AskUserQuestionRequest,
    UserInteraction,
)
from dsh_cli.providers.terminal import TerminalProvider
from dsh_cli.providers.terminal.text import cell_width

UP, DOWN, LEFT, RIGHT = "\x1b[A", "\x1b[B", "\x1b[D", "\x1b[C"
HOME, END, PGUP, PGDN = "\x1b[H", "\x1b[F", "\x1b[5~", "\x1b[6~"
ESC, CTRL_C, ENTER, TAB = "\x1b", "\x03", "\r", "\t"


def item(qid: str, *labels: str, multi: bool = False, **extra) -> AskUserQuestionItem:
    options = [{"label": label} for label in labels] or None
    return AskUserQuestionItem(id=qid, question=extra.pop("question", f"{qid}?"),
                               options=options, multi_select=multi, **extra)


class Session:
    """A provider asking one batch on a ``columns`` x ``rows`` terminal, keys by pipe."""

    def __init__(self, pipe, provider: TerminalProvider, task: asyncio.Future) -> None:
        self.pipe, self.provider, self.task = pipe, provider, task

    @property
    def state(self):
        return self.provider.state

    async def keys(self, *keys: str) -> None:
        for key in keys:
            self.pipe.send_text(key)
            await asyncio.sleep(0.2 if key == ESC else 0.02)  # a lone esc waits ttimeoutlen

    def frame(self) -> list[str]:
        """The lines of the frame the application draws now."""
        text = "".join(t for _, t in self.provider.screen._fragments())
        return text.split("\n")

    async def result(self):
        return (await asyncio.wait_for(self.task, 5)).to_json()


def ask(size: tuple[int, int], *questions: AskUserQuestionItem,
        request: AskUserQuestionRequest | None = None):
    """Run ``body(session)`` against a batch (``questions``, or a whole ``request``) shown
    on a terminal of ``size``."""
    columns, rows = size
    request = request or AskUserQuestionRequest(questions=list(questions))

    def decorator(body):
        async def main():
            output = Vt100_Output(io.StringIO(), lambda: Size(rows=rows, columns=columns),
                                  term="xterm")
            with create_pipe_input() as pipe, create_app_session(input=pipe, output=output):
                ui = UserInteraction()
                provider = TerminalProvider()
                ui.register_provider(provider)
                task = asyncio.ensure_future(ui.ask(request))
                for _ in range(300):
                    if provider.screen is not None and provider.screen.app.is_running:
                        break
                    await asyncio.sleep(0.01)
                return await asyncio.wait_for(body(Session(pipe, provider, task)), 10)
        return asyncio.run(main())
    return decorator


def assert_fits(frame: list[str], size: tuple[int, int]) -> None:
    columns, rows = size
    assert len(frame) <= rows, frame
    for line in frame:
        assert cell_width(line) <= columns - 1, (line, cell_width(line))


def key_line(frame: list[str]) -> str:
    return frame[-1]

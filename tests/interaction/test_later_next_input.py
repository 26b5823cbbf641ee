"""The next input, or an async outcome arrived first: one helper, ``LaterQuestions.next_input``."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from dsh_cli.interaction import AskUserQuestionItem, AskUserQuestionRequest, UserInteraction
from dsh_cli.interaction.later import ARRIVED

PACKAGE = Path(__file__).resolve().parents[2] / "dsh_cli"
ANSWER = [{"id": "q", "selected": ["B"]}]


class Waits:
    """A provider that shows nothing itself (the relay's, the web's)."""

    async def ask(self, context):
        await asyncio.get_running_loop().create_future()


def request() -> AskUserQuestionRequest:
    return AskUserQuestionRequest(questions=[AskUserQuestionItem(
        id="q", question="Which one?", options=[{"label": "A"}, {"label": "B"}])])


def asking() -> tuple[UserInteraction, str]:
    ui = UserInteraction()
    ui.register_provider(Waits())
    return ui, ui.later.submit(request())


def test_an_input_first_is_returned_and_the_batch_stays_asked():
    async def main():
        ui, _ = asking()
        queue: asyncio.Queue[str] = asyncio.Queue()
        queue.put_nowait("hello")
        assert await ui.later.next_input(queue.get) == "hello"
        assert ui.later.asking()

    asyncio.run(main())


def test_an_arrival_first_cancels_the_read_and_loses_no_input():
    async def main():
        ui, ticket = asking()
        queue: asyncio.Queue[str] = asyncio.Queue()
        waiting = asyncio.ensure_future(ui.later.next_input(queue.get))
        await asyncio.sleep(0)
        assert ui.pending.respond(ticket, ANSWER).accepted
        assert await asyncio.wait_for(waiting, 5) is ARRIVED
        queue.put_nowait("later")  # the cancelled get took nothing
        assert await ui.later.next_input(queue.get) is ARRIVED  # not yet taken up
        [(got, _)] = ui.later.take_arrived()
        assert got == ticket
        assert await ui.later.next_input(queue.get) == "later"

    asyncio.run(main())


def test_with_interrupt_the_read_is_told_to_end_and_its_text_returned():
    async def main():
        ui, ticket = asking()
        ended = asyncio.get_running_loop().create_future()

        async def read() -> str:
            return await ended

        waiting = asyncio.ensure_future(ui.later.next_input(
            read, interrupt=lambda: ended.set_result("")))
        await asyncio.sleep(0)
        assert ui.pending.respond(ticket, ANSWER).accepted
        assert await asyncio.wait_for(waiting, 5) == ""

    asyncio.run(main())


def test_nothing_asked_means_the_read_alone():
    async def main():
        ui = UserInteraction()
        queue: asyncio.Queue[str] = asyncio.Queue()
        waiting = asyncio.ensure_future(ui.later.next_input(queue.get))
        await asyncio.sleep(0)
        assert not waiting.done()
        queue.put_nowait("x")
        assert await asyncio.wait_for(waiting, 5) == "x"

    asyncio.run(main())


def test_no_front_door_races_its_input_against_an_arrival_itself():
    race = re.compile(r"ensure_future\([\w.]*later\.wait\(\)\)")
    racing = sorted(str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py")
                    if race.search(path.read_text(encoding="utf-8")))
    assert racing == [], "use LaterQuestions.next_input"

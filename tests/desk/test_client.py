"""The desk client core (``desk/client.py``) that every desk shares, against a real hub.

A ``DeskHub`` listens on a real socket (in this process, so the test can ask through its
seam); a ``DeskClient`` with a recording screen links to it. Each hook is heard in order
as its event is acted on: the request before it is listed, the resolution before it is
removed, the server's departure before its entries go; ``owner`` routes an ``rpc_id``.
"""

from __future__ import annotations

import asyncio
import contextlib

from dsh_cli.core.errors import UserInteractionError
from dsh_cli.desk.client import GONE, DeskClient, DeskScreen
from dsh_cli.desk.protocol import DeskAnswer, DeskCancel
from dsh_cli.interaction import AskUserQuestionRequest, UserInteraction
from dsh_cli.mcp_server.desk_hub import DeskHub
from dsh_cli.mcp_server.desks import DeskProvider

CEILING = 20.0
QUESTIONS = {"questions": [{"id": "db", "question": "Which database?",
                            "options": [{"label": "SQLite"}, {"label": "Postgres"}]}]}


class Recorder(DeskScreen):
    """A screen that notes each hook, and whether the entry was listed when it ran."""

    def __init__(self) -> None:
        self.client: DeskClient | None = None
        self.heard: list[tuple[str, str, bool]] = []
        self.changed = asyncio.Event()

    def _note(self, hook: str, rpc_id: str) -> None:
        assert self.client is not None
        listed = any(entry.rpc_id == rpc_id for entry in self.client.inbox.entries())
        self.heard.append((hook, rpc_id, listed))
        self.changed.set()

    def hello(self, link, hello):
        self.heard.append(("hello", str(hello.pid), False))
        self.changed.set()

    def requested(self, link, event):
        self._note("requested", event.rpc_id)

    def added(self, entry):
        self._note("added", entry.rpc_id)

    def resolving(self, link, event):
        self._note("resolving", event.rpc_id)

    def reason(self, link, event):
        return f"{event.outcome} (recorded)"

    def resolved(self, link, event, entry):
        self._note("resolved", event.rpc_id)

    def leaving(self, link, owned):
        for rpc_id in owned:
            self._note("leaving", rpc_id)

    def gone(self, link, entries):
        self.heard.append(("gone", ",".join(entry.rpc_id for entry in entries), False))
        self.changed.set()

    async def until(self, hook: str) -> tuple[str, str, bool]:
        async with asyncio.timeout(CEILING):
            while True:
                for heard in self.heard:
                    if heard[0] == hook:
                        return heard
                self.changed.clear()
                await self.changed.wait()


@contextlib.asynccontextmanager
async def hub_and_client():
    ui = UserInteraction()
    hub = DeskHub(ui)
    ui.register_provider(DeskProvider(hub, wait=CEILING))
    await hub.start()
    screen = Recorder()
    client = DeskClient(screen, directory=hub.path.parent)
    screen.client = client
    running = asyncio.ensure_future(client.run())
    try:
        yield ui, hub, client, screen
    finally:
        running.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await running
        await hub.close()


def test_the_client_lists_routes_and_settles_an_entry_through_its_screen_hooks():
    async def main():
        async with hub_and_client() as (ui, _hub, client, screen):
            await screen.until("hello")
            asking = asyncio.ensure_future(ui.ask(AskUserQuestionRequest.model_validate(QUESTIONS)))
            _, rpc_id, _ = await screen.until("added")
            owner = client.owner(rpc_id)
            assert owner is not None and client.owner("q_unknown") is None
            owner.send(DeskAnswer(rpc_id=rpc_id, session_id=None,
                                  answers=[{"id": "db", "selected": ["SQLite"]}]))
            answer = await asyncio.wait_for(asking, CEILING)
            await screen.until("resolved")
            return (rpc_id, answer, list(screen.heard), client.inbox.entries(),
                    client.owner(rpc_id))

    rpc_id, answer, heard, left, owner = asyncio.run(main())
    assert answer.to_json()["answers"] == [{"id": "db", "selected": ["SQLite"]}]
    assert [hook for hook in heard if hook[0] != "hello"] == [
        ("requested", rpc_id, False),  # before it is listed (the --jsonl desk writes it)
        ("added", rpc_id, True),
        ("resolving", rpc_id, True),  # before it is removed
        ("resolved", rpc_id, False),
    ]
    assert left == [] and owner is None


def test_a_server_that_goes_away_takes_its_entries_and_the_screen_hears_it_first():
    async def main():
        async with hub_and_client() as (ui, hub, client, screen):
            await screen.until("hello")
            asking = asyncio.ensure_future(ui.ask(AskUserQuestionRequest.model_validate(QUESTIONS)))
            _, rpc_id, _ = await screen.until("added")
            reasons = []
            client.inbox.subscribe(lambda change: reasons.append(change.reason))
            await hub.close()  # the server's socket closes, as when dsh mcp is killed
            gone = await screen.until("gone")
            asking.cancel()
            with contextlib.suppress(asyncio.CancelledError, UserInteractionError):
                await asking
            return rpc_id, list(screen.heard), gone, reasons, client.owner(rpc_id)

    rpc_id, heard, gone, reasons, owner = asyncio.run(main())
    assert ("leaving", rpc_id, True) in heard  # while still listed: a program hears it first
    assert gone == ("gone", rpc_id, False)
    assert reasons == [GONE] and owner is None


def test_a_replay_racing_the_live_request_is_listed_once():
    async def main():
        async with hub_and_client() as (ui, _hub, client, screen):
            await screen.until("hello")
            asking = asyncio.ensure_future(ui.ask(AskUserQuestionRequest.model_validate(QUESTIONS)))
            _, rpc_id, _ = await screen.until("added")
            client.replay()  # the server announces it again on the same link
            owner = client.owner(rpc_id)
            assert owner is not None
            owner.send(DeskCancel(rpc_id=rpc_id, session_id=None))
            with contextlib.suppress(UserInteractionError):
                await asyncio.wait_for(asking, CEILING)
            await screen.until("resolved")
            return rpc_id, list(screen.heard)

    rpc_id, heard = asyncio.run(main())
    assert [hook for hook, said, _ in heard if said == rpc_id].count("added") == 1
    assert [hook for hook, said, _ in heard if said == rpc_id].count("requested") == 1

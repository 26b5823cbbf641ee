"""Two hub processes' transactions interleaved at a chosen statement, on PostgreSQL.

PostgreSQL runs READ COMMITTED: each statement sees what others committed before it, and
a row another transaction updated stays locked until that one ends. These tests stop one
store's transaction at a statement, let a second store (a connection of its own) act
there, and check that neither a deadlock nor a read-then-write gap turns into an error.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import quote

import psycopg
import pytest

from dsh_cli.hub import Answered, HubStore, HubStoreError, TakenBy
from dsh_cli.hub.records import TOKEN_EXISTS

BATCH = {"questions": [{"id": "db", "question": "Which database?", "options": ["a", "b"]}]}


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


class _HookedTx:
    """A transaction that calls ``before(sql)`` ahead of each statement."""

    def __init__(self, tx: Any, before: Callable[[str], None]) -> None:
        self._tx, self._before = tx, before

    def run(self, sql: str, params: Any = ()) -> int:
        self._before(sql)
        return self._tx.run(sql, params)

    def rows(self, sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
        self._before(sql)
        return self._tx.rows(sql, params)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._tx, name)


def hook(store: HubStore, before: Callable[[str], None]) -> None:
    real = store.engine.transaction

    @contextlib.contextmanager
    def transaction(*, write: bool = False) -> Iterator[_HookedTx]:
        with real(write=write) as tx:
            yield _HookedTx(tx, before)

    store.engine.transaction = transaction  # type: ignore[method-assign]


def beside(url: str, work: Callable[[], Any]) -> dict[str, Any]:
    """Start ``work`` in a thread; return once it ended or waits on a lock we hold."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["result"] = work()
        except Exception as error:  # the test asserts on it
            outcome["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    outcome["thread"] = thread
    thread.start()
    give_up = time.monotonic() + 30
    with psycopg.connect(url, autocommit=True) as admin:
        while thread.is_alive() and not admin.execute(
                "SELECT count(*) FROM pg_locks WHERE NOT granted").fetchone()[0]:
            assert time.monotonic() < give_up, "the other transaction neither ended nor waited"
            time.sleep(0.005)  # polling a condition, not a fixed wait
    return outcome


@pytest.fixture
def url(postgres_url):
    """The test's store, with deadlocks detected at once rather than after a second."""
    return postgres_url.replace("options=", "options=" + quote("-c deadlock_timeout=20ms "))


def test_expiry_beside_an_answer_of_the_same_agent_is_no_deadlock(url):
    clock, late = Clock(), Clock()
    with HubStore.open(url, clock=clock) as sweeper, HubStore.open(url, clock=late) as other:
        first, second = (sweeper.ask(token="ci-bot", batch=BATCH | {"n": n}, agent="a",
                                     machine="m", cwd="/", timeout=10) for n in (1, 2))
        clock.now += 20  # both past their deadline for the sweeper; not yet for the other
        answering: list[dict[str, Any]] = []

        def before(sql: str) -> None:
            # the first entry is timed out and its agent's count row updated (locked):
            # now the other process answers the second entry
            if sql.startswith("INSERT INTO hub_audit") and not answering:
                answering.append(beside(url, lambda: other.answer(second.id, {"db": "a"},
                                                                  "alice")))

        hook(sweeper, before)
        expired = sweeper.expire()
        answering[0]["thread"].join(30)
        assert "error" not in answering[0], answering[0]["error"]
        assert isinstance(answering[0]["result"], Answered)
        assert expired == [first.id]
        assert sweeper.get(second.id).state == "answered"


def test_a_claim_beside_a_release_reads_the_holder_it_was_refused_by(url):
    with HubStore.open(url) as bob_hub, HubStore.open(url) as alice_hub:
        entry = bob_hub.ask(token="ci-bot", batch=BATCH, agent="a", machine="m", cwd="/")
        assert alice_hub.claim(entry.id, "alice", 60).human == "alice"
        releasing: list[dict[str, Any]] = []

        def before(sql: str) -> None:
            # bob's claim was refused (alice holds it); alice lets go before bob reads why
            if sql.startswith("SELECT") and not releasing:
                releasing.append(beside(url, lambda: alice_hub.release(entry.id, "alice")))

        hook(bob_hub, before)
        claimed = bob_hub.claim(entry.id, "bob", 60)
        releasing[0]["thread"].join(30)
        assert "error" not in releasing[0], releasing[0]["error"]
        assert claimed == TakenBy(entry.id, "alice", claimed.expires)
        assert alice_hub.claim(entry.id, "bob", 60).human == "bob"  # free after the release


def test_a_token_added_twice_at_once_is_token_exists_for_the_second(url):
    with HubStore.open(url) as first, HubStore.open(url) as second:
        racing: list[dict[str, Any]] = []

        def before(sql: str) -> None:
            # the first found no token of that name; the second adds one before it inserts
            if sql.startswith("INSERT INTO hub_tokens") and not racing:
                racing.append(beside(url, lambda: second.add_token("alice", "human")))

        hook(first, before)
        with pytest.raises(HubStoreError) as refused:
            first.add_token("alice", "human")
        racing[0]["thread"].join(30)
        assert "result" in racing[0], racing[0].get("error")
        assert refused.value.code == TOKEN_EXISTS, refused.value
        assert [token.name for token in first.tokens()] == ["alice"]

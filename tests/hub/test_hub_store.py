"""The hub store on both engines: first answer wins once, leases, tokens, audit, migrations."""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest

from dsh_cli.core.errors import INVALID_ARGS, TOO_MANY_PENDING
from dsh_cli.core.limits import MCP_MESSAGE_BYTES
from dsh_cli.hub import (
    NOT_PENDING,
    Answered,
    Claimed,
    Entry,
    HubStore,
    HubStoreError,
    NotPending,
    Released,
    Renewed,
    TakenBy,
)
from dsh_cli.hub.engine import decode_change, encode_change
from dsh_cli.hub.location import engine_for
from dsh_cli.hub.migrations import MIGRATIONS, migrate, schema_version
from dsh_cli.hub.postgres_engine import redact
from dsh_cli.hub.records import (
    BATCH_TOO_LARGE,
    INVALID_NAME,
    KEY_REUSED,
    TOKEN_EXISTS,
    AgentCaps,
    Change,
    Heard,
)
from dsh_cli.hub.tokens import digest

BATCH = {"questions": [{"id": "db", "question": "Which database?", "options": ["a", "b"]}]}


class Clock:
    """A clock the test moves: leases and deadlines expire without waiting."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def ask(store: HubStore, **overrides):
    fields = {"token": "ci-bot", "batch": BATCH, "agent": "claude-code", "machine": "runner-7",
              "cwd": "/srv/app"} | overrides
    return store.ask(**fields)


def actions(store: HubStore, entry_id: str) -> list[tuple[str, str]]:
    return [(row.action, row.actor) for row in store.audit(entry_id)]


def test_fifty_concurrent_answers_one_wins_the_rest_get_not_pending(hub_location):
    with HubStore.open(hub_location, replica="hub-a") as store:
        entry = ask(store)
    count = 50
    # each answerer is a connection of its own, as 50 hub processes' would be
    stores = [HubStore.open(hub_location, replica=f"hub-{index}") for index in range(count)]
    start = threading.Barrier(count)
    results: list = [None] * count

    def answer(index: int) -> None:
        start.wait(timeout=60)
        results[index] = stores[index].answer(entry.id, {"db": f"choice {index}"},
                                              f"human-{index}")

    threads = [threading.Thread(target=answer, args=(index,)) for index in range(count)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
    finally:
        for each in stores:
            each.close()
    winners = [index for index, result in enumerate(results) if isinstance(result, Answered)]
    losers = [result for result in results if isinstance(result, NotPending)]
    assert len(winners) == 1, results
    assert len(losers) == count - 1
    assert {(loser.state, loser.code) for loser in losers} == {("answered", NOT_PENDING)}
    (winner,) = winners
    with HubStore.open(hub_location) as store:
        settled = store.get(entry.id)
        assert settled is not None
        assert (settled.state, settled.answer, settled.answered_by) == (
            "answered", {"db": f"choice {winner}"}, f"human-{winner}")
        assert actions(store, entry.id) == [("ask", "ci-bot"), ("answer", f"human-{winner}")]
        assert [row.replica for row in store.audit(entry.id)] == ["hub-a", f"hub-{winner}"]


def test_a_claim_is_a_lease_seen_by_others_that_expires_and_frees(hub_location):
    clock = Clock()
    with HubStore.open(hub_location, clock=clock) as store:
        entry = ask(store)
        assert store.claim(entry.id, "alice", lease=30) == Claimed(entry.id, "alice",
                                                                    clock.now + 30)
        assert store.claim(entry.id, "bob", lease=30) == TakenBy(entry.id, "alice",
                                                                  clock.now + 30)
        seen = store.pending()[0]
        assert seen.taken_by(clock.now) == "alice"
        clock.now += 20  # alice's desk still has it open: it renews
        assert store.claim(entry.id, "alice", lease=30) == Renewed(entry.id, "alice",
                                                                    clock.now + 30)
        clock.now += 29
        assert isinstance(store.claim(entry.id, "bob", lease=30), TakenBy)
        clock.now += 1  # alice's desk went without letting go: her lease ran out
        assert store.get(entry.id).taken_by(clock.now) is None
        assert store.claim(entry.id, "bob", lease=30) == Claimed(entry.id, "bob",
                                                                  clock.now + 30)
        assert isinstance(store.release(entry.id, "alice"), TakenBy)  # not hers to let go
        assert store.release(entry.id, "bob") == Released(entry.id, "bob")
        assert store.get(entry.id).taken_by(clock.now) is None
        # a claim only says who is answering: the answer is still decided by the update
        assert store.claim(entry.id, "alice", lease=30) == Claimed(entry.id, "alice",
                                                                    clock.now + 30)
        assert isinstance(store.answer(entry.id, {"db": "a"}, "bob"), Answered)
        assert store.claim(entry.id, "alice", lease=30) == NotPending(entry.id, "answered")
        assert store.release(entry.id, "alice") == NotPending(entry.id, "answered")
        assert actions(store, entry.id) == [
            ("ask", "ci-bot"), ("claim", "alice"), ("claim", "bob"), ("release", "bob"),
            ("claim", "alice"), ("answer", "bob")]
        assert store.claim("no-such-entry", "alice", lease=30) == NotPending(
            "no-such-entry", None)


def test_a_lease_or_timeout_that_is_no_finite_number_of_seconds_is_refused(hub_location):
    """NaN was a lease no one could take over (an AssertionError on SQLite) and a deadline
    that never came; each is refused, one line, and nothing is kept."""
    with HubStore.open(hub_location) as store:
        entry = ask(store)
        for bad in (float("nan"), float("inf"), 0, -5):
            with pytest.raises(HubStoreError, match="lease must be a number") as refused:
                store.claim(entry.id, "bob", lease=bad)
            assert refused.value.code == INVALID_ARGS
            with pytest.raises(HubStoreError, match="timeout must be a number"):
                ask(store, timeout=bad)
        assert store.pending() == [entry] and actions(store, entry.id) == [("ask", "ci-bot")]
        assert store.claim(entry.id, "alice", lease=30).human == "alice"


def test_cancel_and_timeout_end_an_entry_once_and_are_audited(hub_location):
    clock = Clock()
    with HubStore.open(hub_location, replica="hub-b", clock=clock) as store:
        cancelled = ask(store)
        assert store.cancel(cancelled.id, "ci-bot").state == "cancelled"
        assert store.answer(cancelled.id, {"db": "a"}, "alice") == NotPending(
            cancelled.id, "cancelled")
        assert store.cancel(cancelled.id, "ci-bot") == NotPending(cancelled.id, "cancelled")

        swept, late = ask(store, timeout=60), ask(store, timeout=60)
        lasting = ask(store)
        clock.now += 60
        # an answer after the deadline loses, even before any sweep has run
        assert store.answer(late.id, {"db": "a"}, "alice") == NotPending(late.id, "timeout")
        assert store.expire() == [swept.id]
        assert store.expire() == []
        assert [entry.id for entry in store.pending()] == [lasting.id]
        assert actions(store, cancelled.id) == [("ask", "ci-bot"), ("cancel", "ci-bot")]
        assert actions(store, swept.id) == [("ask", "ci-bot"), ("timeout", "hub")]
        assert actions(store, late.id) == [("ask", "ci-bot"), ("timeout", "hub")]
        rows = store.audit()
        assert {row.replica for row in rows} == {"hub-b"}
        assert [row.id for row in rows] == sorted(row.id for row in rows)
        assert store.audit(after=rows[-2].id) == rows[-1:]


def test_an_entry_keeps_who_asked_and_refuses_what_is_not_an_object(hub_location):
    with HubStore.open(hub_location) as store:
        entry = ask(store, kind="permission", batch={"tool": "Bash", "arguments": {"c": "ls"}})
        stored = store.get(entry.id)
        assert stored == entry
        assert (stored.token, stored.agent, stored.machine, stored.cwd, stored.kind) == (
            "ci-bot", "claude-code", "runner-7", "/srv/app", "permission")
        with pytest.raises(HubStoreError, match="must be a JSON object"):
            ask(store, batch=["not", "an", "object"])
        with pytest.raises(HubStoreError) as large:
            ask(store, batch={"text": "x" * MCP_MESSAGE_BYTES})
        assert large.value.code == BATCH_TOO_LARGE
        assert store.pending() == [entry]
        # what JSON can carry but UTF-8 cannot (a lone surrogate) becomes U+FFFD, dsh's rule
        odd = ask(store, batch={"question": "caf\u00e9 \ud800 \U0001f600"})
        assert store.get(odd.id).batch == {"question": "caf\u00e9 \ufffd \U0001f600"}
        assert isinstance(store.answer(odd.id, {"\udfff": "\udfff"}, "alice"), Answered)
        assert store.get(odd.id).answer == {"\ufffd": "\ufffd"}
        path = ask(store, cwd="/srv/caf\udce9", agent="a" * 5000)
        assert (path.cwd, len(path.agent)) == ("/srv/caf\ufffd", 4096)
        assert store.get(path.id) == path


def test_tokens_are_kept_as_digests_and_shown_once(hub_location, tmp_path):
    with HubStore.open(hub_location) as store:
        issued = store.add_token("alice", "human", team="ops")
        agent = store.add_token("ci-bot", "agent")
        assert issued.secret.startswith("dshhub_") and len(issued.secret) > 40
        assert store.authenticate(issued.secret) == issued.token
        assert store.authenticate(agent.secret).kind == "agent"
        assert store.authenticate(issued.secret + "x") is None
        assert [token.name for token in store.tokens()] == ["alice", "ci-bot"]
        with pytest.raises(HubStoreError) as taken:
            store.add_token("alice", "human")
        assert taken.value.code == TOKEN_EXISTS
        for bad in ("", "a b", "-x", "x" * 65, "ålice"):
            with pytest.raises(HubStoreError) as refused:
                store.add_token(bad, "agent")
            assert refused.value.code == INVALID_NAME
        with pytest.raises(HubStoreError):
            store.add_token("bob", "human", team="on call")
        stored = everything_stored(store, hub_location)
        assert issued.secret not in stored and agent.secret not in stored
        assert digest(issued.secret) in stored
        assert store.remove_token("alice") is True
        assert store.authenticate(issued.secret) is None
        assert store.remove_token("alice") is False


def everything_stored(store: HubStore, location: str) -> str:
    """Every byte the store holds, as text: the files of SQLite, every row of PostgreSQL."""
    if store.engine.dialect == "sqlite":
        from pathlib import Path

        files = [Path(location + suffix) for suffix in ("", "-wal", "-shm")]
        return "".join(path.read_bytes().decode("latin-1") for path in files if path.exists())
    import psycopg

    with psycopg.connect(location) as raw:
        tables = [name for (name,) in raw.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")]
        assert "hub_tokens" in tables
        return "\n".join(str(row) for table in tables
                         for row in raw.execute(f"SELECT t::text FROM {table} t"))


def test_migrations_run_from_empty_once_and_refuse_a_newer_store(hub_location):
    with HubStore.open(hub_location) as store:
        assert schema_version(store.engine) == len(MIGRATIONS)
        entry = ask(store)
        assert migrate(store.engine) == len(MIGRATIONS)  # again: nothing to do, nothing lost
    with HubStore.open(hub_location) as store:
        assert store.get(entry.id) == entry
        with store.engine.transaction(write=True) as tx:
            tx.run("UPDATE hub_schema SET version = ?", (len(MIGRATIONS) + 1,))
    with pytest.raises(HubStoreError, match="written by a newer dsh"):
        HubStore.open(hub_location)


def test_an_ask_repeated_with_its_key_is_the_same_entry_even_when_asked_at_once(hub_location):
    with HubStore.open(hub_location, replica="hub-a") as store:
        first = ask(store, key="call-7f3a")
        assert ask(store, key="call-7f3a") == first
        assert ask(store, key="call-7f3a", token="other-bot").id != first.id  # keys are per agent
        assert ask(store).id != ask(store).id  # no key: every ask is new
        with pytest.raises(HubStoreError) as reused:
            ask(store, key="call-7f3a", batch={"questions": []})
        assert reused.value.code == KEY_REUSED
        store.answer(first.id, {"db": "a"}, "alice")
        again = ask(store, key="call-7f3a")  # the repeat finds the answer waiting
        assert (again.id, again.state, again.answer) == (first.id, "answered", {"db": "a"})
        assert actions(store, first.id) == [("ask", "ci-bot"), ("answer", "alice")]

    count = 8  # the same ask through eight hub processes at once: one entry
    stores = [HubStore.open(hub_location, replica=f"hub-{index}") for index in range(count)]
    start = threading.Barrier(count)
    asked: list = [None] * count

    def ask_at_once(index: int) -> None:
        start.wait(timeout=60)
        asked[index] = ask(stores[index], key="call-9b21")

    threads = [threading.Thread(target=ask_at_once, args=(index,)) for index in range(count)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
    finally:
        for each in stores:
            each.close()
    assert len({entry.id for entry in asked}) == 1, asked
    with HubStore.open(hub_location) as store:
        assert [row.action for row in store.audit(asked[0].id)] == ["ask"]


def test_a_store_of_an_older_schema_is_migrated_with_its_entries(hub_location):
    engine = engine_for(hub_location)
    try:
        assert migrate(engine, MIGRATIONS[:1]) == 1
        with engine.transaction(write=True) as tx:
            tx.run("INSERT INTO hub_entries (id, kind, batch, token, agent, machine, cwd, state, "
                   "created_at) VALUES ('old', 'question', '{}', 'ci-bot', 'a', 'm', '/', "
                   "'pending', 1.0)")
    finally:
        engine.close()
    with HubStore.open(hub_location) as store:
        assert schema_version(store.engine) == len(MIGRATIONS) > 1
        assert [entry.id for entry in store.pending()] == ["old"]
        assert load(store, "ci-bot") == (1, 2)  # counted from the entry it had
        assert ask(store, key="k1") == ask(store, key="k1")


def load(store: HubStore, token: str) -> tuple[int, int]:
    """The agent's counters, and what its pending entries really are: the two must agree."""
    with store.engine.transaction() as tx:
        counted = tx.rows("SELECT entries, bytes FROM hub_load WHERE token = ?", (token,))
        real = tx.rows("SELECT count(*), coalesce(sum(size), 0) FROM hub_entries "
                       "WHERE token = ? AND state = 'pending'", (token,))
    assert (tuple(counted[0]) if counted else (0, 0)) == tuple(real[0])
    return tuple(real[0])


def test_an_agent_has_at_most_its_caps_pending_and_each_ending_makes_room(hub_location):
    clock = Clock()
    size = len(json.dumps(BATCH, separators=(",", ":")).encode())
    with HubStore.open(hub_location, clock=clock, caps=AgentCaps(3, 100 * size)) as store:
        kept = [ask(store), ask(store, timeout=10), ask(store, key="k")]
        with pytest.raises(HubStoreError) as refused:
            ask(store)
        assert refused.value.code == TOO_MANY_PENDING
        assert "ci-bot has 3 entries pending" in refused.value.message
        assert ask(store, key="k") == kept[2]  # a repeat takes no room
        assert ask(store, token="other-bot").state == "pending"  # caps are per agent
        assert load(store, "ci-bot") == (3, 3 * size)

        store.answer(kept[0].id, {"db": "a"}, "alice")
        ask(store)
        store.cancel(kept[1].id, "ci-bot")
        timing_out = ask(store, timeout=10)
        clock.now += 10
        assert store.expire() == [timing_out.id]
        ask(store)
        assert load(store, "ci-bot") == (3, 3 * size)
        assert isinstance(store.answer(kept[0].id, {"db": "b"}, "bob"), NotPending)
        assert load(store, "ci-bot") == (3, 3 * size)  # a losing answer frees nothing

    with HubStore.open(hub_location, caps=AgentCaps(100, 5 * size)) as store:
        ask(store, token="byte-bot")
        ask(store, token="byte-bot", batch={"big": "x" * (3 * size)})
        with pytest.raises(HubStoreError) as heavy:
            ask(store, token="byte-bot")
        assert heavy.value.code == TOO_MANY_PENDING and "MiB" in heavy.value.message
        assert load(store, "byte-bot")[0] == 2


def test_concurrent_asks_of_one_agent_never_pass_its_cap_together(hub_location):
    count, cap = 12, 4
    stores = [HubStore.open(hub_location, replica=f"hub-{index}", caps=AgentCaps(cap, 10**9))
              for index in range(count)]
    start = threading.Barrier(count)
    results: list = [None] * count

    def ask_at_once(index: int) -> None:
        start.wait(timeout=60)
        try:
            results[index] = ask(stores[index])
        except HubStoreError as error:
            results[index] = error.code

    threads = [threading.Thread(target=ask_at_once, args=(index,)) for index in range(count)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        assert sum(isinstance(result, Entry) for result in results) == cap, results
        assert results.count(TOO_MANY_PENDING) == count - cap
        assert load(stores[0], "ci-bot")[0] == cap
    finally:
        for each in stores:
            each.close()


def test_retention_forgets_old_audit_and_settled_entries_never_pending_ones(hub_location):
    clock = Clock()
    with HubStore.open(hub_location, clock=clock) as store:
        waiting = ask(store)
        answered, cancelled = ask(store), ask(store)
        clock.now += 10
        store.answer(answered.id, {"db": "a"}, "alice")
        clock.now += 10
        store.cancel(cancelled.id, "ci-bot")
        clock.now += 100

        assert store.prune(older_than=1000) == (0, 0)  # nothing that old
        # past the answer, not the cancel: the answered entry's rows go, then the entry
        assert store.prune(older_than=105) == (1, 3)
        assert store.get(answered.id) is None
        assert actions(store, cancelled.id) == [("cancel", "ci-bot")]
        assert store.get(cancelled.id).state == "cancelled"  # it still has audit
        assert store.prune(older_than=0) == (1, 1)  # its last row, then the entry
        assert store.get(cancelled.id) is None
        assert store.prune(older_than=0) == (0, 0)
        # the pending entry, however old, and its audit stay
        assert store.pending() == [waiting] and actions(store, waiting.id) == [
            ("ask", "ci-bot")]


def test_hub_processes_starting_together_on_an_empty_store_migrate_it_once(hub_location):
    count = 6
    start = threading.Barrier(count)
    opened: list = [None] * count

    def open_store(index: int) -> None:
        start.wait(timeout=60)
        try:
            opened[index] = HubStore.open(hub_location, replica=f"hub-{index}")
        except HubStoreError as error:
            opened[index] = error

    threads = [threading.Thread(target=open_store, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    try:
        assert all(isinstance(store, HubStore) for store in opened), opened
        assert {schema_version(store.engine) for store in opened} == {len(MIGRATIONS)}
    finally:
        for store in opened:
            if isinstance(store, HubStore):
                store.close()


def test_a_listener_hears_each_change_after_its_commit(hub_location):
    with HubStore.open(hub_location, replica="hub-a") as store:
        listener = store.listen()
        try:
            entry = ask(store)
            store.claim(entry.id, "alice", lease=30)
            store.answer(entry.id, {"db": "a"}, "alice")
            heard: list[Change] = []
            while len(heard) < 3:
                more = listener.wait(timeout=10)
                assert more.changes and not more.missed, f"heard only {heard}, then {more}"
                heard += more.changes
            assert heard == [Change("ask", entry.id, "hub-a"), Change("claim", entry.id, "hub-a"),
                             Change("answer", entry.id, "hub-a")]
            # a transaction that failed is never heard
            with pytest.raises(HubStoreError):
                ask(store, batch=[])
            assert store.answer(entry.id, {"db": "b"}, "bob") == NotPending(entry.id, "answered")
            assert listener.wait(timeout=0.2) == Heard()
        finally:
            listener.close()


def test_a_sqlite_listener_that_falls_behind_is_told_it_missed_changes(tmp_path, monkeypatch):
    from dsh_cli.hub import sqlite_engine

    monkeypatch.setattr(sqlite_engine, "_HEARD", 3)  # what a listener keeps unread
    with HubStore.open(tmp_path / "hub.db", replica="hub-a") as store:
        listener = store.listen()
        entries = [ask(store) for _ in range(3)]
        assert listener.wait(timeout=10) == Heard(
            tuple(Change("ask", entry.id, "hub-a") for entry in entries))
        entries = [ask(store) for _ in range(5)]  # two more than it keeps
        assert listener.wait(timeout=10) == Heard(
            tuple(Change("ask", entry.id, "hub-a") for entry in entries[2:]), missed=True)
        assert listener.wait(timeout=0.1) == Heard()
        listener.close()


def test_a_change_travels_as_a_small_payload_and_junk_is_ignored():
    change = Change("answer", "e1", "hub-a")
    assert decode_change(encode_change(change)) == change
    for junk in ("", "[]", "{", '{"event": "drop", "id": "e1", "replica": "r"}',
                 '{"event": "ask", "id": 1, "replica": "r"}'):
        assert decode_change(junk) is None


def test_a_postgres_url_is_shown_without_its_password():
    assert redact("postgresql://hub:s3cret@db.internal:5433/dsh") == (
        "postgresql://hub:***@db.internal:5433/dsh")
    assert redact("postgresql:///dsh?host=/run/pg") == "postgresql:///dsh?host=/run/pg"


def test_a_server_that_never_answers_is_one_store_error_after_the_connect_timeout(monkeypatch):
    from dsh_cli.hub import postgres_engine

    monkeypatch.setattr(postgres_engine, "CONNECT_SECONDS", 1)
    with socket.create_server(("127.0.0.1", 0)) as silent:  # accepts, never says a word
        port = silent.getsockname()[1]
        started = time.monotonic()
        with pytest.raises(HubStoreError) as failed:
            HubStore.open(f"postgresql://hub:s3cret@127.0.0.1:{port}/dsh")
        assert time.monotonic() - started < 20
    assert "timeout" in failed.value.message and "s3cret" not in failed.value.message


def test_a_store_location_is_a_path_a_sqlite_url_or_a_postgres_url(tmp_path, monkeypatch):
    from dsh_cli.hub.location import default_path, is_postgres

    monkeypatch.setenv("DSH_HOME", str(tmp_path / "home"))
    assert default_path() == tmp_path / "home" / "hub.db"
    for location, path in [(None, default_path()), (str(tmp_path / "a.db"), tmp_path / "a.db"),
                           (f"sqlite:{tmp_path}/b.db", tmp_path / "b.db"),
                           (f"sqlite://{tmp_path}/c.db", tmp_path / "c.db")]:
        engine = engine_for(location)
        try:
            assert (engine.dialect, engine.where) == ("sqlite", str(path))
        finally:
            engine.close()
    assert is_postgres("postgresql://h/db") and is_postgres("postgres://h/db")
    assert not is_postgres("postgresql.db")
    (tmp_path / "dir.db").mkdir()
    with pytest.raises(HubStoreError, match="a directory"):
        engine_for(str(tmp_path / "dir.db"))
    (tmp_path / "link.db").symlink_to(tmp_path / "elsewhere.db")
    with pytest.raises(HubStoreError, match="symbolic link"):
        engine_for(str(tmp_path / "link.db"))
    assert not (tmp_path / "elsewhere.db").exists()

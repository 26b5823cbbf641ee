"""PostgreSQL restarted under a hub process: its store reconnects, its listener catches up."""

from __future__ import annotations

from dsh_cli.hub import Answered, HubStore
from dsh_cli.hub.records import Change, Heard


def test_after_a_postgres_restart_calls_go_on_and_the_listener_says_what_it_missed(
        postgres_cluster, postgres_url):
    with HubStore.open(postgres_url, replica="hub-a") as store:
        listener = store.listen()
        try:
            entry = store.ask(token="ci-bot", batch={"questions": []}, agent="codex",
                              machine="laptop", cwd="/src")
            assert listener.wait(timeout=10) == Heard((Change("ask", entry.id, "hub-a"),))

            postgres_cluster.restart()  # every connection of the hub is gone

            # the next call begins on a new connection, unnoticed: nothing had been sent
            assert [pending.id for pending in store.pending()] == [entry.id]
            # the listener says it may have missed changes (re-read the store), and is
            # listening again by then: what commits next is heard
            assert listener.wait(timeout=10) == Heard(missed=True)
            assert isinstance(store.answer(entry.id, {"answers": {}}, "alice"), Answered)
            assert listener.wait(timeout=10) == Heard((Change("answer", entry.id, "hub-a"),))
        finally:
            listener.close()

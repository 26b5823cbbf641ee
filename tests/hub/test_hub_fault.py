"""Kill -9 of one of two `dsh hub serve` processes on one PostgreSQL store (issue 47's
first fault): the entry its waiting call held is withdrawn by the other process, and the
agent's async question is fetched by its ticket at the other process, answered once."""

from __future__ import annotations

from hub.test_hub_serve import BATCH

from dsh_cli.hub import HubStore


def test_the_sweep_withdraws_only_the_waited_entries_of_a_silent_process(tmp_path):
    """On the store's clock: a process silent past the bound loses the entries its calls
    waited on (cancel, by hub); its async entries, and a live process's, stay pending."""
    location = str(tmp_path / "hub.db")
    now = [1000.0]
    with HubStore.open(location, replica="dead", clock=lambda: now[0]) as dead, \
            HubStore.open(location, replica="live", clock=lambda: now[0]) as live:
        dead.beat()
        live.beat()
        ask = {"token": "ci-bot", "batch": BATCH, "agent": "a", "machine": "m", "cwd": "/"}
        orphan = dead.ask(**ask, waited=True)
        fetched_later = dead.ask(**ask, key="q_1")
        kept = live.ask(**ask, waited=True)
        now[0] += 5
        live.beat()
        assert live.withdraw_orphans(10) == []  # within the bound: nothing
        now[0] += 6
        live.beat()
        assert live.withdraw_orphans(10) == [orphan.id]
        assert live.withdraw_orphans(10) == []  # once
        states = {e.id: e.state for e in (live.get(i) for i in
                                          (orphan.id, fetched_later.id, kept.id)) if e}
        [cancel] = [row for row in live.audit(orphan.id) if row.action == "cancel"]
    assert states == {orphan.id: "cancelled", fetched_later.id: "pending", kept.id: "pending"}
    assert (cancel.actor, cancel.replica) == ("hub", "live")

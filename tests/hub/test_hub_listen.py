"""Across processes on PostgreSQL: a hub process waiting on LISTEN is woken by another's ask."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from dsh_cli.hub import HubStore

LISTENER = textwrap.dedent("""
    import sys
    from dsh_cli.hub import HubStore

    url, wanted = sys.argv[1], int(sys.argv[2])
    with HubStore.open(url, replica="hub-b") as store:
        listener = store.listen()
        print("listening", flush=True)
        heard = []
        while len(heard) < wanted:
            more = listener.wait(timeout=60)
            if not more.changes or more.missed:
                sys.exit(f"heard {more} in 60 seconds")
            heard += more.changes
        for change in heard:
            print(change.event, change.entry_id, change.replica, flush=True)
        listener.close()
""")


def test_a_second_process_waiting_on_listen_is_woken_by_each_change(postgres_url):
    child = subprocess.Popen([sys.executable, "-c", LISTENER, postgres_url, "3"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        ready = child.stdout.readline()
        assert ready == "listening\n", ready + child.stderr.read()
        with HubStore.open(postgres_url, replica="hub-a") as store:
            entry = store.ask(token="ci-bot", batch={"questions": []}, agent="codex",
                              machine="laptop", cwd="/src")
            store.claim(entry.id, "alice", lease=30)
            store.answer(entry.id, {"answers": {}}, "alice")
        out, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    assert child.returncode == 0, err
    assert out.splitlines() == [f"ask {entry.id} hub-a", f"claim {entry.id} hub-a",
                                f"answer {entry.id} hub-a"]

"""Hub processes on hosts whose clocks disagree share one clock: PostgreSQL's."""

from __future__ import annotations

import subprocess
import sys

from dsh_cli.hub import HubStore, TakenBy

# a hub process on a host whose clock is two minutes behind takes a 30 s lease
BEHIND = """
import sys, time
real = time.time
time.time = lambda: real() - 120
from dsh_cli.hub import HubStore
with HubStore.open(sys.argv[1], replica="hub-behind") as store:
    print(type(store.claim(sys.argv[2], "alice", 30)).__name__, flush=True)
"""


def test_a_lease_taken_on_a_host_whose_clock_is_behind_still_runs_for_the_others(
        postgres_url):
    with HubStore.open(postgres_url, replica="hub-a") as store:
        entry = store.ask(token="ci-bot", batch={"questions": []}, agent="codex",
                          machine="laptop", cwd="/src")
        claimed = subprocess.run([sys.executable, "-c", BEHIND, postgres_url, entry.id],
                                 capture_output=True, text=True, timeout=60)
        assert claimed.stdout == "Claimed\n", claimed.stderr
        # alice's desk holds it for 30 s, by the clock every hub process reads
        taken = store.claim(entry.id, "bob", 30)
        assert isinstance(taken, TakenBy) and taken.human == "alice", taken

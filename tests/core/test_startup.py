"""Start-up runs without cyclic collection until the event loop first waits."""

from __future__ import annotations

import asyncio
import gc

import pytest

from dsh_cli.core import startup


@pytest.fixture(autouse=True)
def collection_restored():
    yield
    startup.release_collection()
    gc.unfreeze()
    gc.enable()


def test_hold_pauses_and_release_freezes_and_resumes():
    startup.hold_collection()
    assert not gc.isenabled()
    built = [[] for _ in range(10)]  # made during start-up: frozen on release
    startup.release_collection()
    assert gc.isenabled()
    assert gc.get_freeze_count() >= len(built)
    startup.release_collection()  # a second release changes nothing
    assert gc.isenabled()


def test_a_collection_paused_by_someone_else_stays_paused():
    gc.disable()
    startup.hold_collection()
    startup.release_collection()
    assert not gc.isenabled()


def test_the_loop_releases_when_it_first_waits_not_before():
    startup.hold_collection()
    seen: list[bool] = []

    async def main() -> None:
        await asyncio.sleep(0)  # a turn of the loop that does not wait
        seen.append(gc.isenabled())
        await asyncio.sleep(0.01)  # the loop blocks in select: start-up is over
        seen.append(gc.isenabled())

    with asyncio.Runner(loop_factory=startup.startup_loop) as runner:
        runner.run(main())
    asyncio.set_event_loop(None)
    assert seen == [False, True]


def test_an_in_process_invocation_leaves_the_hosts_collector_alone():
    """Click's test runner (like any embedding program) calls ``main``: nothing is paused
    or frozen; only the ``dsh`` process entry holds collection."""
    from click.testing import CliRunner

    from dsh_cli.cli import main

    frozen = gc.get_freeze_count()
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0, result.output
    assert gc.isenabled() and gc.get_freeze_count() == frozen

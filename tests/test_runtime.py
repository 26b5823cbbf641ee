"""``Runtime``: one session id, held by the seam; a new session resets the loop through it."""

from __future__ import annotations

import re

import pytest

from dsh_cli.config import load_settings
from dsh_cli.core.events import UserMessage
from dsh_cli.runtime import build_runtime

SESSION_ID = re.compile(r"s_[0-9a-f]{12}")


def ids(runtime):
    return runtime.session_id, runtime.loop.session_id, runtime.ui.session_id


@pytest.mark.parametrize("persist", [False, True])
def test_new_session_moves_every_reader_of_the_id_together(persist):
    runtime = build_runtime(load_settings(model="demo", environ={}, config={}),
                            system="Be brief.", persist=persist)
    try:
        first = ids(runtime)
        assert len(set(first)) == 1 and SESSION_ID.fullmatch(first[0])
        returned = runtime.new_session()
        second = ids(runtime)
        assert second == (returned,) * 3 and returned != first[0]
        assert SESSION_ID.fullmatch(returned)
        assert runtime.loop.messages == [{"role": "system", "content": "Be brief."}]
        assert not runtime.resumed
        if persist:
            stored = runtime.store.load_session(returned)
            assert stored.messages == [{"role": "system", "content": "Be brief."}]
    finally:
        runtime.close()


def test_a_resumed_session_keeps_its_id_everywhere():
    settings = load_settings(model="demo", environ={}, config={})
    first = build_runtime(settings)
    session_id = first.session_id
    first.events.emit(UserMessage("hello"))  # an empty session is not kept (issue 17)
    first.close()
    resumed = build_runtime(settings, resume=session_id)
    try:
        assert ids(resumed) == (session_id,) * 3 and resumed.resumed
    finally:
        resumed.close()

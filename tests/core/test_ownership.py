"""The one ownership rule (``core/ownership.py``) and every table that settles through it."""

from __future__ import annotations

import asyncio

import pytest

from dsh_cli.core.events import ResponseAck
from dsh_cli.core.ownership import WRONG_SESSION, refusal
from dsh_cli.interaction import AskUserQuestionRequest, PendingQuestions
from dsh_cli.permissions import PermissionRequest
from dsh_cli.permissions.pending import RemotePermissions

FORM = {"questions": [{"id": "env", "question": "Which environment?"}],
        "source": {"name": "deploy"}, "declinable": True}


@pytest.mark.parametrize(("owner", "named", "message"), [
    ("s_a", "s_b", 'q_1 belongs to session s_a, not "s_b"'),
    ("s_a", None, "q_1 belongs to session s_a; the frame names no session_id"),
    (None, "s_b", 'q_1 belongs to no session, not "s_b"'),
])
def test_a_frame_for_another_session_is_one_line_naming_both(owner, named, message):
    assert refusal("q_1", owner, named) == ResponseAck("q_1", False, WRONG_SESSION, message)


@pytest.mark.parametrize("owner", ["s_a", None])
def test_the_entrys_own_session_passes(owner):
    assert refusal("q_1", owner, owner) is None


def test_a_hostile_session_id_is_echoed_escaped_and_cut_short():
    message = refusal("q_1", "s_a", "\x1b]0;pwned\x07\u202e" + "x" * 500).message
    assert message.isascii() and message.isprintable()
    assert "\\u001b]0;pwned\\u0007\\u202e" in message and len(message) < 140


def _form() -> AskUserQuestionRequest:
    return AskUserQuestionRequest.model_validate(FORM)


def test_decline_checks_the_entrys_session_not_the_tables():
    async def main():
        sessionless = PendingQuestions()
        entry = sessionless.register(_form())
        named = sessionless.decline(entry.rpc_id, "s_other")  # was accepted: no table session
        moved = PendingQuestions("s1")
        first = moved.register(_form())
        moved.session_id = "s2"  # the table's session moved on; the entry is still s1's
        own = moved.decline(first.rpc_id, "s1")
        return named, own, len(sessionless), first.outcome.exception()

    named, own, still_pending, declined = asyncio.run(main())
    assert (named.accepted, named.reason, still_pending) == (False, WRONG_SESSION, 1)
    assert own.accepted and declined.code == "ASK_DECLINED"


def test_a_permission_request_is_settled_only_by_its_own_sessions_frames():
    async def main():
        table = RemotePermissions()
        request = PermissionRequest(tool="mcp__a__b", arguments={}, session_id="s1")
        waiting = asyncio.ensure_future(table.decide(request, "p_1"))
        await asyncio.sleep(0)
        refused = [table.respond("p_1", "allow_always", None, "s2"),
                   table.cancel("p_1", None), table.cancel("p_1", "s2")]
        pending = "p_1" in table
        ack = table.respond("p_1", "deny", "no", "s1")
        return refused, pending, ack, await waiting

    refused, pending, ack, decided = asyncio.run(main())
    assert [a.reason for a in refused] == [WRONG_SESSION] * 3 and pending
    assert ack.accepted and decided.decision == "deny"

"""The frame of every verb that settles something, as a controller sends it to any front
door, and what the one ownership rule (``core/ownership.py``) answers one that names
another session or none: shared by the relay, desk and web tests."""

from __future__ import annotations

import json
from typing import Any

# the settling frame of each verb, less rpc_id and session_id
VERBS: dict[str, dict[str, Any]] = {
    "answer": {"type": "question/answer"},  # answers: the test's own
    "cancel": {"type": "question/cancel"},
    "decline": {"type": "question/decline"},
    "discuss": {"type": "question/discuss"},
    "decision": {"type": "permission/decision", "decision": "allow_always"},
    "permission cancel": {"type": "question/cancel"},
}
# what a frame may say of its session instead of the entry's own: another id, null, nothing
FOREIGN: list[dict[str, Any]] = [{"session_id": "s_other"}, {"session_id": None}, {}]


def settling(verb: str, requested: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """The frame of ``verb`` for the announced ``requested``, naming its own session."""
    return {**VERBS[verb], "rpc_id": requested["rpc_id"],
            "session_id": requested["session_id"], **fields}


def foreign(verb: str, requested: dict[str, Any], **fields: Any) -> list[dict[str, Any]]:
    """The same frame naming another session, null, and no session_id: those not its own."""
    own = settling(verb, requested, **fields)
    del own["session_id"]
    return [{**own, **variant} for variant in FOREIGN
            if variant.get("session_id") != requested["session_id"]]


def refusals(requested: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``response/ack`` each of ``foreign``'s frames gets, in order: one line each."""
    rpc_id, session_id = requested["rpc_id"], requested["session_id"]
    owner = f"session {session_id}" if session_id is not None else "no session"
    said = [f", not {json.dumps('s_other')}", "; the frame names no session_id",
            "; the frame names no session_id"]
    if session_id is None:  # null and absent are that entry's own
        said = said[:1]
    return [{"type": "response/ack", "rpc_id": rpc_id, "accepted": False,
             "reason": "wrong-session", "message": f"{rpc_id} belongs to {owner}{end}"}
            for end in said]

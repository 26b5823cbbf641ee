"""Who may settle a pending batch or permission request: one rule for every verb.

Each pending entry belongs to the session it was asked in, or to none (``dsh ask`` has no
session). Every frame that settles an entry (``question/answer``, ``question/cancel``,
``question/decline``, ``question/discuss``, ``permission/decision``), whichever front door
it came through (the relay, a desk, the web), names that session in ``session_id``; an
absent ``session_id`` means null. A frame naming another session, or none for an entry
asked in one, is refused ``wrong-session`` with one line saying whose entry it is, and
settles nothing: the entry stays pending for a frame that names its session. There is no
"the only session" fallback: the controller has the session in the very event it answers.
"""

from __future__ import annotations

from dsh_cli.core.events import WRONG_SESSION, ResponseAck

__all__ = ["WRONG_SESSION", "refusal"]

_SHOWN = 80  # characters of a controller's session_id echoed back; it is not ours to print


def refusal(rpc_id: str, owner: str | None, named: str | None) -> ResponseAck | None:
    """None when ``named`` (the frame's ``session_id``) is ``owner``; else the refusal."""
    if named == owner:
        return None
    import json  # only on a refusal: dsh ask's terminal path imports no json before asking

    whose = f"session {owner}" if owner is not None else "no session"
    # the controller's text JSON-escaped and cut short: no control character reaches a
    # terminal that shows the refusal (dsh attach does)
    said = "; the frame names no session_id" if named is None \
        else f", not {json.dumps(named)[:_SHOWN]}"
    return ResponseAck(rpc_id, False, WRONG_SESSION, f"{rpc_id} belongs to {whose}{said}")

"""The base layer: what every other layer may use, and which imports nothing of dsh above it.

``errors`` (the whole error tree, every code, the one stderr line), ``events`` (the one event
stream), ``signal`` (abort signals), ``tasks`` (closing a task without losing a stop),
``sanitize`` (display safety; ``one_line``, a peer's text as one safe line),
``terminal_alert`` (the bell and OSC notifications), ``json_lines`` (one value as one JSON
line), ``decisions`` (the permission decisions and their words), ``recommended`` (the
``(Recommended)`` label convention),
``shapes`` (pydantic shape errors in dsh's words), ``ids`` (fresh request and session ids),
``files`` (files only their owner may read) and ``defaults`` (the default model, endpoint and
key variables). Import the module you need directly; this package re-exports nothing, so
importing one costs only that one. ``conversation``
reads a conversation's messages as those events (replay, the web feed, ``sessions show``);
``text`` replaces lone surrogates where text enters dsh.
"""

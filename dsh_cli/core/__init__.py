"""The base layer: what every other layer may use, and which imports nothing of dsh above it.

    errors.py        the whole error tree, every code, and the one stderr line
    events.py        the one event stream every surface subscribes to
    outcomes.py      how a question batch ended: one closed set, every code and word of it
    signal.py        abort signals: how an owner tells work to give up
    tasks.py         closing a task without losing a stop
    startup.py       start-up without cyclic garbage collection, until the loop first waits
    ownership.py     the one ownership rule: who may settle a pending batch or request
    limits.py        every cap on what dsh keeps of a peer's words
    sanitize.py      display safety: model-written text never drives the terminal; one_line
    terminal_alert.py  the bell and OSC notifications, encoded once
    json_lines.py    one value as one JSON line
    decisions.py     the permission decisions and their words
    text.py          one rule for lone surrogates, where text enters dsh
    lines.py         how a ``dsh:`` line is written: its prefix, added once
    streams.py       the standard streams: whether one is a terminal, a reader gone away
    shapes.py        pydantic shape errors in dsh's words
    recommended.py   the ``(Recommended)`` label convention
    conversation.py  a conversation's messages read once: as events, tool calls, what is pending
    clock.py         timestamps: stored as UTC ISO 8601, shown in local time
    tuning.py        durations an environment variable may change (the tests shorten them)
    ids.py           fresh request and session ids
    home.py          where dsh keeps its files: the one reader of ``DSH_HOME``
    hub_address.py   where a hub is and whose token reaches it: every `--hub` reads them here
    http_body.py     a request body read with a cap, the declared length checked first
    files.py         files only their owner may read
    sqlite_wal.py    SQLite's write-ahead log switched on, waiting for a lock like a write
    json_file.py     private JSON files, read refusing what is not ours, changed under a lock
    remembered.py    decisions remembered per name and digest
    defaults.py      the default model, its endpoint and the key variables
    vendors.py       which API key may go to which endpoint
    urls.py          every URL dsh sends a request to, parsed once

Import the module you need directly; this package re-exports nothing, so importing one
costs only that one.
"""

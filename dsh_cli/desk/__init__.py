"""The attach desk: where a human answers the questions of every ``dsh mcp`` (``dsh attach``).

    channel.py   the runtime directory, the server sockets, the peer check
    protocol.py  every frame of the desk channel both ways, its one parser and encoder
    link.py      one desk-side connection to one server (its events in, frames out)
    hub_link.py  the same link to a dsh hub over HTTP (``dsh attach --hub``), kept up
    client.py    the desk client every desk shares: links, inbox, routing, holds, gone
    inbox.py     the inbox: every pending entry of every server, no UI (who, what, age, kind)
    summary.py   a batch in one line (header and first question), for rows and notifications
    desk.py      the human's desk (a screen on the client): an entry opened at a time
    inbox_terminal.py  the inbox as a live prompt-toolkit list, and the title count
    line_window.py     the list's prompt-toolkit window: each line drawn as one cell
    inbox_plain.py     the inbox as plain lines (its line protocol)
    jsonl.py     the same desk for a program, speaking relay.md on stdin/stdout
    notify.py    the notifications: which escape the terminal shows, notify_command
    web/         the same inbox in a browser (``dsh attach --web``)
"""

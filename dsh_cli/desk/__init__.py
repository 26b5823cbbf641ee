"""The attach desk: where a human answers the questions of every ``dsh mcp`` (``dsh attach``).

    channel.py   the runtime directory, the server sockets, the peer check
    link.py      one desk-side connection to one server (its events in, frames out)
    desk.py      the human's desk: batches one at a time in the terminal or plain lines
    jsonl.py     the same desk for a program, speaking relay.md on stdin/stdout
    notify.py    the notifications: which escape the terminal shows, notify_command
"""

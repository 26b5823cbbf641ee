"""Answer sources: who answers a front door's questions, chosen in one table.

    table.py         the rows (jsonl, web, answers, plain, terminal, none), each door's order,
                     choose / prepare / answer_source
    options.py       AnswerOptions (what a door asks for), Door, Source (what it gets)
    openers.py       one opener per row: start its provider, yield it, close it
    surroundings.py  TERM=dumb, /dev/tty, a display for the browser

Importing this package imports no provider: each row loads its own when it is chosen.
"""

from dsh_cli.sources.options import AnswerOptions, Door, Source
from dsh_cli.sources.table import (
    ACP,
    ASK,
    CHAT,
    DOORS,
    MCP,
    ROWS,
    RUN,
    WEB,
    Prepared,
    Row,
    answer_source,
    choose,
    draws_on_terminal,
    prepare,
)

__all__ = [
    "ACP",
    "ASK",
    "CHAT",
    "DOORS",
    "MCP",
    "ROWS",
    "RUN",
    "WEB",
    "AnswerOptions",
    "Door",
    "Prepared",
    "Row",
    "Source",
    "answer_source",
    "choose",
    "draws_on_terminal",
    "prepare",
]

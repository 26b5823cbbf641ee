"""Which human sees which entry: the one question every hub route asks before it shows one.

This is the placeholder the desk endpoint is written against: every entry is visible to
every human token. Routing (``[[hub.routes]]``, an entry's team, a human's teams) replaces
it with the real rule under the same name and signature.
"""

from __future__ import annotations

from dsh_cli.hub.records import Entry, Token

__all__ = ["visible"]


def visible(entry: Entry, human: Token) -> bool:
    """Whether ``human`` may see (and so answer or claim) ``entry``: every human, for now."""
    return human.kind == "human"

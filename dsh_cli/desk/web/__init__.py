"""``dsh attach --web``: the inbox of every ``dsh mcp`` of the user, in a browser.

    desk.py   WebDesk: the inbox served to a browser, answered through each server
    app.py    its routes: the page of ``dsh web`` in ``desk`` mode, its feed, ``/api/respond``
    feed.py   the inbox as the page sees it, fanned out to every browser

``WebDesk`` follows every server (``desk/link.py``), keeps their pending batches and
permission requests in the one inbox model (``desk/inbox.py``) and serves the page of
``dsh web`` in its ``desk`` mode: the list, and one entry opened with the same question
and permission modules. Importing this package imports nothing heavy.
"""

from dsh_cli.desk.web.desk import WebDesk

__all__ = ["WebDesk"]

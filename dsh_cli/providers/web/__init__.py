"""The browser surface: a small ASGI app serving the question composer and chat.

    host.py         WebHost: the provider, its app served inside dsh's own event loop
    server.py       WebServer: one loopback web app served by uvicorn in that loop
    app.py          the routes of ``spec/web.md`` behind the token, Host, Origin and CSRF checks
    connections.py  the connections every web server of dsh takes: bounded in time and number
    feed.py         the event feed: every event fanned out to each connected browser
    shown.py        what the page shows of each event, decided here so the page only renders

The page itself is ``static/``: ``index.html`` and its ES modules (``static/js/``), which
import one way (a test reads their imports).

``WebHost`` embeds the server in dsh's own event loop; its ``provider`` answers asks by
waiting for a browser to settle them through the shared pending table (``spec/web.md``).
Importing this package imports nothing heavy: starlette and uvicorn load in ``start()``.
"""

from dsh_cli.providers.web.host import WebError, WebHost

__all__ = ["WebError", "WebHost"]

"""The browser surface: a small ASGI app serving the question composer and chat.

``WebHost`` embeds the server in dsh's own event loop; its ``provider`` answers asks by
waiting for a browser to settle them through the shared pending table (``spec/web.md``).
Importing this package imports nothing heavy: starlette and uvicorn load in ``start()``.
"""

from dsh_cli.providers.web.host import WebError, WebHost

__all__ = ["WebError", "WebHost"]

"""URL-mode elicitation: the human's consent to open a server's page, and the opening.

dsh never fetches the URL. The consent question shows the server, its message and the full
URL with its host on a line of its own (a punycode ``xn--`` host is flagged with the name it
decodes to, since look-alike hosts are how phishing pages pass a glance). Characters a
terminal would not show are percent-encoded first, so the URL read is the URL opened. Open
launches the system browser when the caller says there is a display, or prints the URL.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from dsh_cli.tools.mcp.elicitation import SchemaRefused

__all__ = ["DECLINE", "OPEN", "consent_question", "open_page", "url_host", "visible_url"]

OPEN, DECLINE = "Open", "Decline"


def visible_url(url: str) -> str:
    """``url`` with every character a terminal would not show (controls, bidi marks,
    zero-width and other format characters, spaces) percent-encoded: the URL the human
    reads is then exactly the one the browser is given."""
    import unicodedata
    from urllib.parse import quote

    return "".join(quote(char, safe="", errors="surrogatepass") if char.isspace()
                   or unicodedata.category(char) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp")
                   else char for char in url)


def url_host(url: str) -> tuple[str, str | None]:
    """The URL's host, and what a punycode host decodes to (None for a plain host)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise SchemaRefused("url", "only http and https URLs with a host can be opened")
    host = parts.hostname
    if "%" in host:  # a hidden character in the host: a browser may open another one
        raise SchemaRefused("url", "the host holds characters a terminal does not show")
    if not any(label.startswith("xn--") for label in host.split(".")):
        return host, None
    try:
        decoded = host.encode("ascii").decode("idna")
    except UnicodeError:
        decoded = "(does not decode)"
    return host, decoded


def consent_question(ident: str, url: str, message: str | None) -> dict[str, Any]:
    """The Open / Decline question (JSON of the seam's vocabulary) for one URL."""
    host, decoded = url_host(url)
    lines = [message.strip()] if message and message.strip() else []
    lines += [f"URL:  {url}", f"host: >>> {host} <<<"]
    if decoded is not None:
        lines.append(f"warning: the host is punycode; it reads as {decoded!r}. "
                     "Check that it is the site you expect.")
    lines.append("dsh does not fetch this page; Open launches your browser on it.")
    question: dict[str, Any] = {
        "id": ident,
        "question": f"Open {host} in your browser?",
        "detail": "\n".join(lines),
        "options": [{"label": OPEN, "description": "open the page in the system browser"},
                    {"label": DECLINE, "description": "tell the server no"}],
        "other": False,
        "required": True,
    }
    if decoded is not None:
        question["warning"] = f"punycode host {host} (reads as {decoded})"
    return question


def open_page(url: str, *, launch: bool = False,
              say: Callable[[str], object] | None = None) -> bool:
    """Launch the browser on ``url`` when ``launch``; else print it. True if launched.

    Whether there is a display to launch on is the caller's decision (the CLI asks
    ``sources.surroundings.browser_available``); tools never read the surroundings.
    """
    if launch:
        import webbrowser

        try:
            if webbrowser.open(url):
                return True
        except webbrowser.Error:
            pass
    (say or _to_stderr)(f"open this URL in a browser: {url}")
    return False


def _to_stderr(line: str) -> None:
    print(f"dsh: {line}", file=sys.stderr, flush=True)

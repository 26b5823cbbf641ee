"""URL-mode elicitation: the human's consent to open a server's page, and the opening.

dsh never fetches the URL. It is parsed once, the way browsers parse it (the WHATWG URL
standard, through ``ada-url``), and the URL that parser writes back is the one shown and
the one opened: a backslash, a tab or a zero-width character cannot make the browser go
somewhere the human did not read. The consent question shows the server, its message,
that URL and the host the browser will contact on a line of its own. A host that is not
plain ASCII is flagged with what it reads as, the scripts it mixes and the letters that
only look Latin (Unicode's confusables table, through ``confusable-homoglyphs``), since
look-alike hosts are how phishing pages pass a glance; so is a user name before an ``@``.
Both libraries are imported only when a URL consent is built.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dsh_cli.core.limits import URL_CHARACTERS as MAX_URL
from dsh_cli.core.lines import notice
from dsh_cli.core.sanitize import one_line
from dsh_cli.core.text import scrub_surrogates
from dsh_cli.mcp_client.forms.elicitation import SchemaRefused

__all__ = ["DECLINE", "MAX_URL", "OPEN", "Page", "consent_question", "open_page", "parse_page"]

OPEN, DECLINE = "Open", "Decline"


@dataclass(frozen=True)
class Page:
    """A server's URL as a browser reads it: ``href`` is what is shown and what is opened."""

    href: str
    host: str  # the host the browser contacts (ASCII: punycode for a Unicode name)
    reads_as: str | None  # a punycode host in Unicode; None for a plain host
    warnings: tuple[str, ...]  # each a sentence; empty for an ordinary URL


def parse_page(url: str) -> Page:
    """``url`` parsed as browsers parse it, or ``SchemaRefused`` saying why it cannot open."""
    import ada_url

    if len(url) > MAX_URL:
        raise SchemaRefused("url", f"a URL is at most {MAX_URL} characters ({len(url)})")
    try:
        parsed = ada_url.URL(scrub_surrogates(url))
    except ValueError:
        raise SchemaRefused("url", "not a URL a browser can open") from None
    if parsed.protocol not in ("http:", "https:") or not parsed.hostname:
        raise SchemaRefused("url", "only http and https URLs with a host can be opened")
    href, host = parsed.href, parsed.hostname
    if not (href.isascii() and href.isprintable()):  # the standard's output never is
        raise SchemaRefused("url", "the URL holds characters a terminal does not show")
    reads_as = None
    if any(label.startswith("xn--") for label in host.split(".")):
        reads_as = ada_url.idna_to_unicode(host)
    warnings = list(_host_warnings(host, reads_as))
    if parsed.username or parsed.password:
        warnings.append(f"the text before '@' ({parsed.username!r}) is a user name, "
                        f"not the site: the site is {host}")
    if "\\" in url:
        warnings.append(f"the server wrote '\\', which a browser reads as '/': "
                        f"the site is {host}")
    return Page(href, host, reads_as, tuple(warnings))


def _host_warnings(host: str, reads_as: str | None) -> list[str]:
    """What makes a Unicode host look like another: its scripts and its look-alike letters."""
    if reads_as is None:
        return []
    from confusable_homoglyphs import categories, confusables

    warnings = [f"the host is punycode; it reads as {reads_as!r}"]
    looks: dict[str, None] = {}  # ordered and without repeats, across labels
    for label in reads_as.split("."):
        if label.isascii():
            continue
        if confusables.is_mixed_script(label):
            scripts = sorted(alias.title() for alias in categories.unique_aliases(label)
                             if alias != "COMMON")
            warnings.append(f"{label!r} mixes scripts ({', '.join(scripts)})")
        found = confusables.is_confusable(label, greedy=True, preferred_aliases=["latin"])
        looks.update(dict.fromkeys(
            f"{item['character']!r} ({item['alias'].title()}) looks like Latin {glyph['c']!r}"
            for item in found or [] if not item["character"].isascii()
            for glyph in item["homoglyphs"][:1] if glyph["c"].isascii()))
    if looks:
        warnings.append(", ".join(looks))
    return warnings


def consent_question(ident: str, page: Page, message: str | None) -> dict[str, Any]:
    """The Open / Decline question (JSON of the seam's vocabulary) for one page."""
    lines = [message.strip()] if message and message.strip() else []
    lines += [f"URL:  {page.href}", f"host: >>> {page.host} <<<"]
    lines += [f"warning: {warning}." for warning in page.warnings]
    if page.warnings:
        lines.append("Check that it is the site you expect.")
    lines.append("dsh does not fetch this page; Open launches your browser on it.")
    question: dict[str, Any] = {
        "id": ident,
        "question": f"Open {page.host} in your browser?",
        "detail": "\n".join(lines),
        "options": [{"label": OPEN, "description": "open the page in the system browser"},
                    {"label": DECLINE, "description": "tell the server no"}],
        "other": False,
        "required": True,
    }
    if page.warnings:
        question["warning"] = one_line(f"{page.host}: " + "; ".join(page.warnings), 1000)
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
    print(notice(line), file=sys.stderr, flush=True)

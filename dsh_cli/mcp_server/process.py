"""``dsh mcp``'s process: its answer source, desk hub, permission gate, store and server.

``serve`` wires one ``dsh mcp`` and serves it on stdio (or Streamable HTTP) until the agent
goes; ``cli/mcp.py`` only parses the options. The answer source is a row of the
answer-source table (door ``MCP``: ``--answers FILE``, else ``--web``, else the attach
desks through the hub). ``approve_tool_use`` is decided at a desk only (``--answers`` and
``--web`` give it nothing to ask, so every request is denied, saying why).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dsh_cli.core.errors import format_line
from dsh_cli.core.lines import for_terminal, notice, warning

if TYPE_CHECKING:
    from dsh_cli.interaction import UserInteraction
    from dsh_cli.permissions import PermissionGate
    from dsh_cli.store import SessionStore

__all__ = ["McpOptions", "serve"]


@dataclass(frozen=True)
class McpOptions:
    """What ``dsh mcp``'s command line asks for."""

    answers_path: str | None = None
    web: bool = False
    wait: float = 0.0  # with no desk attached, wait this long for one
    question_timeout: float | None = None
    http: bool = False
    http_port: int = 0
    host: str = "127.0.0.1"  # the web page's
    web_port: int = 0
    open_browser: bool | None = None


def _say(line: str) -> None:
    sys.stderr.write(line.rstrip("\n") + "\n")
    sys.stderr.flush()


async def serve(options: McpOptions, *,
                on_termination: Callable[[Callable[[], None]], Callable[[], None]]) -> int:
    """Serve one ``dsh mcp`` until its agent goes; the exit status. ``on_termination``
    registers the hook a signal runs before the unwinding (``session.interrupts``)."""
    from dsh_cli.sources import MCP, AnswerOptions, prepare

    if not options.http:
        _started_by_hand(desk=options.answers_path is None and not options.web)
    from dsh_cli.config import load_settings
    from dsh_cli.core.errors import HarnessError
    from dsh_cli.desk.channel import DeskDirRefused
    from dsh_cli.interaction import UserInteraction
    from dsh_cli.mcp_server.approve import ApproveService
    from dsh_cli.mcp_server.desks import DeskHub, DeskPermissions, DeskProvider
    from dsh_cli.mcp_server.server import build_server, serve_http, serve_stdio
    from dsh_cli.mcp_server.service import AskService
    from dsh_cli.mcp_server.session_record import SessionRecord

    try:
        settings = load_settings(question_timeout=options.question_timeout)
        prepared = prepare(AnswerOptions(MCP, web=options.web, answers=options.answers_path,
                                         host=options.host, port=options.web_port,
                                         open_browser=options.open_browser))
    except HarnessError as error:
        _say(format_line(error.code, error.message))
        return 2
    ui = UserInteraction(timeout=settings.question_timeout)
    async with contextlib.AsyncExitStack() as stack:
        source = await stack.enter_async_context(prepared.attach(ui))
        web_url = source.host.url if source.host is not None else None
        hub = DeskHub(ui, relay_questions=source.provider is None, web_url=web_url, report=_say)
        try:
            await hub.start()
        except DeskDirRefused as refused:
            _say(format_line(refused.code, f"{refused.message} (no desk can reach this server)"))
        except OSError as error:
            _say(warning(f"no desk socket at {hub.path}: {error.strerror}"))
        else:
            stack.push_async_callback(hub.close)
        gate = _permission_gate(ui, settings.question_timeout)
        if hub.relay_questions:
            ui.register_provider(DeskProvider(hub, wait=options.wait, alert=_tty_alert))
            gate.register_provider(DeskPermissions(hub, wait=options.wait, alert=_tty_alert))
        store = _open_store()
        session = SessionRecord(ui, store, report=_say)
        service = AskService(ui, sources=hub.sources, session=session)
        stack.callback(session.close)
        # a signal marks pending batches interrupted before the unwinding aborts them
        stack.callback(on_termination(session.mark_interrupted))
        if store is not None:
            stack.callback(store.close)
        server = build_server(service, ApproveService(gate, service))
        try:
            if options.http:
                await serve_http(server, port=options.http_port, tickets=service.tickets,
                                 announce=lambda url: _say(notice(f"mcp {url}")))
            else:
                await serve_stdio(server)
        finally:  # open async batches end with the server, as waiting ones do: desks drop them
            await service.tickets.close()
    return 0


def _permission_gate(ui: UserInteraction, timeout: float | None) -> PermissionGate:
    """``approve_tool_use``'s gate: one per process ("for this session"), "always" saved."""
    from dsh_cli.config import load_settings
    from dsh_cli.core.errors import HarnessError
    from dsh_cli.core.home import approvals_file
    from dsh_cli.permissions import Approvals, PermissionGate, Rules

    # the human's own rules in config.toml ([permissions]: Bash(git status:*), Bash, ...)
    # are the broader grants; a config that cannot be read leaves every call asked
    try:
        settings = load_settings()
        rules = Rules(settings.allow, settings.ask, settings.deny)
    except HarnessError as error:
        _say(format_line(error.code, f"{error.message}; approve_tool_use asks for every call"))
        rules = Rules()
    from dsh_cli.permissions.unmatched import approve_warnings

    for line in approve_warnings(rules):  # Claude Code's tools: Bash(rm:*), Read(~/.ssh/**)
        _say(line)
    return PermissionGate(rules, approvals=Approvals(approvals_file()),
                          events=ui.events, timeout=timeout, notice=_say)


def _open_store() -> SessionStore | None:
    from dsh_cli.store import SessionStore, StoreError

    try:
        return SessionStore.open()
    except StoreError as error:
        _say(format_line(error.code, f"{error.message} (batches are not recorded)"))
        return None


def _started_by_hand(*, desk: bool) -> None:
    """One stderr line when stdin is a terminal: a human started what an agent should (the
    screen would stay blank while stdout waits for MCP messages, which it keeps to itself)."""
    try:
        by_hand = sys.stdin is not None and sys.stdin.isatty()
    except (OSError, ValueError):
        return
    if by_hand:
        where = "; answer its questions with `dsh attach` in another terminal" if desk else ""
        _say(for_terminal(notice(f"mcp waits for an agent on stdin (an agent starts `dsh mcp` "
                                 f"as its MCP server){where}; ctrl-c to quit"), sys.stderr))


def _tty_alert() -> None:
    """``--wait`` with no desk: a bell and one line on the controlling terminal, if any."""
    from dsh_cli.core.terminal_alert import encode

    with contextlib.suppress(OSError), open("/dev/tty", "w", encoding="utf-8") as tty:
        tty.write(encode("bell", "")
                  + notice("an agent is asking a question: run `dsh attach` to answer it\n"))



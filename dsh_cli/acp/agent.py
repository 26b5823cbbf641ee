"""The ACP methods dsh answers, as the SDK's router calls them (``acp.interfaces.Agent``).

Each session is an ``AcpSession``; errors a client can cause are JSON-RPC errors with the
dsh code in ``data``: an unknown session, a second prompt while one runs, a model that
cannot be switched to, a session that cannot be loaded.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from dsh_cli.acp import messages
from dsh_cli.acp.session import AcpSession, Client, PromptRunning
from dsh_cli.core.errors import HarnessError

if TYPE_CHECKING:
    from dsh_cli.config import Settings
    from dsh_cli.session.tools import ToolPlan
    from dsh_cli.sources import Prepared

__all__ = ["DshAgent"]

Post = Callable[[dict[str, Any]], None]
Request = Callable[[str, dict[str, Any]], Awaitable[Any]]
Drain = Callable[[], Awaitable[None]]
LISTED = 100  # sessions per ``session/list`` page


class DshAgent:
    """dsh's agent behind one ACP connection: its client, its sessions."""

    def __init__(self, settings: Settings, plan: ToolPlan, options: Mapping[str, Any], *,
                 post: Post, request: Request, drain: Drain,
                 source: Prepared | None = None) -> None:
        self._settings = settings
        self._plan = plan
        self._options = options
        self._post = post
        self._request = request
        self._drain = drain
        self._source = source
        self.client = Client()
        self.sessions: dict[str, AcpSession] = {}

    async def initialize(self, protocol_version: int, client_capabilities: Any = None,
                         client_info: Any = None, **_: Any) -> dict[str, Any]:
        import dsh_cli

        elicitation = getattr(client_capabilities, "elicitation", None)
        name = (getattr(client_info, "title", None) or getattr(client_info, "name", None)
                or "ACP client")
        files = getattr(client_capabilities, "fs", None)
        self.client = Client(name=str(name)[:60],
                             form=getattr(elicitation, "form", None) is not None,
                             url=getattr(elicitation, "url", None) is not None,
                             files=bool(getattr(files, "read_text_file", False)
                                        and getattr(files, "write_text_file", False)),
                             terminal=bool(getattr(client_capabilities, "terminal", False)))
        return messages.initialize_result(dsh_cli.__version__)

    async def new_session(self, cwd: str, mcp_servers: list[Any] | None = None,
                          **_: Any) -> dict[str, Any]:
        from dsh_cli.runtime import build_runtime

        plan = self._session_plan(cwd, mcp_servers)
        runtime = _or_error(lambda: build_runtime(
            self._settings, system=self._options.get("system"),
            ask=not self._options.get("no_ask")))
        session = await self._open(runtime, plan)
        return {"sessionId": session.session_id, "configOptions": self._config(session)}

    async def load_session(self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None,
                           **_: Any) -> dict[str, Any]:
        from dsh_cli.runtime import build_runtime

        if session_id in self.sessions:
            await self.sessions.pop(session_id).close()  # loaded again: shown afresh
        plan = self._session_plan(cwd, mcp_servers)
        runtime = _or_error(lambda: build_runtime(
            self._settings, system=self._options.get("system"),
            ask=not self._options.get("no_ask"), resume=session_id))
        session = await self._open(runtime, plan)
        await session.replay()
        return {"configOptions": self._config(session)}

    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None,
                            **_: Any) -> dict[str, Any]:
        from dsh_cli.store import SessionStore

        start = int(cursor) if cursor and cursor.isdigit() else 0
        store = _or_error(SessionStore.open)
        try:
            # chats only: an agent's `dsh mcp` session is not one dsh acp can load
            summaries = _or_error(lambda: store.list_sessions("chat"))
        finally:
            store.close()
        page = summaries[start:start + LISTED]
        result: dict[str, Any] = {"sessions": [
            # dsh keeps no directory with a session: each is listed in the one asked about
            {"sessionId": item.id, "cwd": cwd or os.getcwd(), "title": item.shown_title,
             "updatedAt": item.updated_at} for item in page]}
        if start + LISTED < len(summaries):
            result["nextCursor"] = str(start + LISTED)
        return result

    async def close_session(self, session_id: str, **_: Any) -> dict[str, Any]:
        session = self.sessions.pop(session_id, None)
        if session is None:
            raise _unknown(session_id)
        await session.close()
        return {}

    async def set_config_option(self, config_id: str, session_id: str, value: Any,
                                **_: Any) -> dict[str, Any]:
        from dsh_cli.acp.errors import invalid_params

        session = self._session(session_id)
        if config_id != "model":
            raise invalid_params(f"dsh has no setting {config_id!r}; it has 'model'")
        if not isinstance(value, str):
            raise invalid_params("the model is a name")
        try:
            session.runtime.switch_model(value)
        except HarnessError as error:  # no key, a bad script: the session keeps its model
            raise invalid_params(error.message, error.code) from None
        return {"configOptions": self._config(session)}

    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> dict[str, Any]:
        from dsh_cli.acp.errors import busy, failed

        session = self._session(session_id)
        try:
            reason = await session.prompt(prompt_text(prompt))
        except PromptRunning as error:
            raise busy(str(error)) from None
        except HarnessError as error:  # the model failed: the turn ends, the session stays
            raise failed(error) from None
        return {"stopReason": reason}

    async def cancel(self, session_id: str, **_: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None:  # nothing to cancel is no error: cancel is a notification
            session.cancel()

    def end_turns(self) -> None:
        """Cancel every running turn (the client went away)."""
        for session in self.sessions.values():
            session.cancel("the ACP client went away")

    async def close(self) -> None:
        """Close every session; each is stored as it stands."""
        while self.sessions:
            _, session = self.sessions.popitem()
            await session.close()

    async def _open(self, runtime: Any, plan: ToolPlan) -> AcpSession:
        from dsh_cli.acp.errors import failed

        runtime.keep_empty = True  # session/new's id stays loadable, as the client expects
        session = AcpSession(runtime, plan, self.client, post=self._post,
                             request=self._request, drain=self._drain, source=self._source)
        try:
            await session.open()
        except HarnessError as error:
            runtime.close()
            raise failed(error) from None
        except BaseException:
            runtime.close()
            raise
        self.sessions[session.session_id] = session
        return session

    def _session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise _unknown(session_id)
        return session

    def _session_plan(self, cwd: str, servers: list[Any] | None) -> ToolPlan:
        """The command line's servers and rules, and the servers the client names."""
        if not servers or self._options.get("no_mcp"):
            return self._plan
        from dsh_cli.mcp_client.config.servers import parse_servers

        table = {}
        for server in servers:
            entry = server.model_dump(by_alias=True, exclude_none=True)
            name = entry.pop("name", "")
            entry.pop("_meta", None)
            if entry.get("type") in ("http", "sse"):
                entry["headers"] = {h["name"]: h["value"] for h in entry.get("headers", [])}
            else:
                entry["env"] = {e["name"]: e["value"] for e in entry.get("env", [])}
                entry["cwd"] = cwd
            table[name] = entry
        configured = _or_error(lambda: parse_servers({"mcpServers": table},
                                                     "the ACP client's session/new", {}))
        named = {server.name: server for server in (*self._plan.servers, *configured)}
        return replace(self._plan, servers=list(named.values()))

    def _config(self, session: AcpSession) -> list[dict[str, Any]]:
        from dsh_cli.core.defaults import DEFAULT_MODEL

        return messages.config_options(session.runtime.model.name, [DEFAULT_MODEL, "demo"])


def prompt_text(blocks: list[Any]) -> str:
    """A prompt's blocks as the user message's text: text, links named, resources inlined."""
    parts = []
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind == "text":
            parts.append(block.text)
        elif kind == "resource_link":
            parts.append(f"[{block.name}]({block.uri})")
        elif kind == "resource":
            resource = block.resource
            text = getattr(resource, "text", None)
            if text is not None:
                parts.append(f"<resource uri={resource.uri!r}>\n{text}\n</resource>")
            else:
                parts.append(f"[binary resource {resource.uri}: not read]")
        else:
            parts.append(f"[{kind} content: not supported]")
    return "\n\n".join(parts)


def _or_error(make: Callable[[], Any]) -> Any:
    """``make()``; a ``HarnessError`` (a bad session id, model, config) as a JSON-RPC error."""
    from dsh_cli.acp.errors import failed

    try:
        return make()
    except HarnessError as error:
        from dsh_cli.core.errors import report

        report(error, sys.stderr)  # the client gets it too; stderr is the editor's log
        raise failed(error) from None


def _unknown(session_id: str) -> Exception:
    from dsh_cli.acp.errors import invalid_params

    return invalid_params(f"no session {session_id[:80]!r} is open here", "SESSION_NOT_FOUND")

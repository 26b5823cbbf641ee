"""An MCP server (2026-07-28) whose form is whatever schema its caller hands it, as JSON.

``python raw_form_server.py``: stdio (with ``--http``: Streamable HTTP on a free port of
127.0.0.1, its URL printed on stdout, serving every client until killed), one tool
``ask(schema)`` that answers with an input-required result carrying ``schema`` verbatim as
the ``requestedSchema`` of input request ``f`` (no pydantic model in between, so a test can
make the server lie), and on the retry reports the ``inputResponses`` it received as JSON.
Its tool ``open(url)`` does the same with a URL-mode request for ``url``, sent exactly as
given.
"""

from __future__ import annotations

import json
import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import (
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    InputRequiredResult,
)


def entry() -> dict[str, object]:
    """An ``mcpServers`` entry that starts this server with this interpreter."""
    return {"command": sys.executable, "args": [__file__]}


def http_entry(url: str) -> dict[str, object]:
    """An ``mcpServers`` entry for this server running with ``--http`` at ``url``."""
    return {"type": "http", "url": url}


def build() -> MCPServer:
    server = MCPServer("raw")

    @server.tool()
    async def ask(schema: str, ctx: Context) -> object:
        """Ask a form whose schema is exactly ``schema``."""
        if ctx.input_responses:
            return json.dumps({key: value.model_dump(mode="json", exclude_none=True)
                               for key, value in ctx.input_responses.items()})
        # model_construct: the schema goes out as given, however wrong
        params = ElicitRequestFormParams.model_construct(
            mode="form", message="Fill this in", requested_schema=json.loads(schema))
        return InputRequiredResult(input_requests={"f": ElicitRequest(params=params)},
                                   request_state="round-1")

    @server.tool()
    async def open(url: str, ctx: Context) -> object:
        """Ask the human to open exactly ``url``."""
        if ctx.input_responses:
            return json.dumps({key: value.model_dump(mode="json", exclude_none=True)
                               for key, value in ctx.input_responses.items()})
        params = ElicitRequestURLParams.model_construct(
            mode="url", message="Sign in to continue", url=url, elicitation_id="e1")
        return InputRequiredResult(input_requests={"u": ElicitRequest(params=params)},
                                   request_state="round-1")

    return server


def serve_http() -> None:
    """Every client over Streamable HTTP: the server keeps nothing between calls (a form's
    round is in the client's ``requestState``), so one process serves them all."""
    import asyncio
    import socket

    import uvicorn

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    print(f"http://127.0.0.1:{listener.getsockname()[1]}/mcp", flush=True)
    config = uvicorn.Config(build().streamable_http_app(), log_level="warning", lifespan="on")
    asyncio.run(uvicorn.Server(config).serve(sockets=[listener]))


if __name__ == "__main__":
    if sys.argv[1:] == ["--http"]:
        serve_http()
    else:
        build().run("stdio")

"""An MCP server that asks the human through elicitation, the era-neutral way.

``python mcp_forms_server.py``: stdio, ``MCPServer`` with ``Resolve``/``Elicit`` resolvers,
so a 2026-07-28 client gets both questions of ``deploy`` in one input-required result.
Tools: ``deploy`` (two forms at once: where, and whether), ``rename`` (one form with a
required, pattern-checked field). Each reports what
it received as JSON, so a test sees exactly the server's side.

``--record FILE`` appends JSON lines for each ``tools/call`` round: this process's pid, the
tool, the ``requestState`` it received and the one it sent back (both as the server reads
them, unsealed), and the keys of the ``inputResponses``, so a test sees each round from the
server's side. ``--state-key SECRET`` seals ``requestState`` under that key instead of the
SDK's process-local one, so a restarted server can read state minted before the restart.
"""

from __future__ import annotations

import json
from typing import Annotated, Literal

from mcp.server.elicitation import AcceptedElicitation, ElicitationResult
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.resolve import Elicit, Resolve
from pydantic import BaseModel, Field


def entry(*extra: str, **options: object) -> dict[str, object]:
    """An ``mcpServers`` entry that starts this server with this interpreter."""
    import sys

    return {"command": sys.executable, "args": [__file__, *extra], **options}


class Target(BaseModel):
    env: Literal["staging", "production"] = Field(title="Environment")
    replicas: int = Field(default=2, ge=1, le=9, title="Replicas")


class Approval(BaseModel):
    approve: bool = Field(title="Go ahead?")
    tags: list[Literal["fast", "safe", "loud"]] = Field(default_factory=list,
                                                        title="Tags")


class NewName(BaseModel):
    name: str = Field(title="New name", min_length=3, pattern="^[a-z][a-z0-9-]*$")
    api_token: str = Field(default="none", title="API token")


def target() -> Elicit[Target]:
    return Elicit("Where should it go?", Target)


def approval() -> Elicit[Approval]:
    return Elicit("Approve the deploy?", Approval)


def new_name() -> Elicit[NewName]:
    return Elicit("Rename the service", NewName)


def outcome(result: ElicitationResult) -> object:
    if isinstance(result, AcceptedElicitation):
        return {"accept": result.data.model_dump()}
    return result.action


class Recorder:
    """Server middleware: a ``call`` line as each ``tools/call`` round arrives and a
    ``result`` line when it is answered (inside the state boundary: state unsealed)."""

    def __init__(self, path: str) -> None:
        self.path = path

    def write(self, **line: object) -> None:
        import os

        with open(self.path, "a", encoding="utf-8") as log:
            log.write(json.dumps({"pid": os.getpid(), **line}) + "\n")

    async def __call__(self, ctx, call_next):
        if ctx.method != "tools/call":
            return await call_next(ctx)
        params = ctx.params or {}
        self.write(event="call", tool=params.get("name"), state_in=params.get("requestState"),
                   responses=sorted(params.get("inputResponses") or {}))
        result = await call_next(ctx)
        sent = (result.get("requestState") if isinstance(result, dict)
                else getattr(result, "request_state", None))
        self.write(event="result", tool=params.get("name"), state_out=sent)
        return result


def build(record: str | None = None, state_key: str | None = None) -> MCPServer:
    from mcp.server.request_state import RequestStateSecurity

    security = RequestStateSecurity(keys=[state_key]) if state_key else None
    server = MCPServer("forms", request_state_security=security,
                       middleware=[Recorder(record)] if record else None)

    @server.tool()
    def deploy(service: str,
               where: Annotated[ElicitationResult[Target], Resolve(target)],
               go: Annotated[ElicitationResult[Approval], Resolve(approval)]) -> str:
        """Deploy a service, asking where and whether."""
        return json.dumps({"service": service, "where": outcome(where), "go": outcome(go)})

    @server.tool()
    def rename(answer: Annotated[ElicitationResult[NewName], Resolve(new_name)]) -> str:
        """Rename, asking for the new name."""
        return json.dumps({"rename": outcome(answer)})

    return server


# wire keys are ``module:qualname``: a stable module name keeps the question ids readable,
# and "deploy" makes them the README's (its CI example runs against this server)
for _resolver in (target, approval, new_name):
    _resolver.__module__ = "deploy"

def serve_http(server: MCPServer) -> None:
    """Streamable HTTP on a free port of 127.0.0.1; its URL is the first line on stdout."""
    import asyncio
    import socket

    import uvicorn

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)  # connections queue from here on: the URL printed is ready
    print(f"http://127.0.0.1:{listener.getsockname()[1]}/mcp", flush=True)
    config = uvicorn.Config(server.streamable_http_app(), log_level="warning", lifespan="on")
    asyncio.run(uvicorn.Server(config).serve(sockets=[listener]))


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--record")
    parser.add_argument("--state-key")
    parser.add_argument("--http", action="store_true", help="serve HTTP, not stdio")
    options = parser.parse_args()
    forms = build(options.record, options.state_key)
    serve_http(forms) if options.http else forms.run("stdio")

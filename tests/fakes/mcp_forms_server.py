"""An MCP server that asks the human through elicitation, the era-neutral way.

``python mcp_forms_server.py``: stdio, ``MCPServer`` with ``Resolve``/``Elicit`` resolvers,
so a 2026-07-28 client gets both questions of ``deploy`` in one input-required result.
Tools: ``deploy`` (two forms at once: where, and whether), ``rename`` (one form with a
required, pattern-checked field). Each reports what
it received as JSON, so a test sees exactly the server's side.
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


def build() -> MCPServer:
    server = MCPServer("forms")

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


# wire keys are ``module:qualname``: a stable module name keeps the question ids readable
for _resolver in (target, approval, new_name):
    _resolver.__module__ = "forms"

if __name__ == "__main__":
    build().run("stdio")

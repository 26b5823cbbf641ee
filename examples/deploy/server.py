"""A small MCP server whose ``deploy`` tool asks the human two forms: where, and whether.

It runs on stdio with the MCP SDK that dsh itself uses (``mcp``), so start it with the
Python of dsh's virtual environment (``servers.json`` says ``python3``: run the example in
that environment, activated). A 2026-07-28 client gets both forms in one input-required
result, whose question ids are ``deploy:target/PROPERTY`` and ``deploy:approval/PROPERTY``;
an older one gets them one after the other. The tool returns what it received, as JSON.
"""

from __future__ import annotations

import json
from typing import Annotated, Literal

from mcp.server.elicitation import AcceptedElicitation, ElicitationResult
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.resolve import Elicit, Resolve
from pydantic import BaseModel, Field


class Target(BaseModel):
    env: Literal["staging", "production"] = Field(title="Environment")
    replicas: int = Field(default=2, ge=1, le=9, title="Replicas")


class Approval(BaseModel):
    approve: bool = Field(title="Go ahead?")
    tags: list[Literal["fast", "safe", "loud"]] = Field(default_factory=list, title="Tags")


def target() -> Elicit[Target]:
    return Elicit("Where should it go?", Target)


def approval() -> Elicit[Approval]:
    return Elicit("Approve the deploy?", Approval)


# a form's key is its resolver's ``module:name``: "deploy" keeps the ids short and readable
for _resolver in (target, approval):
    _resolver.__module__ = "deploy"


def outcome(result: ElicitationResult) -> object:
    if isinstance(result, AcceptedElicitation):
        return {"accept": result.data.model_dump()}
    return result.action


server = MCPServer("deploy")


@server.tool()
def deploy(service: str,
           where: Annotated[ElicitationResult[Target], Resolve(target)],
           go: Annotated[ElicitationResult[Approval], Resolve(approval)]) -> str:
    """Deploy a service, asking where and whether."""
    return json.dumps({"service": service, "where": outcome(where), "go": outcome(go)})


if __name__ == "__main__":
    server.run("stdio")

"""An MCP server (2025-11-25) that asks the client to open a page, then says it is done.

``python mcp_url_server.py``: stdio, one tool ``sign_in(url)`` that sends a URL-mode
``elicitation/create`` (elicitationId ``e7``) and, once the client accepted it, the
``notifications/elicitation/complete`` for ``e7`` (as a server does when its page's flow is
over; twice, after one for an id it never asked), then answers with the action. Session
era only: start it with ``"protocol": "legacy"``.
"""

from __future__ import annotations

import sys

from mcp.server.mcpserver import Context, MCPServer

ELICITATION_ID = "e7"


def entry() -> dict[str, object]:
    """An ``mcpServers`` entry that starts this server with this interpreter."""
    return {"command": sys.executable, "args": [__file__], "protocol": "legacy"}


def build() -> MCPServer:
    server = MCPServer("pages")

    @server.tool()
    async def sign_in(url: str, ctx: Context) -> str:
        """Ask the human to sign in at ``url``."""
        result = await ctx.elicit_url("Sign in to continue", url, ELICITATION_ID)
        if result.action == "accept":
            session = ctx.request_context.session
            await session.send_elicit_complete("never-asked")  # a lie: no such request
            await session.send_elicit_complete(ELICITATION_ID)
            await session.send_elicit_complete(ELICITATION_ID)  # said twice
        return result.action

    return server


if __name__ == "__main__":
    build().run("stdio")

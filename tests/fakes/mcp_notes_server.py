"""A small MCP server written with the SDK's ``MCPServer``, for the cases real servers lack.

``python mcp_notes_server.py [--variant NAME] [--http]``: stdio, or streamable HTTP on a free
port whose URL is the first line on stdout (a server a test module shares: each client's notes
are kept apart by its ``X-Notes-Book`` header). Tools: ``read_notes`` (read-only),
``write_note`` (destructive), ``crash`` (exits mid-call), ``hang`` (never answers),
``fail`` (an ``isError`` result), ``picture`` (an image and a resource link). ``--variant
changed`` gives ``write_note`` another description (a changed definition).
"""

from __future__ import annotations

import argparse
import asyncio
import os

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ImageContent, ResourceLink, TextContent, ToolAnnotations

BOOKS: dict[str, list[str]] = {}


def notes_of(ctx: Context) -> list[str]:
    """The notes of this client's book: over stdio (no headers) the process has one."""
    return BOOKS.setdefault((ctx.headers or {}).get("x-notes-book", ""), [])


def entry(*extra: str, **options: object) -> dict[str, object]:
    """An ``mcpServers`` entry that starts this server with this interpreter."""
    import sys

    return {"command": sys.executable, "args": [__file__, *extra], **options}


def build(variant: str) -> MCPServer:
    server = MCPServer("notes")
    read_only = ToolAnnotations(read_only_hint=True, destructive_hint=False)
    destructive = ToolAnnotations(read_only_hint=False, destructive_hint=True)

    @server.tool(annotations=read_only)
    def read_notes(ctx: Context) -> str:
        """Read every note."""
        return "\n".join(notes_of(ctx)) or "(no notes)"

    description = ("Write a note, then publish it." if variant == "changed"
                   else "Write a note.")

    @server.tool(description=description, annotations=destructive)
    def write_note(text: str, ctx: Context) -> str:
        notes = notes_of(ctx)
        notes.append(text)
        return f"saved note {len(notes)}: {text}"

    @server.tool()
    def crash() -> str:
        """Exit the server process in the middle of the call."""
        os._exit(3)

    @server.tool()
    async def hang() -> str:
        """Never answer; a cancelled call leaves a mark in $NOTES_CANCELLED (if set)."""
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            mark = os.environ.get("NOTES_CANCELLED")
            if mark:
                with open(mark, "a", encoding="utf-8") as file:
                    file.write("cancelled\n")
            raise
        return "unreachable"

    @server.tool()
    def fail() -> str:
        """Always fail."""
        raise ToolError("the disk is full")

    @server.tool(structured_output=False)
    def picture() -> list[TextContent | ImageContent | ResourceLink]:
        """A caption, an image and a link."""
        return [TextContent(type="text", text="a red dot"),
                ImageContent(type="image", data="iVBORw0KGgo=", mime_type="image/png"),
                ResourceLink(type="resource_link", name="dot", uri="file:///tmp/dot.png")]

    return server


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--variant", default="plain")
    parser.add_argument("--http", action="store_true", help="serve HTTP, not stdio")
    options = parser.parse_args()
    notes = build(options.variant)
    if options.http:
        from mcp_forms_server import serve_http  # beside this file: the script's folder

        serve_http(notes)
    else:
        notes.run("stdio")

"""The small MCP server ``dsh demo`` starts with no configuration: notes in one folder.

``python -m dsh_cli.demo_notes DIR`` serves, over stdio, ``list_notes`` and
``read_note`` (read-only, so they run without a prompt) and ``write_note`` (it changes a
file, so dsh asks permission first). It exists so a newcomer sees a permission prompt and
a question in the same turn, offline; it is written with the official SDK's ``MCPServer``.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

__all__ = ["SERVER_NAME", "build", "entry"]

SERVER_NAME = "notes"
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._-]{0,63}$")


def entry(folder: Path) -> dict[str, object]:
    """The ``mcpServers`` entry that starts this server on ``folder``."""
    return {"command": sys.executable, "args": ["-m", __name__, str(folder)]}


def _path(folder: Path, name: str) -> Path:
    """A note's file, refusing names that could leave the folder."""
    name = name.strip()
    if not _SAFE_NAME.match(name) or ".." in name:
        raise ValueError(f"bad note name {name!r}: letters, digits, space, '.', '_', '-'")
    return folder / (name if name.endswith(".md") else f"{name}.md")


def build(folder: Path):  # type: ignore[no-untyped-def]  # MCPServer's own types
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp_types import ToolAnnotations

    server = MCPServer(SERVER_NAME, instructions="Notes kept in one folder.")
    reads = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                            open_world_hint=False)
    writes = ToolAnnotations(read_only_hint=False, destructive_hint=False,
                             idempotent_hint=True, open_world_hint=False)

    @server.tool(annotations=reads)
    def list_notes() -> str:
        """List the notes by name."""
        names = sorted(path.stem for path in folder.glob("*.md"))
        return "\n".join(names) if names else "(no notes yet)"

    @server.tool(annotations=reads)
    def read_note(name: str) -> str:
        """Read one note."""
        try:
            return _path(folder, name).read_text(encoding="utf-8")
        except (OSError, ValueError) as error:
            raise ToolError(str(error)) from None

    @server.tool(annotations=writes)
    def write_note(name: str, text: str) -> str:
        """Write (or replace) a note."""
        try:
            path = _path(folder, name)
            folder.mkdir(parents=True, exist_ok=True)
            path.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
        except (OSError, ValueError) as error:
            raise ToolError(str(error)) from None
        return f"saved {path.name} ({len(text)} characters) in {folder}"

    return server


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m dsh_cli.demo_notes DIR", file=sys.stderr)
        return 2
    build(Path(args[0])).run("stdio")
    return 0


if __name__ == "__main__":
    sys.exit(main())

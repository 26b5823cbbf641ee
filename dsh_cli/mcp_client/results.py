"""An MCP tool result as the text the model receives (``spec/mcp.md`` section 2).

Text parts as they are, structured content as compact JSON when no text says it, images
and audio as a placeholder line (the model cannot see them here), resource links and
embedded resources by their URI.

The text is cut at ``RESULT_CHARACTERS`` and ``RESULT_ITEMS`` content items, the cut
marked (section 4): the model, the store and a controller get the same bounded text, and
no part past the caps is ever turned into text.
"""

from __future__ import annotations

import json
from typing import Any

from dsh_cli.core.limits import RESULT_CHARACTERS, RESULT_ITEMS
from dsh_cli.mcp_client.transport.streamed import cut_of

__all__ = ["result_text"]


def result_text(result: Any) -> str:
    """The ``CallToolResult``'s content joined into one text, within the caps."""
    content = getattr(result, "content", None) or []
    parts = [part for part in map(_part, content[:RESULT_ITEMS]) if part]
    structured = getattr(result, "structured_content", None)
    if structured is not None and not parts:
        parts.append(json.dumps(structured, ensure_ascii=False, separators=(",", ":")))
    text = _joined(parts, RESULT_CHARACTERS)
    characters_left = sum(map(len, parts)) + max(0, len(parts) - 1) - len(text)
    # a long line's items past the cap were counted as it was read, not built (streamed.py)
    items_left = max(0, len(content) - RESULT_ITEMS) + cut_of(getattr(result, "meta", None))
    if not characters_left and not items_left:
        return text
    said = [f"{characters_left} more characters"] if characters_left else []
    said += [f"{items_left} more content items"] if items_left else []
    return (f"{text}\n[dsh cut this result at {RESULT_CHARACTERS} characters and "
            f"{RESULT_ITEMS} content items: {' and '.join(said)} not shown]")


def _joined(parts: list[str], room: int) -> str:
    """``"\\n".join(parts)`` up to ``room`` characters, never building more of it."""
    kept: list[str] = []
    for part in parts:
        kept.append(part[:room])
        room -= len(kept[-1]) + 1
        if room <= 0:
            break
    return "\n".join(kept)


def _part(item: Any) -> str:
    kind = getattr(item, "type", None)
    if kind == "text":
        return str(getattr(item, "text", ""))
    if kind in ("image", "audio"):
        size = len(getattr(item, "data", "") or "") * 3 // 4
        return f"[{kind}: {getattr(item, 'mime_type', None) or 'unknown type'}, ~{size} bytes]"
    if kind == "resource_link":
        name = getattr(item, "name", None) or ""
        return f"[resource: {name} {getattr(item, 'uri', '')}]".replace("  ", " ")
    if kind == "resource":
        resource = getattr(item, "resource", None)
        text = getattr(resource, "text", None)
        if isinstance(text, str):
            return text
        mime = getattr(resource, "mime_type", None) or "binary"
        return f"[resource: {getattr(resource, 'uri', '')} ({mime})]"
    return f"[{kind or 'unknown'} content]"

"""An MCP tool result as the text the model receives (``spec/mcp.md`` section 2).

Text parts as they are, structured content as compact JSON when no text says it, images
and audio as a placeholder line (the model cannot see them here), resource links and
embedded resources by their URI.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["result_text"]


def result_text(result: Any) -> str:
    """The ``CallToolResult``'s content joined into one text."""
    parts: list[str] = []
    for item in getattr(result, "content", None) or []:
        parts.append(_part(item))
    structured = getattr(result, "structured_content", None)
    if structured is not None and not any(parts):
        parts.append(json.dumps(structured, ensure_ascii=False, separators=(",", ":")))
    return "\n".join(part for part in parts if part)


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

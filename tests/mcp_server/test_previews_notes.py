"""``dsh mcp``'s ``ask_user_question`` carries previews and notes, through ``mcp.Client``.

The tool offered teaches ``options[].preview`` and the answer's ``note``; a preview
reaches the desk (``dsh attach --jsonl``) in ``question/requested`` and a note typed there
comes back in the tool result.
"""

from __future__ import annotations

import asyncio

from harness.mcp_util import bounded, client, jsonl_desk

PREVIEW = "CREATE TABLE users (\n  id serial PRIMARY KEY\n);"


def test_the_offered_tool_teaches_preview_and_the_answers_note():
    async def main():
        async with client() as mcp:
            return (await mcp.list_tools()).tools

    (tool, *_) = bounded(main())
    assert tool.name == "ask_user_question"
    option = tool.input_schema["properties"]["questions"]["items"]["properties"]["options"]
    assert "preview" in option["items"]["properties"]
    assert "preview" in (tool.description or "") and "'note'" in (tool.description or "")
    assert "present only when given" in str(tool.output_schema)  # the note, documented


def test_claude_codes_shape_with_a_preview_reaches_the_desk_and_a_note_comes_back():
    # Claude Code's AskUserQuestion input: no id, multiSelect; the id comes from the header
    batch = {"questions": [{"question": "Which database?", "header": "DB Engine",
                            "multiSelect": False, "options": [
                                {"label": "PostgreSQL", "description": "x", "preview": PREVIEW},
                                {"label": "SQLite", "description": "y"}]}]}

    async def main():
        async with jsonl_desk() as desk, client("--wait", "20") as mcp:
            call = asyncio.ensure_future(mcp.call_tool("ask_user_question", batch))
            requested = await desk.event("question/requested")
            await desk.answer(requested, [{"id": "db-engine", "selected": ["PostgreSQL"],
                                           "note": "version 16"}])
            return requested, await call

    requested, result = bounded(main())
    (question,) = requested["questions"]
    assert question["id"] == "db-engine"
    assert question["options"][0] == {"label": "PostgreSQL", "description": "x",
                                      "preview": PREVIEW}
    assert result.structured_content == {"answers": [
        {"id": "db-engine", "selected": ["PostgreSQL"], "note": "version 16"}]}

"""``dsh mcp``'s ``ask_user_question`` shares the ``delivery`` argument, but no tickets yet:
there ``"async"`` waits like ``"wait"``, and the description says so (it must not promise a
ticket). Through ``mcp.Client`` and a desk (``dsh attach --jsonl``)."""

from __future__ import annotations

import asyncio

from mcp_util import bounded, client, jsonl_desk


def test_the_offered_description_says_async_waits_here_and_promises_no_ticket():
    async def main():
        async with client() as mcp:
            return (await mcp.list_tools()).tools

    (tool, *_) = bounded(main())
    assert tool.input_schema["properties"]["delivery"]["enum"] == ["wait", "async"]
    description = tool.description or ""
    assert "'async' waits for the answer exactly like 'wait'" in description
    assert "ticket" not in description.replace("(no ticket is returned)", "")


def test_an_async_call_over_mcp_waits_and_returns_the_answers():
    batch = {"questions": [{"id": "db", "question": "Which database?",
                            "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}]}],
             "delivery": "async"}

    async def main():
        async with jsonl_desk() as desk, client("--wait", "20") as mcp:
            call = asyncio.ensure_future(mcp.call_tool("ask_user_question", batch))
            requested = await desk.event("question/requested")
            await asyncio.sleep(0.2)
            assert not call.done()  # it waits for the human, as "wait" does
            await desk.answer(requested, [{"id": "db", "selected": ["SQLite"]}])
            return requested, await call

    requested, result = bounded(main())
    assert "delivery" not in requested  # a waiting batch, as the desk sees it
    assert result.structured_content == {"answers": [{"id": "db", "selected": ["SQLite"]}]}

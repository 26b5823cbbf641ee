"""The README's permission prompt (under "dsh chat") is what dsh really draws, and the line
it leaves after a `2` is the one dsh leaves."""

from __future__ import annotations

import os
import re

from docs_reading import README

from dsh_cli.permissions import Hints, PermissionDecision, PermissionRequest
from dsh_cli.providers.terminal.permission import (
    PermissionPromptState,
    permission_lines,
    summary_line,
)

WIDTH, HEIGHT = 100, 30
INTRO = "When the model calls a tool of an MCP server"
AFTER = "After a `2` the prompt leaves its summary"
# the sample's two lines of conversation above the prompt
TRANSCRIPT = 2
REQUEST = PermissionRequest(tool="mcp__notes__write_note", server="notes",
                            arguments={"text": "buy milk"},
                            hints=Hints(read_only=False, destructive=True))


def frame() -> list[str]:
    return ["".join(text for _, text in line).rstrip()
            for line in permission_lines(REQUEST, PermissionPromptState(), WIDTH, HEIGHT)]


def block_after(text: str, heading: str) -> tuple[int, int, list[str]]:
    """The first plain code block after ``heading``: (start, end, its lines)."""
    match = re.compile(r"```\n(.*?)```\n", re.S).search(text, text.index(heading))
    assert match is not None
    return match.start(1), match.end(1), match.group(1).splitlines()


def test_the_readme_permission_prompt_is_the_rendered_prompt():
    text = README.read_text(encoding="utf-8")
    start, end, shown = block_after(text, INTRO)
    drawn = frame()
    if os.environ.get("DSH_UPDATE_README") == "1":  # regenerate: DSH_UPDATE_README=1 pytest
        kept = "\n".join(shown[:TRANSCRIPT])
        README.write_text(f"{text[:start]}{kept}\n" + "\n".join(drawn) + "\n" + text[end:],
                          encoding="utf-8")
        shown = [*shown[:TRANSCRIPT], *drawn]
    assert shown[TRANSCRIPT:] == drawn, "run with DSH_UPDATE_README=1 to regenerate the block"


def test_the_readme_summary_after_a_2_is_the_line_dsh_leaves():
    _, _, shown = block_after(README.read_text(encoding="utf-8"), AFTER)
    assert shown[0] == summary_line(REQUEST, PermissionDecision("allow_session", None), WIDTH)

"""The README's elicitation frame (a deploy server's form) is what dsh really draws for it.

The form goes through the real mapping (``tools/mcp/elicitation.py``) and the real terminal
renderer; ``DSH_UPDATE_README=1`` regenerates the README block.
"""

from __future__ import annotations

import os
import re

from docs_reading import README

from dsh_cli.providers.terminal.render import render
from dsh_cli.providers.terminal.state import BatchState
from dsh_cli.tools.mcp.elicitation import build_request, form_fields

WIDTH, HEIGHT = 90, 24
SCHEMA = {"type": "object", "required": ["env"], "properties": {
    "env": {"type": "string", "title": "Environment", "enum": ["staging", "production"],
            "description": "Where the service runs."},
    "replicas": {"type": "integer", "title": "Replicas", "minimum": 1, "maximum": 9,
                 "default": 2},
}}


def form_frame() -> list[str]:
    """The first question of the form as the terminal UI shows it, at 90x24."""
    fields = form_fields(SCHEMA)
    request = build_request("deploy", "Where should it go?",
                            [dict(field.question) for field in fields])
    state = BatchState(list(request.questions), heading=request.heading(),
                       declinable=request.declinable, review=request.review)
    lines = render(state, WIDTH, HEIGHT)
    return ["".join(text for style, text in line if not style.startswith("[")).rstrip()
            for line in lines]


def readme_block(text: str) -> tuple[int, int, list[str]]:
    heading = text.index("A deploy server's form, in the terminal")
    match = re.compile(r"```\n(.*?)```\n", re.S).search(text, heading)
    assert match is not None
    return match.start(1), match.end(1), match.group(1).splitlines()


def test_the_readme_form_frame_is_the_rendered_frame():
    text = README.read_text(encoding="utf-8")
    start, end, shown = readme_block(text)
    frame = form_frame()
    if os.environ.get("DSH_UPDATE_README") == "1":  # regenerate: DSH_UPDATE_README=1 pytest
        README.write_text(text[:start] + "\n".join(frame) + "\n" + text[end:], encoding="utf-8")
        shown = frame
    assert shown == frame, "run this test with DSH_UPDATE_README=1 to regenerate the block"
    assert frame[0].strip() == "── deploy asks: Where should it go?"
    assert not any(line.strip().startswith(("3. Other", "Other")) for line in frame)

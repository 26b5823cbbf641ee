"""The README's preview frame (under "dsh chat") is what dsh really draws."""

from __future__ import annotations

import os
import re

from docs_reading import README

from dsh_cli.interaction import AskUserQuestionItem
from dsh_cli.providers.terminal.render import render
from dsh_cli.providers.terminal.state import BatchState

WIDTH, HEIGHT = 100, 12
MARK = "An option may carry a preview"
CONFIG = """[server]
host = "0.0.0.0"
port = 8080

[database]
url = "postgres://localhost/app"
pool = 10

[log]
level = "info"
format = "json"
"""


def preview_frame() -> list[str]:
    """A single-select whose first option previews its config file, at 100x12."""
    question = AskUserQuestionItem(
        id="config", header="Config", question="How should the config be laid out?",
        options=[{"label": "One file", "description": "config.toml", "preview": CONFIG},
                 {"label": "Per environment", "preview": "config/dev.toml\nconfig/prod.toml"},
                 {"label": "Environment only"}])
    lines = render(BatchState([question]), WIDTH, HEIGHT)
    return ["".join(text for _, text in line).rstrip()
            for line in lines]


def readme_block(text: str) -> tuple[int, int, list[str]]:
    """The first code block after the paragraph on previews: (start, end, its lines)."""
    match = re.compile(r"```\n(.*?)```\n", re.S).search(text, text.index(MARK))
    assert match is not None
    return match.start(1), match.end(1), match.group(1).splitlines()


def test_the_readme_preview_frame_is_the_rendered_frame():
    text = README.read_text(encoding="utf-8")
    start, end, shown = readme_block(text)
    frame = preview_frame()
    if os.environ.get("DSH_UPDATE_README") == "1":  # regenerate: DSH_UPDATE_README=1 pytest
        README.write_text(text[:start] + "\n".join(frame) + "\n" + text[end:], encoding="utf-8")
        shown = frame
    assert shown == frame, "run this test with DSH_UPDATE_README=1 to regenerate the block"
    assert any("│ [server]" in line for line in frame)  # drawn beside the list
    assert any("lines 1-" in line for line in frame) and "J/K" in frame[-1]

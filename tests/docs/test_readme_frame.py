"""The README's sample question frame (under "dsh chat") is what dsh really draws."""

from __future__ import annotations

import os
import re

from docs_reading import README

from dsh_cli.interaction import AskUserQuestionItem
from dsh_cli.providers.terminal.render import render
from dsh_cli.providers.terminal.state import BatchState

WIDTH, HEIGHT = 100, 30


def sample_frame() -> list[str]:
    """Question 2 of 3, Auth and Admin UI ticked, the highlight on Auth, at 100x30."""
    features = AskUserQuestionItem(
        id="features", header="Features", multi_select=True,
        question="Which features should the starter include?",
        detail="Used to generate the initial scaffold; more can be added later.",
        options=[{"label": "Auth", "description": "Sign-in with OAuth and sessions"},
                 {"label": "Billing", "description": "Subscriptions through a payment provider"},
                 {"label": "Admin UI", "description": "An internal dashboard for support staff"}])
    state = BatchState([AskUserQuestionItem(id="stack", question="Which stack?",
                                            options=[{"label": "Go + chi"}]),
                        features, AskUserQuestionItem(id="name", question="Name?")])
    state.right()
    state.digit(1)
    state.digit(3)
    state.home()
    lines = render(state, WIDTH, HEIGHT)
    return ["".join(text for _, text in line).rstrip()
            for line in lines]


def readme_frame(text: str) -> tuple[int, int, list[str]]:
    """The first code block after the ``dsh chat`` heading: (start, end, its lines)."""
    heading = text.index("### `dsh chat`")
    match = re.compile(r"```\n(.*?)```\n", re.S).search(text, heading)
    assert match is not None
    return match.start(1), match.end(1), match.group(1).splitlines()


def test_the_readme_sample_frame_is_the_rendered_frame():
    text = README.read_text(encoding="utf-8")
    start, end, shown = readme_frame(text)
    frame = sample_frame()
    if os.environ.get("DSH_UPDATE_README") == "1":  # regenerate: DSH_UPDATE_README=1 pytest
        README.write_text(text[:start] + "\n".join(frame) + "\n" + text[end:], encoding="utf-8")
        shown = frame
    assert shown == frame, "run this test with DSH_UPDATE_README=1 to regenerate the block"

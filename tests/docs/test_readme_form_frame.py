"""The README's elicitation frame is what dsh really draws for the deploy server's form.

The form is the one ``tests/fakes/mcp_forms_server.py`` asks for its ``deploy`` tool (two
forms at once, as one batch), received by dsh's real MCP client and drawn by the real
terminal renderer; ``DSH_UPDATE_README=1`` regenerates the README block.
"""

from __future__ import annotations

import os
import re
import tempfile

from docs_reading import README
from fakes.mcp_forms_server import entry as forms_entry

from dsh_cli.core.errors import ASK_CANCELLED, UserInteractionError
from dsh_cli.interaction import ScriptedProvider, UserInteraction
from dsh_cli.mcp_client import McpToolset, parse_servers
from dsh_cli.providers.terminal.render import render
from dsh_cli.providers.terminal.state import BatchState
from dsh_cli.tools import ToolRegistry
from dsh_cli.tools.registry import ToolContext

WIDTH, HEIGHT = 90, 24


async def deploy_request():
    """The batch dsh asks when the model calls the deploy server's ``deploy`` tool."""
    ui = UserInteraction()
    provider = ScriptedProvider([UserInteractionError("seen", ASK_CANCELLED)])
    ui.register_provider(provider)
    configs = parse_servers({"mcpServers": {"deploy": forms_entry()}}, "servers.json", {})
    with tempfile.TemporaryFile("w+") as errlog:
        toolset = await McpToolset.start(configs, errlog=errlog, elicitation=ui)
        registry = ToolRegistry()
        toolset.register(registry)
        try:
            await registry.execute("mcp__deploy__deploy", {"service": "api"},
                                   ToolContext(user_interaction=ui, call_id="c1"))
        finally:
            await toolset.close()
    (request,) = provider.requests
    return request


def form_frame(request) -> list[str]:
    """The first question of the form as the terminal UI shows it, at 90x24."""
    state = BatchState(list(request.questions), heading=request.heading(),
                       declinable=request.declinable, review=request.review)
    lines = render(state, WIDTH, HEIGHT)
    return ["".join(text for _, text in line).rstrip()
            for line in lines]


def readme_block(text: str) -> tuple[int, int, list[str]]:
    heading = text.index("A deploy server's form, in the terminal")
    match = re.compile(r"```\n(.*?)```\n", re.S).search(text, heading)
    assert match is not None
    return match.start(1), match.end(1), match.group(1).splitlines()


def test_the_readme_form_frame_is_the_rendered_frame(run):
    text = README.read_text(encoding="utf-8")
    start, end, shown = readme_block(text)
    frame = form_frame(run(deploy_request(), ceiling=30))
    if os.environ.get("DSH_UPDATE_README") == "1":  # regenerate: DSH_UPDATE_README=1 pytest
        README.write_text(text[:start] + "\n".join(frame) + "\n" + text[end:], encoding="utf-8")
        shown = frame
    assert shown == frame, "run this test with DSH_UPDATE_README=1 to regenerate the block"
    assert frame[0].strip() == "── deploy asks: Where should it go? · Approve the deploy?"
    assert not any(line.strip().startswith(("3. Other", "Other")) for line in frame)

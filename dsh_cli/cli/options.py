"""Options shared by the agent commands (``chat``, ``run``, ``web``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from dsh_cli.core.defaults import DEFAULT_BASE_URL, DEFAULT_MODEL

__all__ = [
    "PORT",
    "QUESTION_TIMEOUT",
    "QUESTION_TIMEOUT_HELP",
    "agent_options",
    "check_session_flags",
    "model_options",
    "tool_options",
    "web_options",
]


# ParamType takes type arguments only in newer click than the 8.1 the range allows, where
# subscripting it at run time would fail
class QuestionTimeout(click.ParamType):  # type: ignore[type-arg]
    """Seconds, or ``0``/``none`` for no timeout at all (over a configured one)."""

    name = "seconds"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> float:
        from dsh_cli.config import TIMEOUT_OFF

        if isinstance(value, float):
            return value
        if str(value).strip().lower() in ("none", "off"):
            return TIMEOUT_OFF
        try:
            seconds = float(value)
        except ValueError:
            self.fail(f"{value!r} is not a number of seconds (or 0/none for no timeout)",
                      param, ctx)
        if not seconds >= 0 or seconds == float("inf"):
            self.fail(f"{value!r} is not a number of seconds (or 0/none for no timeout)",
                      param, ctx)
        return seconds


QUESTION_TIMEOUT = QuestionTimeout()
QUESTION_TIMEOUT_HELP = ("Give up on an unanswered question batch after SECONDS "
                         "(0 or none: never, over a configured timeout).")


def agent_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Model, prompt and session options, in the order ``--help`` shows them."""
    decorators = [
        click.option("-c", "--continue", "continue_", is_flag=True,
                     help="Continue the latest session."),
        click.option("-r", "--resume", metavar="ID", help="Resume the session ID."),
    ]
    for decorator in reversed(decorators):
        command = decorator(command)
    return model_options(command)


def model_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Model and prompt options, and the tools' (``dsh acp``: its client picks sessions)."""
    decorators = [
        click.option("-m", "--model", metavar="NAME",
                     help=f"Model name (default {DEFAULT_MODEL}); 'demo' is the offline model; "
                          "'script:PATH' replays a script file."),
        click.option("--base-url", metavar="URL",
                     help=f"OpenAI-compatible endpoint (default {DEFAULT_BASE_URL}; OpenAI's "
                          "for an OpenAI model)."),
        click.option("-s", "--system", metavar="TEXT", help="System prompt."),
        click.option("--question-timeout", type=QUESTION_TIMEOUT, metavar="SECONDS",
                     help=QUESTION_TIMEOUT_HELP),
        click.option("--no-ask", is_flag=True,
                     help="Do not offer ask_user_question to the model at all."),
    ]
    for decorator in reversed(decorators):
        command = decorator(command)
    return tool_options(command)


def tool_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """MCP servers and permission rules (``mcp.md`` section 2, ``permissions.md``)."""
    decorators = [
        click.option("--mcp-config", "mcp_config", multiple=True, metavar="FILE",
                     help="Start the MCP servers of FILE (mcpServers JSON); repeatable."),
        click.option("--mcp-project", is_flag=True,
                     help="Trust this directory's .mcp.json and start its servers."),
        click.option("--no-mcp", is_flag=True, help="Start no MCP servers at all."),
        click.option("--allow", "allow", multiple=True, metavar="RULE",
                     help="Let tools matching RULE run without asking; repeatable."),
        click.option("--deny", "deny", multiple=True, metavar="RULE",
                     help="Refuse tools matching RULE (PERMISSION_DENIED); repeatable."),
        click.option("--yes", is_flag=True,
                     help="Allow every tool call for this run without asking."),
    ]
    for decorator in reversed(decorators):
        command = decorator(command)
    return command


WEB_PORT_HELP = "Port for the web surface (default: any free port)."
PORT = click.IntRange(0, 65535)  # a TCP port; 0 is any free one


def web_options(command: Callable[..., Any], *,
                port_help: str = WEB_PORT_HELP) -> Callable[..., Any]:
    """Where the browser surface listens."""
    decorators = [
        click.option("--host", default="127.0.0.1", show_default=True, metavar="ADDRESS",
                     help="Address to bind the web surface to."),
        click.option("--port", type=PORT, default=0, metavar="PORT", help=port_help),
        click.option("--open/--no-open", "open_browser", default=None,
                     help="Open the system browser (default: when a display is available)."),
    ]
    for decorator in reversed(decorators):
        command = decorator(command)
    return command


def check_session_flags(options: dict[str, Any]) -> None:
    """``-c`` and ``-r`` name the session to go on with two ways: one of them, not both."""
    if options.get("continue_") and options.get("resume"):
        raise click.UsageError("use -c/--continue or -r/--resume, not both")


JSON_HELP = "Machine output: JSON on stdout."



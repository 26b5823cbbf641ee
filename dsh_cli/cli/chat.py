"""``dsh chat`` and ``dsh demo``: the interactive chat loop; questions drawn inline."""

from __future__ import annotations

import sys
from typing import Any

import click

from dsh_cli.cli.options import (
    QUESTION_TIMEOUT,
    QUESTION_TIMEOUT_HELP,
    agent_options,
    check_session_flags,
    tool_options,
)

__all__ = ["chat", "chat_options", "demo"]


def _plain_option(command: Any) -> Any:
    return click.option(
        "--plain", is_flag=True,
        help="Plain line prompts (screen readers, TERM=dumb); also used without a terminal.",
    )(command)


def chat_options(command: Any) -> Any:
    """Every option of ``dsh chat``: the bare ``dsh`` takes them too."""
    return agent_options(_plain_option(command))


def _start(options: dict[str, Any], *, demo: bool) -> None:
    check_session_flags(options)
    from dsh_cli.chat.app import chat_main
    from dsh_cli.session.interrupts import run_main

    # SIGINT is the chat's own: it stops the reply being streamed, not the process.
    sys.exit(run_main(chat_main(options, demo=demo), handle_sigint=False))


@click.command()
@chat_options
def chat(**options: Any) -> None:
    """Chat with the model; its questions are drawn right in the conversation.

    With no API key and no model configured, this runs the offline demo model.
    """
    _start(options, demo=False)


@click.command()
@click.option("-s", "--system", metavar="TEXT", help="System prompt.")
@click.option("--question-timeout", type=QUESTION_TIMEOUT, metavar="SECONDS",
              help=QUESTION_TIMEOUT_HELP)
@click.option("--no-ask", is_flag=True, help="Do not offer ask_user_question to the model.")
@tool_options
@_plain_option
def demo(**options: Any) -> None:
    """Chat with the built-in offline demo model (no key, no network)."""
    _start(options, demo=True)

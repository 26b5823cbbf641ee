"""``dsh acp``: dsh's agent for editors, as an Agent Client Protocol agent on stdin/stdout.

stdout carries ACP messages only; every diagnostic goes to stderr. Questions go to the
browser page (``--web``, its URL on stderr) or ``--answers FILE`` when given, else to the
client as form elicitations (when it advertises them), else fail at once with NO_PROVIDER;
permission requests go to the client's permission options.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from dsh_cli.cli.options import model_options, web_options

ACP_EXAMPLES = """\b
Examples:
  dsh acp                          the agent, for an editor to start
  dsh acp -m demo                  the offline demo model
  dsh acp --mcp-config tools.json  with these MCP servers in every session
  dsh acp --web                    a client without forms: questions in the browser
"""


@click.command(epilog=ACP_EXAMPLES)
@click.option("--answers", "answers_file", metavar="FILE",
              help="Answer questions by id from a JSON file (for a client without forms).")
@click.option("--web", is_flag=True,
              help="Answer questions in the browser (for a client without forms).")
@model_options
@web_options
def acp(**options: Any) -> None:
    """Serve dsh's agent over the Agent Client Protocol (JSON-RPC on stdio).

    An editor (Zed, JetBrains, Neovim, Emacs) or acpx starts it; sessions are stored as
    `dsh run`'s are, and `session/load` takes them up again.
    """
    from dsh_cli.session.interrupts import run_main

    if options["web"] and options["answers_file"] is not None:
        raise click.UsageError("use --web or --answers, not both")
    sys.exit(run_main(_main(options)))


async def _main(options: dict[str, Any]) -> int:
    from dsh_cli.acp.serve import serve
    from dsh_cli.config import load_settings
    from dsh_cli.core.errors import HarnessError, report
    from dsh_cli.models.resolve import resolve_model
    from dsh_cli.session.tools import plan_tools
    from dsh_cli.sources import ACP, AnswerOptions, prepare

    try:
        settings = load_settings(model=options["model"], base_url=options["base_url"],
                                 question_timeout=options["question_timeout"])
        resolve_model(settings)  # no key, a bad script: said now, not at the first session
        plan = plan_tools(settings, options, sys.stderr)
        # stdout is the ACP wire: a source writes only to stderr (the page's URL)
        source = prepare(AnswerOptions(ACP, web=options["web"], answers=options["answers_file"],
                                       host=options["host"], port=options["port"],
                                       open_browser=options["open_browser"]))
    except HarnessError as error:
        report(error, sys.stderr)
        return 2
    return await serve(settings, plan, options, source=source)

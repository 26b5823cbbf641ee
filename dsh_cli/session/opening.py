"""Opening the session a front door asks for (``run``, ``chat``, ``web``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from dsh_cli.config import Settings
    from dsh_cli.runtime import Runtime

__all__ = ["open_session"]


def open_session(settings: Settings, options: Mapping[str, Any],
                 stderr: TextIO) -> tuple[Runtime | None, int]:
    """The runtime the agent options ask for, or None and the exit status after one
    ``dsh: CODE: …`` line: 2 when ``-r`` names no session (a usage error, like the other
    resume errors), else 1.

    ``options`` holds the agent options' values by name (``system``, ``no_ask``,
    ``continue_``, ``resume``); a missing one is its default.
    """
    from dsh_cli.core.errors import (
        NOTHING_TO_RESUME,
        SESSION_AMBIGUOUS,
        SESSION_NOT_FOUND,
        HarnessError,
        report,
    )
    from dsh_cli.runtime import LATEST, build_runtime

    resume = LATEST if options.get("continue_") else options.get("resume")
    try:
        return build_runtime(settings, system=options.get("system"),
                             ask=not options.get("no_ask"), resume=resume), 0
    except HarnessError as error:
        report(error, stderr)
        usage = error.code in (SESSION_NOT_FOUND, SESSION_AMBIGUOUS, NOTHING_TO_RESUME)
        return None, 2 if usage else 1

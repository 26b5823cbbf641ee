"""Permission requests in plain lines: the same prompt as the terminal, as numbered text.

It shares the plain question provider's line reader (one reader per stdin), so questions
and permission requests of one session read the same lines in order. What is granted is
printed whole before the prompt line (``wording.arguments``: a newline shows as ``\\n``,
never as a break or a space), so reading up to the prompt is reading all of it.
"""

from __future__ import annotations

from typing import IO, TYPE_CHECKING

from dsh_cli.core.decisions import DECISIONS
from dsh_cli.core.errors import ASK_ABORTED, ASK_CANCELLED, UserInteractionError
from dsh_cli.core.sanitize import sanitize_line
from dsh_cli.permissions import wording
from dsh_cli.permissions.vocabulary import PermissionDecision

if TYPE_CHECKING:
    from dsh_cli.permissions.vocabulary import PermissionRequest
    from dsh_cli.providers.line_reader import LineReader

__all__ = ["PROMPT", "PlainPermissionPrompt"]

PROMPT = "permission (1-4, or 4 followed by a reason; /cancel)> "


class PlainPermissionPrompt:
    """Prints the request as lines and reads one decision line."""

    def __init__(self, lines: LineReader, output: IO[str], *, echo: bool = False) -> None:
        self.lines = lines
        self.output = output
        self.echo = echo

    async def decide(self, request: PermissionRequest, rpc_id: str) -> PermissionDecision:
        self._show(request)
        while True:
            self._write(PROMPT)
            line = await self.lines.readline()
            if line is None:
                self._write("\n")
                raise UserInteractionError("input closed", ASK_ABORTED)
            if self.echo:
                self._write(sanitize_line(line) + "\n")
            text = line.strip()
            if text == "/cancel":
                raise UserInteractionError("the user dismissed the permission request",
                                           ASK_CANCELLED)
            number, _, reason = text.partition(" ")
            if number in ("1", "2", "3", "4"):
                decision = DECISIONS[int(number) - 1]
                message = reason.strip() or None if decision == "deny" else None
                chosen = PermissionDecision(decision, message)
                self._said(request, chosen)
                return chosen
            self._write("choose 1, 2, 3 or 4 (4 may be followed by a reason)\n")

    def _show(self, request: PermissionRequest) -> None:
        lines = [f"[Permission] {wording.title(request)}"]
        if (what := wording.description(request)) is not None:
            lines.append(f"  what it does: {what}")
        lines.extend(f"  {argument}" for argument in wording.arguments(request))
        warning, claimant, phrases = wording.hint_words(request.hints, request.server)
        if claimant is not None:
            lines.append(f"  {'warning: ' if warning else ''}{claimant} {'; '.join(phrases)}")
        labels = wording.choice_labels(request, reason_key=None)
        lines.extend(f"  {number}. {label}" for number, (_, label) in enumerate(labels, 1))
        self._write("\n".join(lines) + "\n")

    def _said(self, request: PermissionRequest, decision: PermissionDecision) -> None:
        """An "always" says what it covers and how to undo it."""
        if decision.decision == "allow_always":
            self._write(f"allowed always for {wording.always_scope(request)} "
                        f"(undo: `{wording.UNDO}`)\n")

    def _write(self, text: str) -> None:
        self.output.write(text)
        self.output.flush()

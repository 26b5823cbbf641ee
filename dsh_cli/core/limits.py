"""What dsh keeps of a peer's words at most: the caps on what an MCP server sends.

One place for each cap (``spec/mcp.md`` section 4, "A peer cannot hurt dsh"), so the code
that applies one and the docs that name it read the same number. This module imports
nothing.
"""

from __future__ import annotations

__all__ = ["FORM_SCHEMA_BYTES", "MESSAGE_VALUES", "NOTIFICATION_CHARACTERS",
           "NOTIFY_COMMAND_SECONDS", "NOTIFY_OUTPUT_BYTES", "PARSED_WHOLE_BYTES",
           "REQUEST_STATE_BYTES", "RESULT_CHARACTERS", "RESULT_ITEMS"]

# a tool result as the model receives it and the store keeps it; the rest is cut, marked
RESULT_CHARACTERS = 100_000
RESULT_ITEMS = 1_000
# an elicitation's requestedSchema, as compact JSON: a bigger form is refused unasked
FORM_SCHEMA_BYTES = 256 * 1024
# a 2026-07-28 round's requestState kept with its batch for a resume: a bigger one is not
REQUEST_STATE_BYTES = 1024 * 1024
# a stdio line up to this size goes to the SDK's parser as it is; a longer one is parsed as a
# stream and only a bounded message is built from it (``tools/mcp/streamed.py``)
PARSED_WHOLE_BYTES = 256 * 1024
# what a streamed message may build beyond its cut parts: no more than a line parsed whole
# can hold (a value and its comma), so a long line costs no more than a short one could
MESSAGE_VALUES = PARSED_WHOLE_BYTES // 2
# a desk notification's text (title and body each), after sanitising; a longer one is cut, marked
NOTIFICATION_CHARACTERS = 200
# what a ``notify_command`` may write (stdout and stderr together) before the rest is dropped
NOTIFY_OUTPUT_BYTES = 4096
# seconds a ``notify_command`` may run before it is killed
NOTIFY_COMMAND_SECONDS = 10.0

"""What dsh keeps of a peer's words at most: the caps on what an MCP server sends, and on
the private files dsh reads back, and on what trusting a project hashes.

One place for each cap (``spec/mcp.md`` section 4, "A peer cannot hurt dsh"), so the code
that applies one and the docs that name it read the same number. This module imports
nothing.
"""

from __future__ import annotations

__all__ = ["FORM_SCHEMA_BYTES", "MESSAGE_VALUES", "NOTIFICATION_CHARACTERS",
           "NOTIFY_COMMAND_SECONDS", "NOTIFY_OUTPUT_BYTES", "PARSED_WHOLE_BYTES",
           "PRIVATE_FILE_BYTES", "REQUEST_STATE_BYTES", "RESULT_CHARACTERS", "RESULT_ITEMS",
           "TRUST_BYTES", "TRUST_FILES"]

# a tool result as the model receives it and the store keeps it; the rest is cut, marked
RESULT_CHARACTERS = 100_000
RESULT_ITEMS = 1_000
# an elicitation's requestedSchema, as compact JSON: a bigger form is refused unasked
FORM_SCHEMA_BYTES = 256 * 1024
# a 2026-07-28 round's requestState kept with its batch for a resume: a bigger one is not
REQUEST_STATE_BYTES = 1024 * 1024
# a stdio line up to this size goes to the SDK's parser as it is; a longer one is parsed as a
# stream and only a bounded message is built from it (``mcp_client/transport/streamed.py``)
PARSED_WHOLE_BYTES = 256 * 1024
# what a streamed message may build beyond its cut parts: no more than a line parsed whole
# can hold (a value and its comma), so a long line costs no more than a short one could
MESSAGE_VALUES = PARSED_WHOLE_BYTES // 2
# a private JSON file of dsh's (approvals, trusted projects, MCP logins: core/json_file.py);
# a bigger one is refused before a byte of it is read. Thousands of grants fit in it.
PRIVATE_FILE_BYTES = 4 * 1024 * 1024
# what trusting a project's .mcp.json hashes of the code its servers run inside the project
# (``mcp_client/config/runs.py``), at most: a project over either is trusted for one run, never
# remembered, since dsh could not tell a later change
TRUST_FILES = 5_000
TRUST_BYTES = 64 * 1024 * 1024
# a desk notification's text (title and body each), after sanitising; a longer one is cut, marked
NOTIFICATION_CHARACTERS = 200
# what a ``notify_command`` may write (stdout and stderr together) before the rest is dropped
NOTIFY_OUTPUT_BYTES = 4096
# seconds a ``notify_command`` may run before it is killed
NOTIFY_COMMAND_SECONDS = 10.0

"""What dsh keeps of a peer's words at most: the caps on what an MCP server, an agent, a model,
a desk or a relay sends, on the private files dsh reads back, and on what trusting a project
hashes.

One place for each cap (``spec/mcp.md`` section 4, "A peer cannot hurt dsh"), so the code
that applies one and the docs that name it read the same number. This module imports
nothing.
"""

from __future__ import annotations

__all__ = ["ACP_LINE_BYTES", "ACP_OPEN_PAGES", "AGENT_CONFIG_BYTES", "AGENT_CWD_CHARACTERS",
           "AGENT_MACHINE_CHARACTERS", "AGENT_NAME_CHARACTERS",
           "BUILT_MATCHES", "CALLBACK_LINE_BYTES", "COMMAND_CHARACTERS", "DESK_HELD_BYTES",
           "DESK_LINE_BYTES", "DESK_QUEUED_EVENTS", "DPOP_NONCE_CHARACTERS", "FORM_SCHEMA_BYTES",
           "FORWARD_KEPT_BYTES", "FRAME_BYTES", "HTTP_SESSIONS", "HUB_DESK_ENTRIES",
           "HUB_DESK_STREAMS", "HUB_DESK_WAKES", "HUB_IDENTITY_CHARACTERS", "HUB_LOGIN_SECONDS",
           "HUB_PENDING_BYTES", "HUB_PENDING_ENTRIES", "HUB_SESSIONS", "HUB_SESSIONS_PER_AGENT",
           "HUB_TASKS_PAGE", "HUB_TOKEN_BYTES", "HUB_WEB_DESKS", "HUB_WEB_SESSION_SECONDS",
           "IDENTITY_ANSWER_BYTES", "INPUT_ROUNDS",
           "MCP_MESSAGE_BYTES", "MESSAGE_VALUES", "MODEL_CALLS", "NOTIFICATION_CHARACTERS",
           "NOTIFY_COMMAND_SECONDS", "NOTIFY_OUTPUT_BYTES", "OWNED_CLOSE_GRACE_SECONDS",
           "PARSED_WHOLE_BYTES",
           "PATTERN_CHARACTERS", "PENDING_BATCHES", "PENDING_BYTES", "PENDING_BYTES_PER_SESSION",
           "PERMISSION_MESSAGE_CHARACTERS", "PIPE_QUEUE_BYTES", "PRIVATE_FILE_BYTES",
           "PROJECT_FILE_BYTES", "REQUEST_STATE_BYTES", "RESULT_CHARACTERS", "RESULT_ITEMS",
           "SERVER_LOG_BYTES", "TASKS_PER_SESSION", "TASKS_SESSIONLESS", "TASK_LISTEN_BACKLOG",
           "TASK_LISTEN_STREAMS", "TASK_TTL_DEFAULT_MS",
           "TASK_TTL_MAX_MS", "TICKETS_OPEN", "TICKETS_OPEN_PER_OWNER", "TICKETS_SETTLED",
           "TICKET_CHARACTERS", "TICKET_FETCHED_SECONDS", "TICKET_KEEP_SECONDS",
           "TICKET_WAIT_SECONDS", "TRUST_BYTES", "TRUST_FILES", "TRUST_PARSED_BYTES",
           "TURN_CHARACTERS", "URL_CHARACTERS", "WEB_CONNECTIONS", "WEB_CONNECTIONS_PER_CLIENT",
           "WEB_HISTORY_EVENTS", "WEB_REMEMBERED", "WEB_REQUEST_SECONDS"]

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
# a project's .mcp.json, read at most: it is a few lines; a bigger one is not an MCP config
PROJECT_FILE_BYTES = 1024 * 1024
# each module file a project server's script imports, parsed to follow its imports
# (``mcp_client/config/runs.py``): a bigger one is hashed, its imports noted as a gap
TRUST_PARSED_BYTES = 1024 * 1024
# one message from an MCP server, unless its entry sets ``max_mcp_message``
MCP_MESSAGE_BYTES = 16 * 1024 * 1024
# what a server's stderr log keeps before it rotates to NAME.1 (so two of these on disk)
SERVER_LOG_BYTES = 10 * 1024 * 1024
# a URL-mode elicitation's URL, checked before it is parsed: a sign-in URL is far shorter
URL_CHARACTERS = 3000
# the identity provider's answer during a cross-app login: an ID-JAG is far shorter
IDENTITY_ANSWER_BYTES = 64 * 1024
# a server's DPoP-Nonce header: a longer one is not kept
DPOP_NONCE_CHARACTERS = 1024
# the request line the browser sends to the login callback: a callback URL is far shorter
CALLBACK_LINE_BYTES = 16 * 1024
# one line from a dsh server to the desk: a batch of 20 questions × 50 options fits many times
DESK_LINE_BYTES = 16 * 1024 * 1024
# what one desk (``dsh attach``) holds of pending batches and permission requests, all
# servers together, as the bytes of their lines (``desk/link.py``): one past it is refused
# with ``desk/full`` and its agent told why
DESK_HELD_BYTES = 64 * 1024 * 1024
# places in one command where a deny or ask rule's program could come out of a word the shell
# builds (``permissions/shell.py``): each is read to the command's end, so past this many the
# rule is taken to match (the command is denied or asked), never read at a quadratic cost
BUILT_MATCHES = 64
# one frame (a relay line, a web body); past it nothing more is read: BAD_FRAME (relay), 413 (web)
FRAME_BYTES = 1_000_000
# one line from an ACP client (``dsh acp``), the SDK's own stdio limit: a prompt with its
# embedded files fits; past it the line is skipped unread and answered with an error
ACP_LINE_BYTES = 50 * 1024 * 1024
# URL-mode pages an ACP session's client agreed to open whose server has not said they are
# done (``elicitation/complete`` is forwarded for these); the oldest is forgotten past it
ACP_OPEN_PAGES = 256
# a model's turn (text, reasoning, tool-call arguments): far beyond any real answer, small
# enough that the text, its deltas and its stored copy stay well under a gigabyte
TURN_CHARACTERS = 16 * 1024 * 1024
# a permission answer's message from a remote answerer: a longer one is BAD_RESPONSE
PERMISSION_MESSAGE_CHARACTERS = 2000
# Streamable HTTP sessions ``dsh mcp --http`` holds at once: past it the longest idle one is
# closed, and with none idle a new one is 503
HTTP_SESSIONS = 100
# MCP sessions one ``dsh hub serve`` process holds at once (past it a new one is 503), and of
# one agent token (past it that agent's oldest session is ended: its work is the token's,
# so nothing is lost but a call still waiting in that session, whose entry is withdrawn)
HUB_SESSIONS = 1000
HUB_SESSIONS_PER_AGENT = 16
# an unknown agent's self-given name, after sanitising, as the desk shows it
AGENT_NAME_CHARACTERS = 60
# a hub agent's machine (a host name is at most 255) and working directory (PATH_MAX), as it
# says them in its X-Dsh-Machine and X-Dsh-Cwd headers, after sanitising
AGENT_MACHINE_CHARACTERS = 255
AGENT_CWD_CHARACTERS = 4096
# a shell command a permission rule reads (``permissions/shell.py``): a longer one is not read,
# so it is asked, never allowed by a rule
COMMAND_CHARACTERS = 100_000
# a question's free-text ``pattern`` from the model (``interaction/constraints.py``)
PATTERN_CHARACTERS = 500
# async batches waiting at once in one session (``interaction/later.py``): past it
# TOO_MANY_PENDING
PENDING_BATCHES = 10_000
# what the open batches of ``dsh mcp`` may weigh (their arguments as UTF-8 JSON), of one
# session and in all (``mcp_server/budget.py``): a batch within every field's cap can be 11 MB
# and costs the server about 1.5 times that while open; past either, TOO_MANY_PENDING
PENDING_BYTES_PER_SESSION = 32 * 1024 * 1024
PENDING_BYTES = 128 * 1024 * 1024
# the most ``[hub] pending_entries`` / ``pending_bytes`` may raise one agent's caps to (its
# counters are one row, but every pending entry is a desk's to read and a hub's to hold)
HUB_PENDING_ENTRIES = 1_000_000
HUB_PENDING_BYTES = 1024 * 1024 * 1024
# model calls in one turn of the agent loop: past it the turn ends with TURN_LIMIT
MODEL_CALLS = 50
# input rounds a 2026-07-28 MCP server may ask for in one tool call (as the SDK's driver cuts off)
INPUT_ROUNDS = 10
# events a ``dsh web`` page's feed keeps for a page that reconnects; older ones are dropped
WEB_HISTORY_EVENTS = 2000
# batches, calls and permission requests the page's words are remembered for at once (a
# peer's flood); the oldest are forgotten (``providers/web/shown.py``)
WEB_REMEMBERED = 1000
# connections a web server of dsh (``dsh web``, ``--web``, ``dsh attach --web``, ``dsh mcp
# --http``) holds at once, in all (or half the descriptor limit, if lower) and of one client
# address; past either the oldest still waiting for a request is closed
# (``providers/web/connections.py``)
WEB_CONNECTIONS = 256
WEB_CONNECTIONS_PER_CLIENT = 128
# seconds a connection has to send a whole request (head and body), from its opening or
# the end of its previous response: past it the connection is closed (DSH_WEB_REQUEST_SECONDS:
# tests)
WEB_REQUEST_SECONDS = 10.0
# events queued for one browser of the web desk that does not read them (a phone asleep)
# before its stream is ended; it reconnects and gets the replay (``desk/web/feed.py``)
DESK_QUEUED_EVENTS = 2000
# bytes queued for a pipe's reader before the reader counts as gone (``providers/pipe_writer.py``)
PIPE_QUEUE_BYTES = 64 * 1024 * 1024
# another agent's config file ``dsh mcp install`` reads (~/.claude.json keeps history)
AGENT_CONFIG_BYTES = 64 * 1024 * 1024
# ``dsh mcp``'s tickets (``mcp_server/tickets.py``: async ``ask_user_question`` batches, MCP
# tasks), across all of the server's sessions: open at once, past it TOO_MANY_PENDING
TICKETS_OPEN = 10_000
# the same, for one owner (a stdio process, one HTTP session, or all sessionless 2026-07-28
# requests together): one session that fills its share leaves the rest room
TICKETS_OPEN_PER_OWNER = 1_000
# settled outcomes one owner keeps at once (past it the owner's new work is TOO_MANY_PENDING:
# a kept outcome is never forgotten before its time), and forgotten ids remembered, so a
# late fetch reads TICKET_EXPIRED rather than UNKNOWN_TICKET
TICKETS_SETTLED = 1_000
# how long a settled outcome is kept before anyone fetched it, and after its first fetch (a
# client whose response was lost asks again)
TICKET_KEEP_SECONDS = 3600.0
TICKET_FETCHED_SECONDS = 300.0
# the longest one ``get_user_answer`` call waits: under the 60 s an MCP client commonly gives
# a request (Codex's ``tool_timeout_sec`` default, the TypeScript SDK's request timeout), so
# a long poll ends before the client gives up on it; a bigger ``wait_seconds`` is clamped
TICKET_WAIT_SECONDS = 55.0
# a ticket as a client sends it back: dsh's are 18 characters; a longer one is refused unread
TICKET_CHARACTERS = 128
# how long the open work of ``dsh mcp``'s tickets and tasks, aborted (its session ended, the
# server stopping), may take to settle and be recorded before it is cancelled
OWNED_CLOSE_GRACE_SECONDS = 3.0
# MCP tasks of ``dsh mcp`` (both protocol eras): live and kept tasks one client session holds
# at once (past it the oldest finished one is forgotten, and with none finished a new task is
# refused), and how long a task is kept from its creation: a client's ``ttl`` is cut to the
# maximum, and a task still waiting for the human when its time runs out is withdrawn
TASKS_PER_SESSION = 32
# the same for every client of the sessionless 2026-07-28 wire together: their tasks cannot
# be told apart by client, so none is forgotten to make room; past it a new task is refused
TASKS_SESSIONLESS = 1_000
TASK_TTL_DEFAULT_MS = 60 * 60 * 1000
TASK_TTL_MAX_MS = 24 * 60 * 60 * 1000
# a 2026 ``subscriptions/listen`` stream of task statuses: the task ids it may name (one
# client's whole share of tasks) and the changes it may leave unread before it is ended
TASK_LISTEN_BACKLOG = 64
# 2026 ``subscriptions/listen`` streams open at once (each an HTTP response, so a descriptor):
# past it a new listen is refused; a stream ends once every task it names has ended
TASK_LISTEN_STREAMS = 64
# ``dsh mcp --hub``: the agent's messages the forwarder keeps at once (requests in flight,
# kept to send again when the hub never got them, and those waiting while it reconnects);
# past it a request is refused at once. A hub token file is read at most this far, and each
# X-Dsh-* value (machine, working directory) is cut to this many characters
FORWARD_KEPT_BYTES = 64 * 1024 * 1024
HUB_TOKEN_BYTES = 4096
HUB_IDENTITY_CHARACTERS = 1024
# a hub desk stream (``GET /desk``): the pending entries it follows at once (the oldest; the
# rest are announced as those settle), and the changed entries it re-reads one by one before
# it re-reads the whole pending list instead (a desk that reads slowly holds no more)
HUB_DESK_ENTRIES = 1_000
HUB_DESK_WAKES = 100
# desk streams one human holds open at once in one hub process, and as many event streams
# of their browser pages: past it a new one is 429
HUB_DESK_STREAMS = 16
# the hub's browser desk: a login link's code works once within this many seconds; the
# session cookie it becomes lasts this long; the humans whose pages one hub process serves
# at once (each a desk following their teams' entries; one idle for a minute is closed)
HUB_LOGIN_SECONDS = 600
HUB_WEB_SESSION_SECONDS = 7 * 24 * 60 * 60
HUB_WEB_DESKS = 1_000
# the tasks of an agent token one ``tasks/list`` page at the hub reads from its store
HUB_TASKS_PAGE = 100

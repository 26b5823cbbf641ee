"""Every machine-routable error of dsh, its code, and the one line that reports it.

    HarnessError(message, code)         root: every error a caller routes on ``code``
    ├── UserInteractionError            the question seam (questions.md, "Errors")
    ├── TicketError                     a ``dsh mcp`` ticket: unknown, expired, one too many
    ├── ToolError                       the tool registry: bad arguments, unknown tool, aborts
    ├── ModelError                      a model could not produce a turn (MODEL_*, SCRIPT_ERROR)
    ├── ConfigError                     config.toml or a setting holds a bad value
    ├── StoreError                      the session store cannot be used
    │   ├── SessionNotFound             no session with that id
    │   └── SessionBusy                 another live dsh process owns that session
    ├── AnswersFileError                an answers file cannot be read or has the wrong shape
    ├── WebError                        the web host could not start
    ├── PermissionRequestError          a tool call was refused, or nobody could be asked
    ├── PrivateFileError                a private JSON file of dsh's cannot be read or written
    └── UsageError                      a command line or request that cannot be acted on

Every code is a named constant here, so a reader finds them all in one place and a test
can check that the documentation names each one. ``report`` formats the one stderr line,
``dsh: CODE: message``, that every command prints for a failure.
"""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from dsh_cli.core.lines import coded

__all__ = [
    "ABORTED",
    "ABORTED_BEFORE_DISPATCH",
    "ANSWERS_FILE_ERROR",
    "ASK_ABORTED",
    "ASK_CANCELLED",
    "ASK_DECLINED",
    "ASK_DISCUSS",
    "ASK_DISCUSS_MESSAGE",
    "ASK_TIMEOUT",
    "BAD_FRAME",
    "CALLER_NOT_LIVE",
    "CONFIG_ERROR",
    "DELEGATED_CALLER",
    "DESK_DIR_REFUSED",
    "DUPLICATE_PROVIDER",
    "DUPLICATE_TOOL",
    "EMPTY_QUESTIONS",
    "GRANT_NOT_FOUND",
    "HUB_UNREACHABLE",
    "INTERNAL_ERROR",
    "INVALID_ANSWER",
    "INVALID_ARGS",
    "INVALID_QUESTIONS",
    "INVALID_TOOL_NAME",
    "MCP_AUTH_REQUIRED",
    "MCP_LOGIN_FAILED",
    "MCP_STATE_NOT_STORED",
    "MCP_STATE_REFUSED",
    "MCP_TIMEOUT",
    "MCP_TOOL_ERROR",
    "MCP_UNAVAILABLE",
    "MISSING_API_KEY",
    "MODEL_AUTH",
    "MODEL_BAD_REQUEST",
    "MODEL_CONNECTION",
    "MODEL_CONTEXT",
    "MODEL_ERROR",
    "MODEL_NOT_FOUND",
    "MODEL_RATE_LIMIT",
    "MODEL_SERVER",
    "MODEL_STREAM",
    "MODEL_TIMEOUT",
    "NOTHING_TO_RESUME",
    "NO_PERMISSION_PROVIDER",
    "NO_PROVIDER",
    "NO_TICKET_OWNER",
    "PERMISSION_DENIED",
    "PRIVATE_FILE_ERROR",
    "SCRIPT_ERROR",
    "SESSION_AMBIGUOUS",
    "SESSION_BUSY",
    "SESSION_NOT_FOUND",
    "STORE_ERROR",
    "TICKET_EXPIRED",
    "TICKET_NOT_PENDING",
    "TOO_MANY_PENDING",
    "TURN_LIMIT",
    "UNKNOWN_TICKET",
    "UNKNOWN_TOOL",
    "USAGE",
    "WEB_BIND_FAILED",
    "AnswersFileError",
    "ConfigError",
    "HarnessError",
    "ModelError",
    "PermissionRequestError",
    "PrivateFileError",
    "SessionBusy",
    "SessionNotFound",
    "StoreError",
    "TicketError",
    "ToolError",
    "UsageError",
    "UserInteractionError",
    "WebError",
    "discuss_instead",
    "format_line",
    "report",
]

# The question seam (questions.md)
EMPTY_QUESTIONS = "EMPTY_QUESTIONS"
INVALID_QUESTIONS = "INVALID_QUESTIONS"
NO_PROVIDER = "NO_PROVIDER"
DUPLICATE_PROVIDER = "DUPLICATE_PROVIDER"
CALLER_NOT_LIVE = "CALLER_NOT_LIVE"
DELEGATED_CALLER = "DELEGATED_CALLER"
ASK_CANCELLED = "ASK_CANCELLED"
ASK_DECLINED = "ASK_DECLINED"  # the human declined a batch that offers it (elicitation)
# the human left the batch to talk about it; offered only where a conversation goes on
ASK_DISCUSS = "ASK_DISCUSS"
ASK_DISCUSS_MESSAGE = ("the user wants to discuss these questions before answering; "
                       "wait for their message")
ASK_ABORTED = "ASK_ABORTED"
ASK_TIMEOUT = "ASK_TIMEOUT"
INVALID_ANSWER = "INVALID_ANSWER"
# async batches (delivery "async", docs/async-questions.md)
UNKNOWN_TICKET = "UNKNOWN_TICKET"  # no async batch of this session has that ticket
TICKET_NOT_PENDING = "TICKET_NOT_PENDING"  # it was answered, cancelled or timed out already
TOO_MANY_PENDING = "TOO_MANY_PENDING"  # the cap on async batches waiting at once
# a ticket of ``dsh mcp`` whose outcome was kept for its time and then forgotten
TICKET_EXPIRED = "TICKET_EXPIRED"
# an HTTP request whose session ``dsh mcp`` cannot tell: no ticket is made or read for it
NO_TICKET_OWNER = "NO_TICKET_OWNER"

# MCP servers' tools (mcp.md, section 2)
MCP_TOOL_ERROR = "MCP_TOOL_ERROR"
MCP_UNAVAILABLE = "MCP_UNAVAILABLE"
MCP_TIMEOUT = "MCP_TIMEOUT"
# a resumed call's stored requestState was refused; the call is made afresh (a notice)
MCP_STATE_REFUSED = "MCP_STATE_REFUSED"
# a round's requestState too big to store with its batch: the form cannot be resumed
MCP_STATE_NOT_STORED = "MCP_STATE_NOT_STORED"
# a remote server answered 401: it wants `dsh mcp login SERVER` (mcp.md section 4)
MCP_AUTH_REQUIRED = "MCP_AUTH_REQUIRED"
# `dsh mcp login` could not finish: lying metadata, a timeout, a refused code
MCP_LOGIN_FAILED = "MCP_LOGIN_FAILED"

# Permission requests (permissions.md)
PERMISSION_DENIED = "PERMISSION_DENIED"
NO_PERMISSION_PROVIDER = "NO_PERMISSION_PROVIDER"
GRANT_NOT_FOUND = "GRANT_NOT_FOUND"  # `dsh permissions rm ID`: no remembered grant has it
# the approvals, trusted projects or token file is refused (torn, huge, a link, not private)
# or cannot be written (core/json_file.py); it is never taken as empty
PRIVATE_FILE_ERROR = "PRIVATE_FILE_ERROR"

# The tool registry and the agent loop
INVALID_ARGS = "INVALID_ARGS"
UNKNOWN_TOOL = "UNKNOWN_TOOL"
DUPLICATE_TOOL = "DUPLICATE_TOOL"
# a tool whose name no function-calling API takes (an MCP server's: left out, one line)
INVALID_TOOL_NAME = "INVALID_TOOL_NAME"
ABORTED_BEFORE_DISPATCH = "ABORTED_BEFORE_DISPATCH"
ABORTED = "ABORTED"
TURN_LIMIT = "TURN_LIMIT"

# Models
MODEL_ERROR = "MODEL_ERROR"
MODEL_AUTH = "MODEL_AUTH"
MODEL_NOT_FOUND = "MODEL_NOT_FOUND"
MODEL_BAD_REQUEST = "MODEL_BAD_REQUEST"
MODEL_CONTEXT = "MODEL_CONTEXT"
MODEL_RATE_LIMIT = "MODEL_RATE_LIMIT"
MODEL_SERVER = "MODEL_SERVER"
MODEL_TIMEOUT = "MODEL_TIMEOUT"
MODEL_CONNECTION = "MODEL_CONNECTION"
MODEL_STREAM = "MODEL_STREAM"
MISSING_API_KEY = "MISSING_API_KEY"
SCRIPT_ERROR = "SCRIPT_ERROR"

# Settings, the store, the front doors
CONFIG_ERROR = "CONFIG_ERROR"
STORE_ERROR = "STORE_ERROR"
SESSION_NOT_FOUND = "SESSION_NOT_FOUND"
SESSION_AMBIGUOUS = "SESSION_AMBIGUOUS"  # a prefix that starts several sessions
SESSION_BUSY = "SESSION_BUSY"
NOTHING_TO_RESUME = "NOTHING_TO_RESUME"
ANSWERS_FILE_ERROR = "ANSWERS_FILE_ERROR"
BAD_FRAME = "BAD_FRAME"
# the desk directory is not the user's own (another uid's, a symlink): never used
DESK_DIR_REFUSED = "DESK_DIR_REFUSED"
# ``dsh attach --hub``: the hub did not take a frame (unreachable, or it refused the token)
HUB_UNREACHABLE = "HUB_UNREACHABLE"
WEB_BIND_FAILED = "WEB_BIND_FAILED"
USAGE = "USAGE"
INTERNAL_ERROR = "INTERNAL_ERROR"


class HarnessError(Exception):
    """An error that carries a stable ``code`` to route on."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.message = message
        self.code = code

    def to_dict(self) -> dict[str, str]:
        """``{name, code, message}``, the shape tool results and relay events carry."""
        return {"name": type(self).__name__, "code": self.code, "message": self.message}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, {self.code!r})"


class UserInteractionError(HarnessError):
    """A failure of the question seam: cancelled, aborted, no provider, invalid batch..."""


def discuss_instead() -> UserInteractionError:
    """What a batch settles with when the human leaves it to talk about it."""
    return UserInteractionError(ASK_DISCUSS_MESSAGE, ASK_DISCUSS)


class TicketError(HarnessError):
    """A ticket of ``dsh mcp`` (``mcp_server/tickets.py``) unknown, expired, or one too many."""


class ToolError(HarnessError):
    """A failure of the registry itself: bad arguments, unknown tool, aborted call."""


class ModelError(HarnessError):
    """The model could not produce a turn; ``code`` says why (``MODEL_ERROR`` by default).

    ``partial`` is text that had arrived and is worth keeping in the conversation (a turn
    cut at the content cap); None when the failed turn adds nothing.
    """

    def __init__(self, message: str, code: str = MODEL_ERROR, *,
                 partial: str | None = None) -> None:
        super().__init__(message, code)
        self.partial = partial


class ConfigError(HarnessError):
    """The config file cannot be read or holds a bad value."""

    def __init__(self, message: str) -> None:
        super().__init__(message, CONFIG_ERROR)


class StoreError(HarnessError):
    """The session store cannot be used; ``path`` is the file when one is involved."""

    def __init__(self, message: str, code: str = STORE_ERROR, path: Path | None = None) -> None:
        super().__init__(message, code)
        self.path = path


class SessionNotFound(StoreError):
    """No stored session has (or starts with) the given id."""

    def __init__(self, session_id: str, path: Path | None = None, *, ambiguous: bool = False,
                 matches: tuple[str, ...] = ()):
        how = "is ambiguous (several sessions start with it)" if ambiguous else "does not exist"
        if matches:
            how = f"is ambiguous: it starts {', '.join(matches)}"
        super().__init__(f"session {session_id} {how}; see `dsh sessions list`",
                         SESSION_AMBIGUOUS if ambiguous or matches else SESSION_NOT_FOUND,
                         path)
        self.session_id = session_id
        self.matches = matches


class SessionBusy(StoreError):
    """Another live process records this session; ``pid`` is its process id (0: unknown)."""

    def __init__(self, session_id: str, pid: int, path: Path | None = None) -> None:
        owner = f"process {pid}" if pid else "another process"
        super().__init__(f"session {session_id} is in use by {owner}; wait for it to finish, "
                         "or continue another session", SESSION_BUSY, path)
        self.session_id = session_id
        self.pid = pid


class AnswersFileError(HarnessError):
    """The answers file cannot be read or is not a JSON object of answers."""

    def __init__(self, message: str, path: str) -> None:
        super().__init__(message, ANSWERS_FILE_ERROR)
        self.path = path


class WebError(HarnessError):
    """The web host could not start (the address is taken, the host is not an address)."""


class PermissionRequestError(HarnessError):
    """A tool call did not get permission: denied, nobody to ask, dismissed or timed out."""


class PrivateFileError(HarnessError):
    """A private JSON file cannot be used: ``path`` and ``why`` (no path in it) say which."""

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(f"{path} {why}", PRIVATE_FILE_ERROR)
        self.path = path
        self.why = why


class UsageError(HarnessError):
    """A command line or request that cannot be acted on (exit status 2)."""

    def __init__(self, message: str, code: str = USAGE) -> None:
        super().__init__(message, code)


def format_line(code: str, message: str) -> str:
    """The one line a failure is reported as: ``dsh: CODE: message``."""
    return coded(code, message)


def report(error: HarnessError, stream: TextIO) -> None:
    """Write ``error`` as its one line on ``stream`` (stderr, or a chat's transcript)."""
    stream.write(format_line(error.code, error.message) + "\n")
    stream.flush()

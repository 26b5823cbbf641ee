"""JSON-RPC errors dsh gives an ACP client: the SDK's ``RequestError``, dsh's code in ``data``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dsh_cli.core.errors import (
    CONFIG_ERROR,
    SESSION_AMBIGUOUS,
    SESSION_BUSY,
    SESSION_NOT_FOUND,
    HarnessError,
)

if TYPE_CHECKING:
    from acp import RequestError

__all__ = ["busy", "failed", "invalid_params"]

# a dsh code the client's request caused (its params name something wrong)
_PARAMS = frozenset({SESSION_NOT_FOUND, SESSION_AMBIGUOUS, CONFIG_ERROR})


def _error(code: int, message: str, dsh_code: str | None, details: str) -> RequestError:
    from acp import RequestError

    data = {"details": details} if dsh_code is None else {"code": dsh_code, "details": details}
    return RequestError(code, message, data)


def invalid_params(details: str, code: str | None = None) -> RequestError:
    return _error(-32602, "Invalid params", code, details)


def busy(details: str) -> RequestError:
    """A second prompt while the session's turn runs: refused, the turn goes on."""
    return _error(-32600, "Invalid request", SESSION_BUSY, details)


def failed(error: HarnessError) -> RequestError:
    """A dsh error as the request's error: invalid params when the request named it."""
    if error.code in _PARAMS:
        return invalid_params(error.message, error.code)
    return _error(-32603, "Internal error", error.code, error.message)

"""What a session cannot do for an MCP login: the errors a connection reports as
``MCP_AUTH_REQUIRED``, and the one reader of the variables ``oauth.*_env`` name."""

from __future__ import annotations

from collections.abc import Callable, Mapping

__all__ = ["CredentialsRefused", "KeyUnusable", "LoginRequired", "Refused", "SecretMissing",
           "env_value"]

Refused = Callable[["LoginRequired"], None]  # told of a login a session cannot make


class LoginRequired(Exception):
    """The server wants a login this process may not do (no browser in a session).

    ``scope``: the broader scope that login must ask for (a step-up), else None.
    """

    # the entry's own credentials failed: ``dsh mcp login`` would not help, the reason does
    login_cannot_help = False

    def __init__(self, message: str, scope: str | None = None) -> None:
        super().__init__(message)
        self.scope = scope


class SecretMissing(LoginRequired):
    """``oauth.client_secret_env`` (or another ``*_env`` key) names a variable that is not set."""

    login_cannot_help = True


class KeyUnusable(LoginRequired):
    """``oauth.private_key_env`` holds something that is not a key for the algorithm."""

    login_cannot_help = True


class CredentialsRefused(LoginRequired):
    """A grant with the entry's own credentials failed (``client_credentials``, or a JWT
    as the grant): a server, or the ``oauth.issuer`` check, refused (a reason with no
    secret)."""

    login_cannot_help = True


def env_value(environ: Mapping[str, str], key: str, variable: str | None) -> str:
    """The value of the variable ``oauth.KEY`` names; ``SecretMissing`` when it is unset or
    blank (the message names the variable, never a value)."""
    assert variable is not None
    value = environ.get(variable, "")
    if not value.strip():
        raise SecretMissing(f"oauth.{key} names {variable}, which is not set")
    return value

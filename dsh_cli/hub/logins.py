"""The browser desk's logins: one-time codes of a login link, and the sessions they become.

A human's login link carries a code made from 256 random bits (``dsh hub token add NAME
--human`` or ``dsh hub login-link NAME``); opening it at any hub process on the store
trades the code, once and within ``HUB_LOGIN_SECONDS``, for a session whose secret is the
browser's cookie for ``HUB_WEB_SESSION_SECONDS``. The store keeps only digests, each beside
the digest of the human token it came from: every check joins that token, so removing the
token (or making it again) ends its codes and sessions at once, in every hub process.
Only one trade of a code wins: the delete that spends it is the one place that decides.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from dsh_cli.core.limits import HUB_LOGIN_SECONDS, HUB_WEB_SESSION_SECONDS
from dsh_cli.hub import tokens
from dsh_cli.hub.records import TOKEN_NOT_FOUND, HubStoreError, Token
from dsh_cli.hub.store import HubStore

__all__ = ["LOGIN_PATH", "Login", "Session", "login_code", "login_link", "redeem", "session_of"]

LOGIN_PATH = "/login/"
_HUMAN = "t.name, t.kind, t.team, t.created_at"


@dataclass(frozen=True)
class Login:
    """A code traded: the session's secret (the cookie, never stored) and whose it is."""

    secret: str
    human: Token
    expires_at: float


def login_code(store: HubStore, name: str) -> str:
    """A new one-time login code for human ``name`` (``TOKEN_NOT_FOUND`` if none)."""
    code = secrets.token_urlsafe(32)
    with store.engine.transaction(write=True) as tx:
        now = store.clock(tx)
        rows = tx.rows("SELECT digest FROM hub_tokens WHERE name = ? AND kind = 'human'",
                       (name,))
        if not rows:
            raise HubStoreError(f"{name[:64]!r} has no human token; see `dsh hub token list`",
                                TOKEN_NOT_FOUND)
        tx.run("DELETE FROM hub_web_codes WHERE expires_at <= ?", (now,))
        tx.run("INSERT INTO hub_web_codes (digest, token_digest, expires_at) VALUES (?, ?, ?)",
               (tokens.digest(code), rows[0][0], now + HUB_LOGIN_SECONDS))
    return code


def login_link(public_url: str, code: str) -> str:
    """The link a human opens: the hub's public URL, ``/login/`` and the code."""
    return public_url.rstrip("/") + LOGIN_PATH + code


def redeem(store: HubStore, code: str) -> Login | None:
    """The session ``code`` becomes, or None: unknown, spent, expired, or its token gone."""
    digest = tokens.digest(code)
    with store.engine.transaction(write=True) as tx:
        now = store.clock(tx)
        rows = tx.rows(f"SELECT {_HUMAN}, c.token_digest FROM hub_web_codes c "
                       "JOIN hub_tokens t ON t.digest = c.token_digest "
                       "WHERE c.digest = ? AND c.expires_at > ? AND t.kind = 'human'",
                       (digest, now))
        # the delete decides: of two trades of one code, only one removes its row
        if tx.run("DELETE FROM hub_web_codes WHERE digest = ?", (digest,)) != 1 or not rows:
            return None
        *human, token_digest = rows[0]
        secret = secrets.token_urlsafe(32)
        expires_at = now + HUB_WEB_SESSION_SECONDS
        tx.run("DELETE FROM hub_web_sessions WHERE expires_at <= ?", (now,))
        tx.run("INSERT INTO hub_web_sessions (digest, token_digest, expires_at) "
               "VALUES (?, ?, ?)", (tokens.digest(secret), token_digest, expires_at))
    return Login(secret, Token(*human), expires_at)


@dataclass(frozen=True)
class Session:
    """A live session: whose it is, and the seconds it has left (by the store's clock)."""

    human: Token
    seconds_left: float


def session_of(store: HubStore, secret: str) -> Session | None:
    """The live session ``secret`` is, or None (unknown, expired, its token gone)."""
    with store.engine.transaction() as tx:
        now = store.clock(tx)
        rows = tx.rows(f"SELECT {_HUMAN}, s.expires_at FROM hub_web_sessions s "
                       "JOIN hub_tokens t ON t.digest = s.token_digest "
                       "WHERE s.digest = ? AND s.expires_at > ? AND t.kind = 'human'",
                       (tokens.digest(secret), now))
    if not rows:
        return None
    *human, expires_at = rows[0]
    return Session(Token(*human), expires_at - now)

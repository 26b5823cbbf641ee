"""Hub tokens: minted from 256 random bits, kept only as a digest, names checked once."""

from __future__ import annotations

import hashlib
import re
import secrets

from dsh_cli.hub.records import INVALID_NAME, HubStoreError

__all__ = ["NAME_CHARACTERS", "PREFIX", "check_name", "digest", "mint"]

PREFIX = "dshhub_"  # a leaked token is recognisable (and greppable by secret scanners)
NAME_CHARACTERS = 64
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def mint() -> str:
    """A new token: the prefix and 32 random bytes, URL-safe."""
    return PREFIX + secrets.token_urlsafe(32)


def digest(secret: str) -> str:
    """What the store keeps of a token.

    A plain SHA-256 is enough here, unlike for a password: the token carries 256 random
    bits, so no guess list or slow hash changes what an attacker with the digest can do,
    and a fast digest lets every request be checked by one indexed lookup.
    """
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def check_name(name: str, what: str = "token name") -> str:
    """``name`` when it is a usable token or team name, else an ``INVALID_NAME`` error."""
    if not (0 < len(name) <= NAME_CHARACTERS and _NAME.fullmatch(name)):
        raise HubStoreError(
            f"{what} {name[:NAME_CHARACTERS]!r} is not usable: 1 to {NAME_CHARACTERS} letters, "
            "digits, '.', '_' or '-', starting with a letter or digit", INVALID_NAME)
    return name

"""The logins of remote MCP servers: ``mcp-tokens.json`` of the config directory.

Tokens and client registrations live in one JSON file (mode 0600), keyed by the server's
resource URL (RFC 8707), so two entries naming one server share a login and a renamed entry
keeps it; a step-up's scope and a DPoP key are kept beside them, and the token endpoint
the tokens came from (with its issuer), the one place a later process sends their refresh
token. The file is read bounded and changed under its lock, written atomically
(``core/json_file.py``); nothing here writes a token anywhere else.
"""

from __future__ import annotations

import contextlib
import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dsh_cli.core.limits import PRIVATE_FILE_BYTES

if TYPE_CHECKING:
    from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

__all__ = ["DPOP_KEY", "ISSUER", "LOGIN_KEYS", "TOKENS_FILE", "TOKEN_ENDPOINT", "WANTED_SCOPE",
           "StoredLogin", "TokenFile", "resource_of", "token_model", "tokens_file"]

TOKENS_FILE = "mcp-tokens.json"  # in the config directory
MAX_TOKENS_FILE = PRIVATE_FILE_BYTES  # bytes; a bigger file is not ours
DPOP_KEY = "dpop_key"  # the login's DPoP key pair (a private JWK): its tokens are bound to it
# where the tokens were issued: a refresh goes there and nowhere else (the SDK, with no
# metadata fetched in this process, would send it to /token on the MCP server's origin)
TOKEN_ENDPOINT = "token_endpoint"
ISSUER = "issuer"  # the authorization server's, from its metadata (absent: none fetched)
LOGIN_KEYS = ("tokens", "expires_at", "client", DPOP_KEY, TOKEN_ENDPOINT,
              ISSUER)  # what a new login replaces
WANTED_SCOPE = "wanted_scope"  # a step-up's scope, kept until a login asks for it


def resource_of(url: str) -> str:
    """The server's canonical resource URL: the key of its login."""
    from urllib.parse import urlsplit, urlunsplit

    # RFC 8707 as the SDK's OAuth provider forms it (no fragment, lower-case scheme and
    # host), done here so ``dsh mcp logout`` does not import the whole MCP SDK for it
    parts = urlsplit(url)
    return urlunsplit(parts._replace(scheme=parts.scheme.lower(), netloc=parts.netloc.lower(),
                                     fragment=""))


class TokenFile:
    """``mcp-tokens.json``: ``{resource: {"tokens": ..., "client": ...}}``, written 0600.

    Read and changed through ``core/json_file.py``: each change is read-modify-write under
    the file's lock, so two processes saving logins keep both; a file that cannot be
    trusted (torn, huge, a link, not private) is a ``PrivateFileError``, never empty.
    """

    def __init__(self, path: Path) -> None:
        self.path = path

    def read(self) -> dict[str, dict[str, Any]]:
        from dsh_cli.core import json_file

        document = json_file.read(self.path, cap=MAX_TOKENS_FILE)
        if document is None:
            return {}
        if not isinstance(document, dict):
            from dsh_cli.core.errors import PrivateFileError

            raise PrivateFileError(self.path, "does not hold a JSON object of logins; "
                                              "move it away or fix it")
        return {key: value for key, value in document.items() if isinstance(value, dict)}

    def entry(self, resource: str) -> dict[str, Any]:
        return self.read().get(resource, {})

    def update(self, resource: str, values: dict[str, Any]) -> None:
        """Set ``values`` in ``resource``'s entry, in one write."""
        with self._locked():
            document = self.read()
            document.setdefault(resource, {}).update(values)
            self._write(document)

    def drop(self, resource: str, *keys: str) -> None:
        """Drop ``keys`` of ``resource``'s entry (an entry left empty goes too)."""
        with self._locked():
            document = self.read()
            entry = document.get(resource)
            if entry is None or not any(key in entry for key in keys):
                return
            for key in keys:
                entry.pop(key, None)
            if not entry:
                del document[resource]
            self._write(document)

    def forget(self, resource: str) -> bool:
        """Drop ``resource``'s login; whether there was one."""
        with self._locked():
            document = self.read()
            if document.pop(resource, None) is None:
                return False
            self._write(document)
            return True

    def _locked(self) -> contextlib.AbstractContextManager[None]:
        from dsh_cli.core import json_file

        return json_file.locked(self.path)

    def _write(self, document: dict[str, Any]) -> None:
        """Atomically, and never readable by others, not even for a moment."""
        from dsh_cli.core import json_file

        json_file.write(self.path, document)


class StoredLogin:
    """The SDK's ``TokenStorage`` over one resource's entry of the token file."""

    def __init__(self, file: TokenFile, resource: str) -> None:
        self.file = file
        self.resource = resource
        # where the tokens about to be stored were issued (TOKEN_ENDPOINT, ISSUER): the
        # provider sets it from the token response, so they are one write with the tokens
        self.issued_by: dict[str, str] = {}

    async def get_tokens(self) -> OAuthToken | None:
        from pydantic import ValidationError

        value = self.file.entry(self.resource).get("tokens")
        with contextlib.suppress(ValidationError):
            return token_model().model_validate(value) if value else None
        return None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        from mcp.shared.auth_utils import calculate_token_expiry

        # one write: another process never reads the new tokens with the old expiry
        self.file.update(self.resource, {
            "tokens": tokens.model_dump(mode="json", exclude_none=True),
            "expires_at": calculate_token_expiry(tokens.expires_in), **self.issued_by})

    def token_endpoint(self) -> str | None:
        """The endpoint the stored tokens came from; None: not known (stored before dsh
        kept it), and then their refresh token goes nowhere."""
        value = self.file.entry(self.resource).get(TOKEN_ENDPOINT)
        return value if isinstance(value, str) and value else None

    def dpop_key(self) -> object:
        """The login's DPoP key pair as stored (``dpop.DpopKey.from_jwk`` judges it)."""
        return self.file.entry(self.resource).get(DPOP_KEY)

    def set_dpop_key(self, jwk: dict[str, Any]) -> None:
        self.file.update(self.resource, {DPOP_KEY: jwk})

    def expires_at(self) -> float | None:
        """When the stored access token expires (wall clock), if the server said."""
        value = self.file.entry(self.resource).get("expires_at")
        return float(value) if isinstance(value, int | float) else None

    def wanted_scope(self) -> str | None:
        """The scope a step-up wanted, which the next login asks for as well."""
        value = self.file.entry(self.resource).get(WANTED_SCOPE)
        return value if isinstance(value, str) and value.strip() else None

    def want_scope(self, scope: str) -> str:
        """Keep ``scope`` (with any kept before) for the next login; what is kept now."""
        from mcp.client.auth.utils import union_scopes

        kept = union_scopes(self.wanted_scope(), scope) or scope
        self.file.update(self.resource, {WANTED_SCOPE: kept})
        return kept

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        from mcp.shared.auth import OAuthClientInformationFull
        from pydantic import ValidationError

        value = self.file.entry(self.resource).get("client")
        with contextlib.suppress(ValidationError):
            return OAuthClientInformationFull.model_validate(value) if value else None
        return None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.file.update(self.resource, {
            "client": client_info.model_dump(mode="json", exclude_none=True)})


def tokens_file(config_dir: Path) -> TokenFile:
    return TokenFile(config_dir / TOKENS_FILE)


@functools.cache
def token_model() -> type[OAuthToken]:
    """The SDK's token, whose ``token_type`` may also be DPoP (RFC 9449 5): a bound token."""
    from typing import Literal

    from mcp.shared.auth import OAuthToken
    from pydantic import field_validator

    class Token(OAuthToken):
        token_type: Literal["Bearer", "DPoP"] = "Bearer"  # type: ignore[assignment]

        @field_validator("token_type", mode="before")
        @classmethod
        def normalize_token_type(cls, value: str | None) -> str | None:
            # the SDK's title-cases, which would make DPoP "Dpop"; both are case-insensitive
            if isinstance(value, str):
                return {"bearer": "Bearer", "dpop": "DPoP"}.get(value.lower(), value)
            return value

    return Token

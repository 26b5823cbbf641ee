"""MCP authorization for remote servers: the SDK's OAuth providers, as dsh presents them.

The logins they use and keep are in ``tokens.py`` (``mcp-tokens.json``, 0600); nothing
here writes a token anywhere else: not the session store, not the server log, not an error
line.

``http_auth`` gives a session's connection what it presents: a JWT as the grant when the
entry names its variable (``assertion.py``), the ``client_credentials`` grant when it names
its secret's (or its private key's, for a signed JWT: ``private_key_jwt``), else the stored
login, else nothing. The stored login is refreshed
before its expiry (the SDK) and once on a 401 that comes earlier (a token revoked early,
or one whose expiry was not given); a newer login another process stored is taken up on a
401 or 403. A session never opens a browser: a login that would need one (none stored, a
refresh token revoked) is a ``LoginRequired`` handed to the connection, which reports
``MCP_AUTH_REQUIRED``, as it does a refused ``client_credentials`` grant, with its reason;
a 403 ``insufficient_scope`` (a step-up) keeps the scope the SDK would ask for in the entry
(``wanted_scope``), and ``dsh mcp login`` asks for it too. Where the authorization server
offers DPoP, a login's tokens are bound to a key pair kept in its entry (``dpop_key``) and
every request proves it (``dpop``; the SDK has no DPoP). A refresh goes to the token
endpoint the login's tokens came from, stored with them (``tokens.TOKEN_ENDPOINT``), or to
the one this process's discovery found; a login stored without one is not refreshed (its
refresh token would go to ``/token`` on the MCP server's origin): it needs a new login.
``mcp.client.auth`` is imported
only here, and only for a server that needs it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Awaitable, Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dsh_cli.mcp_client.auth.endpoint_check import endpoint_check
from dsh_cli.mcp_client.auth.login_required import (
    KeyUnusable,
    LoginRequired,
    Refused,
    env_value,
)
from dsh_cli.mcp_client.auth.tokens import (
    StoredLogin,
    resource_of,
    token_model,
    tokens_file,
)

if TYPE_CHECKING:
    import httpx2

    from dsh_cli.mcp_client.config.servers import OAuthSettings, ServerConfig

__all__ = ["http_auth", "interactive_auth", "quiet_sdk_log"]

# the SDK takes a zero expiry for "none given": a time long past is how it sees "expired"
EXPIRED = 1.0


def quiet_sdk_log() -> None:
    """The SDK logs a failed flow with its traceback (which can quote a token or a code) on
    stderr when nothing handles its log: dsh says one line itself instead."""
    import logging

    logger = logging.getLogger("mcp.client.auth")
    if not any(isinstance(handler, logging.NullHandler) for handler in logger.handlers):
        logger.addHandler(logging.NullHandler())
    logger.propagate = False


def http_auth(config: ServerConfig, config_dir: Path, *, refused: Refused,
              environ: Mapping[str, str] | None = None) -> httpx2.Auth | None:
    """What a session's connection to ``config`` presents; None: a server with no login.

    ``refused`` is told each time the server wants a login the session cannot make; the
    request's own refusal still goes back to its caller.
    """
    assert config.url is not None
    quiet_sdk_log()
    environ = os.environ if environ is None else environ
    oauth = config.oauth
    resource = resource_of(config.url)
    storage = StoredLogin(tokens_file(config_dir), resource)
    scope = " ".join(oauth.scopes) or None
    own = oauth.own_login
    if own in ("assertion_env", "id_token_env"):  # a JWT as the grant (assertion.py)
        from dsh_cli.mcp_client.auth.assertion import assertion_auth

        return assertion_auth(config.url, oauth, environ)
    if own is not None:
        return _client_credentials(config.url, storage, oauth, scope, environ)
    if not storage.file.entry(resource).get("tokens"):
        return None
    return interactive_auth(config, storage, redirect=_no_browser, callback=_no_callback,
                            redirect_uri="http://127.0.0.1/callback", refused=refused)


def _client_credentials(url: str, storage: StoredLogin, oauth: OAuthSettings,
                        scope: str | None, environ: Mapping[str, str]) -> httpx2.Auth:
    """The ``client_credentials`` grant, with the secret or a JWT signed with the key."""
    key = "client_secret_env" if oauth.client_secret_env else "private_key_env"
    variable = oauth.client_secret_env or oauth.private_key_env
    assert variable is not None and oauth.client_id is not None
    value = env_value(environ, key, variable)
    from mcp.client.auth.extensions import client_credentials as grant

    with _issuer_optional():
        if oauth.client_secret_env:
            checked = type("CheckedClientCredentials", (
                endpoint_check(credentials=True), grant.ClientCredentialsOAuthProvider), {})
            # a class built on the dynamic mixin is untyped: the SDK provider is an httpx Auth
            auth: httpx2.Auth = checked(url, storage, oauth.client_id, value, scope=scope,
                                        issuer=oauth.issuer)
            return auth
        signer = grant.SignedJWTParameters(issuer=oauth.client_id, subject=oauth.client_id,
                                           signing_key=_private_key(value, variable, oauth),
                                           signing_algorithm=oauth.signing_algorithm)
        checked = type("CheckedPrivateKeyJWT", (
            endpoint_check(credentials=True), grant.PrivateKeyJWTOAuthProvider), {})
        auth = checked(url, storage, oauth.client_id,
                       signer.create_assertion_provider(), scope=scope, issuer=oauth.issuer)
        return auth


@contextlib.contextmanager
def _issuer_optional() -> Iterator[None]:
    """Without ``oauth.issuer`` the SDK warns on stderr, over a user's terminal, that the
    MCP server picks where the credentials go: the README says so once, in its place."""
    import warnings

    from mcp.shared.exceptions import MCPDeprecationWarning

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Omitting `issuer` is deprecated",
                                category=MCPDeprecationWarning)
        yield


def _private_key(pem: str, variable: str, oauth: OAuthSettings) -> str:
    """The PEM key of ``variable``, tried once here so a bad one is said before any request
    (and never quoted: the error names the variable only)."""
    import jwt

    try:
        jwt.encode({"probe": True}, pem, algorithm=oauth.signing_algorithm)
    except Exception:  # PyJWT and cryptography raise several kinds for a bad key
        raise KeyUnusable(f"oauth.private_key_env names {variable}, which holds no PEM "
                          f"private key for {oauth.signing_algorithm}") from None
    return pem


def interactive_auth(config: ServerConfig, storage: StoredLogin, *,
                     redirect: Callable[[str], Awaitable[None]],
                     callback: Callable[[], Awaitable[Any]],
                     redirect_uri: str, widen: str | None = None,
                     refused: Refused | None = None) -> httpx2.Auth:
    """The SDK's authorization-code provider (PKCE, discovery, registration, refresh).

    ``widen``: a scope joined to every scope it picks (a step-up's, at login);
    ``refused``: a session's, told of each login it cannot make.
    """
    assert config.url is not None
    quiet_sdk_log()
    oauth = config.oauth
    metadata = _client_metadata({
        "client_name": "dsh", "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"], "token_endpoint_auth_method": "none",
        "scope": " ".join(oauth.scopes) or None}, widen)
    # a document URL is the client_id where the authorization server says it takes one
    # (client_id_metadata_document_supported); elsewhere the SDK registers as before
    provider = _provider_class()(config.url, metadata, storage, redirect_handler=redirect,
                                 callback_handler=callback,
                                 client_metadata_url=oauth.client_metadata_url)
    provider.refused = refused
    return provider  # type: ignore[no-any-return]


def _client_metadata(fields: dict[str, Any], widen: str | None) -> Any:
    """The client's metadata; with ``widen``, its scope never drops ``widen``."""
    from mcp.client.auth.utils import union_scopes
    from mcp.shared.auth import OAuthClientMetadata

    if not widen:
        return OAuthClientMetadata.model_validate(fields)

    class WidenedMetadata(OAuthClientMetadata):
        # the SDK picks the scope from each challenge by assigning it here, then registers
        # with it and builds the authorization request from it: both must carry ``widen``
        def __setattr__(self, name: str, value: Any) -> None:
            if name == "scope":
                value = union_scopes(value, widen)
            super().__setattr__(name, value)

    return WidenedMetadata.model_validate({**fields,
                                           "scope": union_scopes(fields["scope"], widen)})


def _provider_class() -> type[Any]:
    """The SDK's provider, taught the stored expiry so a new process refreshes in time, and
    a second pass for a refusal the stored login can still answer."""
    from mcp.client.auth import OAuthClientProvider

    class RefreshingProvider(endpoint_check(), _dpop_binding(),  # type: ignore[misc]
                             _stored_endpoint(),  # type: ignore[misc]
                             OAuthClientProvider):
        refused: Refused | None = None  # None: a login being made, which may ask

        # the SDK keeps a token's expiry in memory only: a token loaded from the file
        # would pass as valid until the server's 401 sent the flow to the browser
        async def _initialize(self) -> None:
            await super()._initialize()
            storage = self.context.storage
            if isinstance(storage, StoredLogin):
                self.context.token_expiry_time = storage.expires_at()

        async def _auth_flow(self, request: Any) -> Any:
            # the SDK refreshes only past the expiry it knows and meets any 401 with the
            # whole flow (a browser): first a newer stored login, else one refresh, is tried
            again: Callable[[], None] | None = None
            retried = False
            while True:
                if again is not None:  # the last pass is closed: the SDK's lock is free
                    again()
                flow = super()._auth_flow(request)
                try:
                    outgoing = await flow.__anext__()
                    refreshed = outgoing is not request  # a refresh goes first
                    while outgoing is not request:
                        outgoing = await flow.asend((yield outgoing))
                    response = yield request
                    refusal = _refusal(response)
                    again = None if retried or refusal is None else await self._answer(
                        request, refusal, refreshed)
                    if again is not None:
                        retried = True
                        continue
                    if refusal == "login" and self.refused is not None:
                        self.refused(LoginRequired("the stored login was refused"))
                        return  # the 401 goes back to the request's caller
                    try:
                        while True:
                            response = yield await flow.asend(response)
                    except LoginRequired as error:
                        if self.refused is None:
                            raise
                        self.refused(await self._stepped_up(error))
                    # what the caller gets is the last answer: the server's own, once more
                    yield request
                    return
                except StopAsyncIteration:
                    return
                finally:
                    await flow.aclose()

        async def _answer(self, request: Any, refusal: str,
                          refreshed: bool) -> Callable[[], None] | None:
            """What may answer the refusal of ``request``: a login stored since, else (a 401
            that no refresh preceded) one refresh; None: nothing stored can."""
            stored = await self.context.storage.get_tokens()
            sent = request.headers.get("Authorization", "").partition(" ")[2]  # Bearer, DPoP
            if stored is not None and sent != stored.access_token:
                return self._reload
            if refusal == "login" and not refreshed and self.context.can_refresh_token():
                return self._expire
            return None

        def _reload(self) -> None:
            self._initialized = False

        def _expire(self) -> None:
            self.context.token_expiry_time = EXPIRED

        async def _stepped_up(self, error: LoginRequired) -> LoginRequired:
            """A step-up the session cannot make: its scope kept for ``dsh mcp login``,
            unless the stored login holds it already (a new login would change nothing)."""
            storage = self.context.storage
            tokens = await storage.get_tokens()
            granted = set((tokens.scope or "").split()) if tokens is not None else set()
            if not isinstance(storage, StoredLogin) or not error.scope or set(
                    error.scope.split()) <= granted:
                return LoginRequired(str(error))
            return LoginRequired(str(error), scope=storage.want_scope(error.scope))

    return RefreshingProvider


def _stored_endpoint() -> type[Any]:
    """A mixin for the authorization-code provider, below DPoP's (whose proof names the
    URL): tokens are stored with the endpoint that issued them, and refreshed only there."""

    class StoredEndpoint:
        context: Any

        def _issued_by(self, response: Any) -> None:
            """Keep where ``response`` (a token response) came from, for the next write."""
            storage = self.context.storage
            if not isinstance(storage, StoredLogin) or response.request is None:
                return
            metadata = self.context.oauth_metadata
            storage.issued_by = {"token_endpoint": str(response.request.url)}
            if metadata is not None:
                storage.issued_by["issuer"] = str(metadata.issuer)

        async def _initialize(self) -> None:
            await super()._initialize()  # type: ignore[misc]
            storage, tokens = self.context.storage, self.context.current_tokens
            if (isinstance(storage, StoredLogin) and tokens is not None and tokens.refresh_token
                    and self.context.oauth_metadata is None and storage.token_endpoint() is None):
                # nowhere known to send it: the token is used until refused, then a login
                self.context.current_tokens = tokens.model_copy(update={"refresh_token": None})

        async def _refresh_token(self) -> Any:
            import httpx2

            request = await super()._refresh_token()  # type: ignore[misc]
            metadata = self.context.oauth_metadata
            if metadata is not None and metadata.token_endpoint:
                return request  # the SDK's: this process's discovery named the endpoint
            storage = self.context.storage
            stored = storage.token_endpoint() if isinstance(storage, StoredLogin) else None
            if stored is None:
                raise LoginRequired("the stored login names no token endpoint")
            headers = [(name, value) for name, value in request.headers.raw
                       if name.lower() not in (b"host", b"content-length")]
            return httpx2.Request("POST", stored, headers=headers, content=request.content)

        async def _handle_token_response(self, response: Any) -> None:
            self._issued_by(response)
            await super()._handle_token_response(response)  # type: ignore[misc]

        async def _handle_refresh_response(self, response: Any) -> bool:
            self._issued_by(response)
            return await super()._handle_refresh_response(response)  # type: ignore[misc,no-any-return]

    return StoredEndpoint


def _dpop_binding() -> type[Any]:
    """A mixin for the authorization-code provider: DPoP (``dpop``) where the authorization
    server offers it or the login holds a key, the SDK's Bearer everywhere else."""
    from dsh_cli.mcp_client.auth import dpop

    class DpopBinding:
        context: Any
        _dpop: dpop.Proofs | None = None
        _nonces: dpop.Nonces | None = None
        # the authorization server's dpop_signing_alg_values_supported, which the SDK's
        # metadata model drops: read from its metadata response as it passes
        _offered: list[str] | None = None

        def _proofs(self) -> dpop.Proofs | None:
            """The login's proofs: its stored key, else a new one (stored with the tokens)
            where the authorization server offers DPoP; None: Bearer."""
            storage = self.context.storage
            if self._dpop is not None or not isinstance(storage, StoredLogin):
                return self._dpop
            key = dpop.DpopKey.from_jwk(storage.dpop_key())
            algorithm = dpop.choose_algorithm(self._offered)
            if key is None and algorithm is None:
                return None
            if key is None:
                assert algorithm is not None
                key = dpop.DpopKey.generate(algorithm)
                storage.set_dpop_key(key.to_jwk())
            self._nonces = self._nonces or dpop.Nonces()
            self._dpop = dpop.Proofs(key, self._nonces)
            return self._dpop

        async def _initialize(self) -> None:
            self._dpop = None  # a login stored since may hold another key
            await super()._initialize()  # type: ignore[misc]

        def _proved(self, request: Any) -> Any:
            proofs = self._proofs()
            if proofs is not None:
                proofs.sign(request)
            return request

        async def _exchange_token_authorization_code(self, code: str, verifier: str) -> Any:
            return self._proved(await super()._exchange_token_authorization_code(  # type: ignore[misc]
                code, verifier))

        async def _refresh_token(self) -> Any:
            return self._proved(await super()._refresh_token())  # type: ignore[misc]

        async def _handle_token_response(self, response: Any) -> None:
            bearer = dpop.as_bearer(response)
            await super()._handle_token_response(bearer or response)  # type: ignore[misc]
            if bearer is not None:
                await self._bound()

        async def _handle_refresh_response(self, response: Any) -> bool:
            bearer = dpop.as_bearer(response)
            done: bool = await super()._handle_refresh_response(  # type: ignore[misc]
                bearer or response)
            if done and bearer is not None:
                await self._bound()
            return done

        async def _bound(self) -> None:
            """The token just taken is DPoP-bound: kept (and stored) as such."""
            tokens = self.context.current_tokens
            self.context.current_tokens = token_model().model_validate(
                {**tokens.model_dump(), "token_type": "DPoP"})
            await self.context.storage.set_tokens(self.context.current_tokens)

        def _add_auth_header(self, request: Any) -> None:
            tokens = self.context.current_tokens
            proofs = self._proofs() if tokens is not None and (
                tokens.token_type == "DPoP") else None
            if proofs is None:
                request.headers.pop("DPoP", None)
                super()._add_auth_header(request)  # type: ignore[misc]
                return
            request.headers["Authorization"] = f"DPoP {tokens.access_token}"
            proofs.sign(request)  # a fresh proof for each request, and each retry

        async def async_auth_flow(self, request: Any) -> Any:
            # each nonce a server hands out is kept for its origin; a refusal for want of
            # one (RFC 9449 8, 9) is answered once with the new nonce, below the SDK's flow
            flow = super().async_auth_flow(request)  # type: ignore[misc]
            try:
                outgoing = await flow.__anext__()
                while True:
                    response = yield outgoing
                    if outgoing is not request:  # the flow's own: small, and read anyway
                        await response.aread()
                        if self._is_metadata(outgoing, response):
                            self._offered = dpop.offered(response)
                    proofs = self._dpop
                    if (proofs is not None and "DPoP" in outgoing.headers
                            and proofs.nonces.remember(response)
                            and dpop.nonce_challenge(response)):
                        proofs.sign(outgoing)
                        response = yield outgoing
                        if outgoing is not request:
                            await response.aread()
                        proofs.nonces.remember(response)
                    try:
                        outgoing = await flow.asend(response)
                    except StopAsyncIteration:
                        return
            finally:
                await flow.aclose()

        def _is_metadata(self, outgoing: Any, response: Any) -> bool:
            """Whether ``response`` is the authorization server's metadata, fetched where
            the SDK's discovery looks for it."""
            from mcp.client.auth.utils import (
                build_oauth_authorization_server_metadata_discovery_urls as discovery_urls,
            )

            return response.status_code == 200 and str(outgoing.url) in discovery_urls(
                self.context.auth_server_url, self.context.server_url)

    return DpopBinding


def _refusal(response: Any) -> str | None:
    """``login``: a 401; ``scope``: a 403 ``insufficient_scope`` (a step-up); else None."""
    if response.status_code == 401:
        return "login"
    from mcp.client.auth.utils import extract_field_from_www_auth

    if response.status_code == 403 and extract_field_from_www_auth(
            response, "error") == "insufficient_scope":
        return "scope"
    return None


async def _no_browser(url: str) -> None:
    """A session asks for no login: what it would ask for is the URL's scope."""
    from urllib.parse import parse_qs, urlsplit

    scope = parse_qs(urlsplit(url).query).get("scope", [""])[0].strip() or None
    raise LoginRequired("the stored login was refused", scope=scope)


async def _no_callback() -> Any:
    raise LoginRequired("the stored login was refused")

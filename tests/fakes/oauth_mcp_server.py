"""``python oauth_mcp_server.py``: an OAuth-protected Streamable HTTP MCP server on 127.0.0.1.

The SDK's own server-side authorization (``MCPServer(auth=..., auth_server_provider=...)``):
protected-resource and authorization-server metadata, dynamic client registration, PKCE
checked at the token endpoint, bearer tokens checked on ``/mcp``. Its authorization
endpoint approves at once (no human), redirecting to the client's callback with a code,
so a test that fetches the authorization URL plays the browser. It prints its URL
(``http://127.0.0.1:PORT/mcp``) on stdout and serves until killed.

``--expires-in S``: access tokens last S seconds (refresh is then exercised); the line
``expire`` on its stdin ends the life of every access token issued so far (the time a test
would otherwise sleep through), answered ``expired`` on stdout once done;
``--plain-http-endpoints``: its authorization-server metadata lies, sending registration,
authorization and tokens to ``http://10.9.9.9`` (plain http off loopback);
``--redirect-metadata``: its authorization-server metadata redirects to another host (the
same server named ``localhost``; a request that arrives by that name is recorded as
``followed HOST PATH``);
``--refuse-refresh``: every refresh token is refused (revoked); ``--record FILE``: each
token request's grant type, one a line. ``--client ID:SECRET`` and ``--client-key ID:PEMFILE``
add a client for the ``client_credentials`` grant (RFC 6749 4.4), authenticated by
``client_secret_basic`` or by a JWT signed with the private half of PEMFILE's public key
(``private_key_jwt``, RFC 7523: audience the issuer, ES256 or RS256), which the SDK's
server-side authorization does not offer. ``--revocable``: a ``revoke`` tool that revokes
every access token issued so far (and with ``refresh: true`` every refresh token too), as
a server that ends logins early does; ``--one-shot-tokens``: an access token is good for
one request (a login then needs the browser again for the next); ``--write-scope``: a
``write_note`` tool that needs the ``write`` scope, which no login asks for at first (the
server's metadata names only ``read``): a call without it is answered 403
``insufficient_scope`` (a step-up). ``--assertion-key PEMFILE``: its ``/token`` takes the
jwt-bearer grant (RFC 7523 2.1) of a JWT signed with the private half of PEMFILE's public
key (audience the issuer, ES256 or RS256), the grant of a workload's token (SEP-1933) or an
ID-JAG (SEP-990); one sent with ``client_secret_basic`` must name a ``--client`` too.
``--dpop``: DPoP (RFC 9449) in front of it all
(``DpopGate``): its metadata offers ES256, a token request with a valid proof gets a token of
``token_type`` DPoP bound to the proof's key, and ``/mcp`` takes that token only as
``Authorization: DPoP`` with a fresh proof of that key (``ath``, ``htm``, ``htu``); with
``--dpop-nonce`` both the token endpoint and ``/mcp`` first answer ``use_dpop_nonce``.
``--auth-server-apart FILE``: the authorization server listens on a port of its own (its
issuer another origin, named in the protected-resource metadata), and each of the two
servers appends every request it receives to FILE as one JSON line (``server``: ``mcp`` or
``auth``, ``method``, ``path``, ``query``, ``body``); ``--hang-metadata``: the authorization
server's metadata never answers (the request is held open).
``--record`` notes each proof taken (``dpop GRANT`` or ``dpop mcp``, ``+nonce`` with one)
and each nonce challenge (``nonce token``, ``nonce mcp``).

The line ``mode ["OPTION", ...]`` (a JSON list) on its stdin puts the server in the mode
those options name from the next request on, as if it had started with them (every option
but ``--auth-server-apart``'s two-port shape, which only its start sets; ``mode`` with that
option names where its requests are recorded), answered ``mode set``: so one process
serves test after test, each in its own mode with its own record file, and pays the SDK's
start-up once. Clients, codes and tokens issued in one mode stay known in the next (each
test registers a client of its own).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import secrets
import socket
import sys
import time
from collections.abc import Callable

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

GREETING = "hello from the protected server"
NOTED = "noted, with the write scope"


class ApprovingProvider:
    """An in-memory authorization server whose user always says yes."""

    def __init__(self, options: argparse.Namespace) -> None:
        self.options = options  # the mode, read at each request
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}

    def _note(self, grant: str) -> None:
        if self.options.record:
            with open(self.options.record, "a", encoding="utf-8") as file:
                file.write(grant + "\n")

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client: OAuthClientInformationFull,
                        params: AuthorizationParams) -> str:
        code = secrets.token_urlsafe(24)
        self.codes[code] = AuthorizationCode(
            code=code, scopes=params.scopes or ["read"], expires_at=time.time() + 300,
            client_id=client.client_id or "", code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource)
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client: OAuthClientInformationFull,
                                      authorization_code: str) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        self.access[access] = AccessToken(token=access, client_id=client_id, scopes=scopes,
                                          expires_at=int(time.time()) + self.options.expires_in,
                                          resource=resource)
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id,
                                             scopes=scopes, resource=resource)
        return OAuthToken(access_token=access, token_type="Bearer",
                          expires_in=self.options.expires_in, refresh_token=refresh,
                          scope=" ".join(scopes))

    async def exchange_authorization_code(self, client: OAuthClientInformationFull,
                                          authorization_code: AuthorizationCode) -> OAuthToken:
        self._note("authorization_code")
        self.codes.pop(authorization_code.code, None)
        return self._issue(client.client_id or "", authorization_code.scopes,
                           authorization_code.resource)

    async def load_refresh_token(self, client: OAuthClientInformationFull,
                                 refresh_token: str) -> RefreshToken | None:
        self._note("refresh_token")
        if self.options.refuse_refresh:
            return None  # revoked: the token endpoint answers invalid_grant
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(self, client: OAuthClientInformationFull,
                                     refresh_token: RefreshToken,
                                     scopes: list[str]) -> OAuthToken:
        self.refresh.pop(refresh_token.token, None)
        return self._issue(client.client_id or "", scopes or refresh_token.scopes,
                           refresh_token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        one_shot = self.options.one_shot_tokens  # each access token answers one request
        found = self.access.pop(token, None) if one_shot else self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token: object) -> None:
        return None

    def expire(self) -> None:
        """Every access token issued so far is past its expiry, as if its time had passed."""
        past = int(time.time()) - 1
        self.access = {token: granted.model_copy(update={"expires_at": past})
                       for token, granted in self.access.items()}


async def obey(provider: ApprovingProvider, moved: Callable[[], None]) -> None:
    """The test's lines on stdin: ``expire`` ends every access token's life now; ``mode``
    puts the server in another mode (``moved`` follows it where the SDK holds state)."""
    while line := await asyncio.to_thread(sys.stdin.readline):
        if line.strip() == "expire":
            provider.expire()
            print("expired", flush=True)
        elif line.startswith("mode "):
            vars(provider.options).update(vars(parsed(json.loads(line[5:]))))
            moved()
            print("mode set", flush=True)


def lying_metadata(base: str) -> object:
    """``/.well-known/oauth-authorization-server`` with its endpoints off to plain http."""
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def metadata(request: object) -> JSONResponse:
        elsewhere = "http://10.9.9.9"
        return JSONResponse({
            "issuer": base, "authorization_endpoint": f"{elsewhere}/authorize",
            "token_endpoint": f"{elsewhere}/token",
            "registration_endpoint": f"{elsewhere}/register",
            "response_types_supported": ["code"], "code_challenge_methods_supported": ["S256"],
            "grant_types_supported": ["authorization_code", "refresh_token"]})

    return Route("/.well-known/oauth-authorization-server", metadata)


class NoteHost:
    """Records each request that reached this server as ``localhost``: a redirect followed."""

    def __init__(self, app: object, options: argparse.Namespace) -> None:
        self.app, self.options = app, options

    async def __call__(self, scope: dict, receive: object, send: object) -> None:
        host = dict(scope.get("headers") or []).get(b"host", b"").decode("latin-1")
        record = self.options.record if self.options.redirect_metadata else None
        if scope["type"] == "http" and host.startswith("localhost") and record:
            with open(record, "a", encoding="utf-8") as file:
                file.write(f"followed {host} {scope['path']}\n")
        await self.app(scope, receive, send)  # type: ignore[operator]


def redirected_metadata(base: str) -> object:
    """``/.well-known/oauth-authorization-server`` sent on to another host (307)."""
    from starlette.responses import RedirectResponse
    from starlette.routing import Route

    async def metadata(request: object) -> RedirectResponse:
        elsewhere = base.replace("127.0.0.1", "localhost")
        return RedirectResponse(f"{elsewhere}/.well-known/oauth-authorization-server", 307)

    return Route("/.well-known/oauth-authorization-server", metadata)


Answer = Callable[[dict[bytes, bytes], dict[str, list[str]]], tuple[int, dict]]


def granting(app: object, grant_type: str, answer: Answer,
             active: Callable[[], bool]) -> object:
    """``app`` with its ``/token`` taking ``grant_type`` first (``answer``: the status and the
    JSON body) while ``active()``; any other grant goes on to ``app`` with its body replayed."""
    from urllib.parse import parse_qs

    async def wrapped(scope: dict, receive: object, send: object) -> None:
        if scope["type"] != "http" or scope["path"] != "/token" or not active():
            return await app(scope, receive, send)  # type: ignore[operator]
        body, more = b"", True
        while more:
            message = await receive()  # type: ignore[operator]
            body, more = body + message.get("body", b""), message.get("more_body", False)
        form = parse_qs(body.decode())
        if form.get("grant_type") != [grant_type]:
            replayed = False

            async def replay() -> dict:
                nonlocal replayed
                if replayed:
                    return await receive()  # type: ignore[operator, no-any-return]
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}

            return await app(scope, replay, send)  # type: ignore[operator]
        status, said = answer(dict(scope["headers"]), form)
        await send({"type": "http.response.start", "status": status,  # type: ignore[operator]
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body",  # type: ignore[operator]
                    "body": json.dumps(said).encode()})

    return wrapped


def client_credentials(app: object, provider: ApprovingProvider, issuer: str) -> object:
    """``app`` with its ``/token`` taking the ``client_credentials`` grant first while the
    mode has clients for it; any other grant goes on to the SDK's handler, body replayed."""
    options = provider.options
    from urllib.parse import unquote

    import jwt

    def authenticated(headers: dict[bytes, bytes], form: dict[str, list[str]]) -> str | None:
        """The client the request proves to be, if any."""
        basic = headers.get(b"authorization", b"").decode()
        if basic.lower().startswith("basic "):
            client, _, secret = base64.b64decode(basic[6:]).decode().partition(":")
            client, secret = unquote(client), unquote(secret)
            return client if options.clients.get(client) == secret else None
        assertion = (form.get("client_assertion") or [""])[0]
        unverified = jwt.decode(assertion, options={"verify_signature": False}) if (
            assertion) else {}
        client = unverified.get("iss", "")
        if client not in options.keys:
            return None
        try:
            claims = jwt.decode(assertion, options.keys[client], algorithms=["ES256", "RS256"],
                                audience=[issuer, issuer + "/"])
        except jwt.InvalidTokenError:
            return None
        return client if claims.get("sub") == client else None

    def answer(headers: dict[bytes, bytes], form: dict[str, list[str]]) -> tuple[int, dict]:
        provider._note("client_credentials")
        client = authenticated(headers, form)
        if client is None:
            return 401, {"error": "invalid_client"}
        token = provider._issue(client, ["read"], (form.get("resource") or [None])[0])
        return 200, token.model_dump(mode="json", exclude_none=True)

    return granting(app, "client_credentials", answer,
                    lambda: bool(options.clients or options.keys))


def jwt_bearer(app: object, provider: ApprovingProvider, issuer: str) -> object:
    """``app`` with its ``/token`` taking the jwt-bearer grant first while the mode has an
    assertion key (its answer, or the refusal RFC 7523 3.1 names); any other grant goes on to
    ``app``, its body replayed."""
    options = provider.options
    from urllib.parse import unquote

    import jwt

    def answer(headers: dict[bytes, bytes], form: dict[str, list[str]]) -> tuple[int, dict]:
        basic = headers.get(b"authorization", b"").decode()
        if basic.lower().startswith("basic "):
            client, _, secret = base64.b64decode(basic[6:]).decode().partition(":")
            if options.clients.get(unquote(client)) != unquote(secret):
                return 401, {"error": "invalid_client"}
        try:
            claims = jwt.decode((form.get("assertion") or [""])[0], options.assertion_pem,
                                algorithms=["ES256", "RS256"], audience=[issuer, issuer + "/"])
        except jwt.InvalidTokenError as error:
            return 400, {"error": "invalid_grant", "error_description": str(error)}
        token = provider._issue(str(claims.get("sub", "")), ["read"],
                                (form.get("resource") or [None])[0])
        return 200, token.model_dump(mode="json", exclude_none=True)

    def noted(headers: dict[bytes, bytes], form: dict[str, list[str]]) -> tuple[int, dict]:
        provider._note("jwt-bearer")
        return answer(headers, form)

    return granting(app, "urn:ietf:params:oauth:grant-type:jwt-bearer", noted,
                    lambda: bool(options.assertion_pem))


class WriteScope:
    """ASGI middleware: ``tools/call`` of ``write_note`` needs a token with ``write``."""

    def __init__(self, app: object, provider: ApprovingProvider, metadata_url: str) -> None:
        self.app = app
        self.provider = provider
        self.metadata_url = metadata_url

    async def __call__(self, scope: dict, receive: object, send: object) -> None:
        import json

        from starlette.requests import Request
        from starlette.responses import JSONResponse

        if (scope["type"] != "http" or scope["method"] != "POST"
                or not self.provider.options.write_scope):
            return await self.app(scope, receive, send)  # type: ignore[operator]
        request = Request(scope, receive)  # type: ignore[arg-type]
        body = await request.body()
        token = request.headers.get("authorization", "").removeprefix("Bearer ")
        granted = self.provider.access.get(token)
        try:
            message = json.loads(body)
        except ValueError:
            message = None
        wants = (isinstance(message, dict) and message.get("method") == "tools/call"
                 and (message.get("params") or {}).get("name") == "write_note")
        if wants and granted is not None and "write" not in granted.scopes:
            challenge = (f'Bearer error="insufficient_scope", scope="write", '
                         f'resource_metadata="{self.metadata_url}"')
            refusal = JSONResponse({"error": "insufficient_scope"}, status_code=403,
                                   headers={"WWW-Authenticate": challenge})
            return await refusal(scope, receive, send)  # type: ignore[arg-type]
        sent = False

        async def replay() -> dict:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # type: ignore[operator]

        await self.app(scope, replay, send)  # type: ignore[operator]


class DpopGate:
    """ASGI middleware: the authorization server and the resource of RFC 9449 in front of
    the SDK's Bearer-only ones (a bound token is handed on as Bearer once its proof holds)."""

    NONCE = "fake-server-nonce"

    def __init__(self, app: object, base: str, options: argparse.Namespace) -> None:
        self.app, self.base, self.options = app, base, options
        self.bound: dict[str, str] = {}  # access or refresh token: its key's thumbprint
        self.jtis: set[str] = set()

    @property
    def need_nonce(self) -> bool:
        return bool(self.options.dpop_nonce)

    def _note(self, line: str) -> None:
        if self.options.record:
            with open(self.options.record, "a", encoding="utf-8") as file:
                file.write(line + "\n")

    def _checked(self, proof: str, method: str, path: str, token: str | None) -> dict:
        """The proof's claims and its key's thumbprint, or ValueError saying what is wrong."""
        import hashlib

        import jwt

        header = jwt.get_unverified_header(proof)
        if header.get("typ") != "dpop+jwt" or "d" in header.get("jwk", {"d": 1}):
            raise ValueError("typ or jwk")
        key = jwt.PyJWK(header["jwk"], algorithm=header.get("alg"))
        claims = jwt.decode(proof, key.key, algorithms=["ES256", "ES384", "ES512"])
        if (claims.get("htm"), claims.get("htu")) != (method, self.base + path):
            raise ValueError("htm or htu")
        if abs(time.time() - claims.get("iat", 0)) > 60 or claims.get("jti") in self.jtis:
            raise ValueError("iat or jti")
        digest = lambda data: base64.urlsafe_b64encode(  # noqa: E731
            hashlib.sha256(data.encode()).digest()).decode().rstrip("=")
        if token is not None and claims.get("ath") != digest(token):
            raise ValueError("ath")
        self.jtis.add(claims["jti"])
        public = {name: header["jwk"][name] for name in ("crv", "kty", "x", "y")}
        claims["jkt"] = digest(json.dumps(public, sort_keys=True, separators=(",", ":")))
        return claims

    async def _send_json(self, send: object, status: int, body: dict,
                         headers: dict[str, str]) -> None:
        raw = [(b"content-type", b"application/json"),
               *[(k.encode(), v.encode()) for k, v in headers.items()]]
        await send({"type": "http.response.start", "status": status,  # type: ignore[operator]
                    "headers": raw})
        await send({"type": "http.response.body",  # type: ignore[operator]
                    "body": json.dumps(body).encode()})

    async def __call__(self, scope: dict, receive: object, send: object) -> None:
        if scope["type"] != "http" or not (self.options.dpop or self.options.dpop_nonce):
            return await self.app(scope, receive, send)  # type: ignore[operator]
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        path, proof = scope["path"], headers.get("dpop")
        if path == "/.well-known/oauth-authorization-server":
            return await self.app(scope, receive, self._offering(send))  # type: ignore[operator]
        if path == "/token" and proof:
            return await self._token(scope, receive, send, proof)
        if path.rstrip("/") == "/mcp":
            scheme, _, token = headers.get("authorization", "").partition(" ")
            if token in self.bound and scheme.lower() != "dpop":
                challenge = 'DPoP error="invalid_token", error_description="bound"'
                return await self._send_json(send, 401, {"error": "invalid_token"},
                                             {"WWW-Authenticate": challenge})
            if scheme.lower() == "dpop":
                try:
                    claims = self._checked(proof or "", scope["method"], path, token)
                    if claims["jkt"] != self.bound.get(token):
                        raise ValueError("cnf")
                except Exception as error:
                    return await self._send_json(send, 401, {"error": "invalid_dpop_proof"}, {
                        "WWW-Authenticate": f'DPoP error="invalid_dpop_proof", '
                                            f'error_description="{type(error).__name__}"'})
                if self.need_nonce and claims.get("nonce") != self.NONCE:
                    self._note("nonce mcp")
                    return await self._send_json(send, 401, {"error": "use_dpop_nonce"}, {
                        "WWW-Authenticate": 'DPoP error="use_dpop_nonce"',
                        "DPoP-Nonce": self.NONCE})
                self._note("dpop mcp" + ("+nonce" if claims.get("nonce") else ""))
                scope = {**scope, "headers": [
                    (k, f"Bearer {token}".encode() if k.lower() == b"authorization" else v)
                    for k, v in scope["headers"]]}
        return await self.app(scope, receive, send)  # type: ignore[operator]

    def _offering(self, send: object) -> object:
        """``send`` with ``dpop_signing_alg_values_supported`` added to the metadata."""
        started: dict = {}

        async def offering(message: dict) -> None:
            if message["type"] == "http.response.start":
                started.update(message)
                return
            document = json.loads(message.get("body") or b"{}")
            document["dpop_signing_alg_values_supported"] = ["ES256"]
            body = json.dumps(document).encode()
            kept = [(k, v) for k, v in started.get("headers", []) if k != b"content-length"]
            await send({**started, "headers": [  # type: ignore[operator]
                *kept, (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})  # type: ignore[operator]

        return offering

    async def _token(self, scope: dict, receive: object, send: object, proof: str) -> None:
        from urllib.parse import parse_qs

        body, more = b"", True
        while more:
            message = await receive()  # type: ignore[operator]
            body, more = body + message.get("body", b""), message.get("more_body", False)
        form = parse_qs(body.decode())
        grant = (form.get("grant_type") or [""])[0]
        try:
            claims = self._checked(proof, "POST", "/token", None)
        except Exception as error:
            return await self._send_json(send, 400, {"error": "invalid_dpop_proof",
                                                     "error_description": str(error)}, {})
        if self.need_nonce and claims.get("nonce") != self.NONCE:
            self._note("nonce token")
            return await self._send_json(send, 400, {"error": "use_dpop_nonce"},
                                         {"DPoP-Nonce": self.NONCE})
        refresh = (form.get("refresh_token") or [""])[0]
        if grant == "refresh_token" and self.bound.get(refresh) != claims["jkt"]:
            return await self._send_json(send, 400, {"error": "invalid_grant"}, {})
        self._note(f"dpop {grant}" + ("+nonce" if claims.get("nonce") else ""))
        started: dict = {}

        async def replay() -> dict:
            return {"type": "http.request", "body": body, "more_body": False}

        async def binding(message: dict) -> None:
            if message["type"] == "http.response.start":
                started.update(message)
                return
            answer = json.loads(message.get("body") or b"{}")
            if started.get("status") == 200:
                answer["token_type"] = "DPoP"
                for kind in ("access_token", "refresh_token"):
                    if kind in answer:
                        self.bound[answer[kind]] = claims["jkt"]
            raw = json.dumps(answer).encode()
            kept = [(k, v) for k, v in started.get("headers", []) if k != b"content-length"]
            await send({**started, "headers": [  # type: ignore[operator]
                *kept, (b"content-length", str(len(raw)).encode())]})
            await send({"type": "http.response.body", "body": raw})  # type: ignore[operator]

        await self.app(scope, replay, binding)  # type: ignore[operator]


class Recording:
    """ASGI middleware: every request ``app`` receives, one JSON line in ``path``."""

    def __init__(self, app: object, name: str, options: argparse.Namespace) -> None:
        self.app, self.name, self.options = app, name, options

    async def __call__(self, scope: dict, receive: object, send: object) -> None:
        if scope["type"] != "http" or not self.options.auth_server_apart:
            return await self.app(scope, receive, send)  # type: ignore[operator]
        body, more = b"", True
        while more:
            message = await receive()  # type: ignore[operator]
            body, more = body + message.get("body", b""), message.get("more_body", False)
        with open(self.options.auth_server_apart, "a", encoding="utf-8") as file:
            file.write(json.dumps({
                "server": self.name, "method": scope["method"], "path": scope["path"],
                "query": scope["query_string"].decode("latin-1"),
                "body": body.decode("latin-1")}) + "\n")
        replayed = False

        async def replay() -> dict:
            nonlocal replayed
            if replayed:
                return await receive()  # type: ignore[operator, no-any-return]
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)  # type: ignore[operator]


def hanging_metadata() -> object:
    """``/.well-known/oauth-authorization-server`` that never answers."""
    from starlette.routing import Route

    async def metadata(request: object) -> None:
        await asyncio.Event().wait()

    return Route("/.well-known/oauth-authorization-server", metadata)


def free_socket() -> tuple[socket.socket, str]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    return listener, f"http://127.0.0.1:{listener.getsockname()[1]}"


class MetadataModes:
    """ASGI middleware: the authorization-server metadata the mode names (hanging, lying or
    redirected) in front of the SDK's own."""

    def __init__(self, app: object, options: argparse.Namespace, base: str) -> None:
        self.app, self.options = app, options
        self.routes = [("hang_metadata", hanging_metadata()),
                       ("plain_http_endpoints", lying_metadata(base)),
                       ("redirect_metadata", redirected_metadata(base))]

    async def __call__(self, scope: dict, receive: object, send: object) -> None:
        if scope["type"] == "http" and scope["path"] == "/.well-known/oauth-authorization-server":
            for option, route in self.routes:
                if getattr(self.options, option):
                    return await route.app(scope, receive, send)  # type: ignore[attr-defined]
        await self.app(scope, receive, send)  # type: ignore[operator]


def mode_tools(server: MCPServer, provider: ApprovingProvider) -> Callable[[], None]:
    """What keeps ``server``'s tools those of the mode: ``revoke`` with ``--revocable``,
    ``write_note`` with ``--write-scope``."""

    def revoke(refresh: bool = False) -> str:
        """End every login early: its access tokens (and its refresh tokens)."""
        provider.access.clear()
        if refresh:
            provider.refresh.clear()
        return "revoked"

    def write_note() -> str:
        """Needs the write scope."""
        return NOTED

    offered: set[str] = set()

    def follow() -> None:
        for option, tool in (("revocable", revoke), ("write_scope", write_note)):
            wanted = bool(getattr(provider.options, option))
            if wanted and tool.__name__ not in offered:
                server.add_tool(tool)
                offered.add(tool.__name__)
            elif not wanted and tool.__name__ in offered:
                server.remove_tool(tool.__name__)
                offered.discard(tool.__name__)

    follow()
    return follow


async def serve(options: argparse.Namespace) -> None:
    import uvicorn

    listener, base = free_socket()
    provider = ApprovingProvider(options)
    registration = ClientRegistrationOptions(
        enabled=True, valid_scopes=["read", "write"], default_scopes=["read"])
    if options.auth_server_apart:
        return await serve_apart(options, provider, registration, listener, base)
    server = MCPServer("protected", auth_server_provider=provider, auth=AuthSettings(
        issuer_url=base, resource_server_url=f"{base}/mcp", validate_token_resource=False,
        client_registration_options=registration, required_scopes=["read"]))

    @server.tool()
    def whoami() -> str:
        """Who answers."""
        return GREETING

    moved = mode_tools(server, provider)
    app = server.streamable_http_app()
    app.add_middleware(NoteHost, options=options)
    served: object = MetadataModes(app, options, base)
    served = WriteScope(served, provider, f"{base}/.well-known/oauth-protected-resource/mcp")
    served = client_credentials(served, provider, base)
    served = jwt_bearer(served, provider, base)
    served = DpopGate(served, base, options)
    config = uvicorn.Config(served, log_level="warning", lifespan="on")
    print(f"{base}/mcp", flush=True)
    await asyncio.gather(uvicorn.Server(config).serve(sockets=[listener]),
                         obey(provider, moved))


async def serve_apart(options: argparse.Namespace, provider: ApprovingProvider,
                      registration: ClientRegistrationOptions, listener: socket.socket,
                      base: str) -> None:
    """The MCP server at ``base`` and its authorization server on a port of its own."""
    import uvicorn
    from mcp.server.auth.provider import ProviderTokenVerifier
    from mcp.server.auth.routes import create_auth_routes
    from starlette.applications import Starlette

    issuer_listener, issuer = free_socket()
    settings = AuthSettings(issuer_url=issuer, resource_server_url=f"{base}/mcp",
                            validate_token_resource=False, required_scopes=["read"])
    server = MCPServer("protected", token_verifier=ProviderTokenVerifier(provider),
                       auth=settings)

    @server.tool()
    def whoami() -> str:
        """Who answers."""
        return GREETING

    routes = create_auth_routes(provider, issuer_url=settings.issuer_url,
                                client_registration_options=registration)
    if options.hang_metadata:
        routes.insert(0, hanging_metadata())  # type: ignore[arg-type]
    apps = [(Recording(server.streamable_http_app(), "mcp", options), listener),
            (Recording(Starlette(routes=routes), "auth", options), issuer_listener)]
    servers = [(uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on")), sock)
               for app, sock in apps]
    print(f"{base}/mcp", flush=True)
    await asyncio.gather(*(each.serve(sockets=[sock]) for each, sock in servers),
                         obey(provider, lambda: None))


def parsed(argv: list[str]) -> argparse.Namespace:
    """The mode ``argv`` names, with the clients' secrets and the keys' PEM text read."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--expires-in", type=int, default=3600)
    parser.add_argument("--refuse-refresh", action="store_true")
    parser.add_argument("--record")
    parser.add_argument("--plain-http-endpoints", action="store_true")
    parser.add_argument("--redirect-metadata", action="store_true")
    parser.add_argument("--client", action="append", default=[])
    parser.add_argument("--client-key", action="append", default=[])
    parser.add_argument("--revocable", action="store_true")
    parser.add_argument("--one-shot-tokens", action="store_true")
    parser.add_argument("--write-scope", action="store_true")
    parser.add_argument("--assertion-key")
    parser.add_argument("--dpop", action="store_true")
    parser.add_argument("--dpop-nonce", action="store_true")
    parser.add_argument("--auth-server-apart")
    parser.add_argument("--hang-metadata", action="store_true")
    options = parser.parse_args(argv)
    options.clients = dict(item.split(":", 1) for item in options.client)
    options.keys = {}
    for item in options.client_key:
        client, path = item.split(":", 1)
        with open(path, encoding="utf-8") as file:
            options.keys[client] = file.read()
    options.assertion_pem = None
    if options.assertion_key:
        with open(options.assertion_key, encoding="utf-8") as file:
            options.assertion_pem = file.read()
    return options


def main() -> None:
    asyncio.run(serve(parsed(sys.argv[1:])))


if __name__ == "__main__":
    sys.exit(main())

"""Logins by assertion (RFC 7523 section 2.1: a JWT presented as the grant), no browser.

Two kinds, both at the authorization server ``oauth.issuer`` names (configuration, never
discovery: the MCP server cannot send the JWT elsewhere):

- workload identity (SEP-1933): ``oauth.assertion_env`` names the variable holding a JWT the
  workload's platform issued (a CI job's OIDC token); it is the grant itself, no client
  secret;
- enterprise-managed authorization (SEP-990): ``oauth.id_token_env`` names the variable
  holding the user's ID token, which an RFC 8693 token exchange at the identity provider
  (``oauth.idp_token_endpoint``, as ``oauth.idp_client_id``) turns into an ID-JAG; that is
  the grant, with the client's secret, at the authorization server.

The SDK's ``IdentityAssertionOAuthProvider`` makes the grant; the token exchange (leg 1,
deployment-specific, not in the SDK) is here. Tokens these grants buy are kept in memory
only (SEP-1933 asks clients not to persist assertions or the tokens they buy): each
process presents its assertion afresh. A refusal is ``CredentialsRefused`` with the
server's ``error`` and ``error_description``; no assertion or token is ever quoted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from dsh_cli.core.limits import IDENTITY_ANSWER_BYTES as MAX_ANSWER
from dsh_cli.mcp_client.auth.login_required import CredentialsRefused, env_value

if TYPE_CHECKING:
    import httpx2
    from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

    from dsh_cli.mcp_client.config.servers import OAuthSettings

__all__ = ["ID_JAG", "MemoryLogin", "assertion_auth", "exchange_id_token"]

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
EXCHANGE_TIMEOUT = 30.0  # seconds for the whole token exchange, connect to last byte


class MemoryLogin:
    """The SDK's ``TokenStorage`` for one process: nothing reaches a file."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        return None


def assertion_auth(url: str, oauth: OAuthSettings,
                   environ: Mapping[str, str]) -> httpx2.Auth:
    """The jwt-bearer grant for ``oauth.assertion_env`` or ``oauth.id_token_env``."""
    from dsh_cli.mcp_client.auth.endpoint_check import endpoint_check

    assert oauth.issuer is not None
    scope = " ".join(oauth.scopes) or None
    key = oauth.own_login
    assert key in ("assertion_env", "id_token_env")
    # a JWT has no whitespace: a newline a file or a CI step left at its end goes
    value = env_value(environ, key, oauth.assertion_env or oauth.id_token_env).strip()
    provider = type("CheckedAssertionGrant", (endpoint_check(credentials=True),
                                              _grant_class()), {})
    if oauth.assertion_env:
        async def workload(audience: str, resource: str) -> str:
            return value

        return provider(url, MemoryLogin(), oauth.client_id, None, oauth.issuer,  # type: ignore[no-any-return]
                        workload, scope=scope)
    assert oauth.client_id and oauth.client_secret_env and oauth.idp_token_endpoint
    secret = env_value(environ, "client_secret_env", oauth.client_secret_env)
    endpoint, idp_client = oauth.idp_token_endpoint, oauth.idp_client_id

    async def id_jag(audience: str, resource: str) -> str:
        return await exchange_id_token(endpoint, value, client_id=idp_client,
                                       audience=audience, resource=resource, scope=scope)

    # RFC 6749 2.3.1: every authorization server takes client_secret_basic for a secret
    return provider(url, MemoryLogin(), oauth.client_id, secret,  # type: ignore[no-any-return]
                    oauth.issuer, id_jag, scope=scope,
                    token_endpoint_auth_method="client_secret_basic")


def _grant_class() -> type[Any]:
    """The SDK's provider, taught the public client of workload identity (no secret: the
    JWT is the credential), which it refuses to build."""
    from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider
    from mcp.shared.auth import JWT_BEARER_GRANT_TYPE

    class AssertionGrant(IdentityAssertionOAuthProvider):
        def __init__(self, url: str, storage: MemoryLogin, client_id: str | None,
                     secret: str | None, issuer: str, assertion: Any, **options: Any) -> None:
            # the SDK wants a client ID and a secret; a public client sends neither unless
            # given (_build_token_request): SEP-1933's workload needs no registration
            super().__init__(url, storage, client_id or "unsent", secret or "unsent", issuer,
                             assertion, **options)
            self.public = secret is None
            self.public_id = client_id

        def _build_token_request(self, scope: str | None, assertion: str) -> Any:
            if not self.public:
                return super()._build_token_request(scope, assertion)
            import httpx2

            assert self._token_endpoint is not None
            data = {"grant_type": JWT_BEARER_GRANT_TYPE, "assertion": assertion,
                    "resource": self._resource}
            if self.public_id:
                data["client_id"] = self.public_id
            if scope:
                data["scope"] = scope
            return httpx2.Request("POST", self._token_endpoint, data=data, headers={
                "Content-Type": "application/x-www-form-urlencoded"})

    return AssertionGrant


async def exchange_id_token(endpoint: str, id_token: str, *, client_id: str | None,
                            audience: str, resource: str, scope: str | None = None) -> str:
    """SEP-990 leg 1: the ID-JAG the identity provider gives for ``id_token`` (RFC 8693),
    for the authorization server ``audience`` and the MCP server ``resource``."""
    import anyio
    import httpx2

    from dsh_cli.mcp_client.auth.endpoint_check import check_endpoint

    check_endpoint(endpoint)
    form = {"grant_type": TOKEN_EXCHANGE, "requested_token_type": ID_JAG,
            "subject_token": id_token, "subject_token_type": ID_TOKEN,
            "audience": audience, "resource": resource}
    if client_id:
        form["client_id"] = client_id
    if scope:
        form["scope"] = scope
    where = endpoint.split("?")[0]
    try:
        # httpx2's timeout bounds each read, not a peer that trickles: the whole is bounded
        # here; no redirect followed: the ID token goes to the configured endpoint or nowhere
        with anyio.fail_after(EXCHANGE_TIMEOUT):
            async with (httpx2.AsyncClient(timeout=EXCHANGE_TIMEOUT,
                                           follow_redirects=False) as http,
                        http.stream("POST", endpoint, data=form,
                                    headers={"Accept": "application/json"}) as response):
                body = await _bounded(response)
    except TimeoutError:
        raise CredentialsRefused(f"the identity provider at {where} did not answer within "
                                 f"{EXCHANGE_TIMEOUT:g} s") from None
    except httpx2.HTTPError as error:
        raise CredentialsRefused(f"the identity provider at {where} did not answer: "
                                 f"{type(error).__name__}") from None
    return _id_jag(response.status_code, body, where)


async def _bounded(response: Any) -> bytes:
    body = b""
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > MAX_ANSWER:
            raise CredentialsRefused(f"the identity provider's answer is over {MAX_ANSWER} "
                                     "bytes: refused")
    return body


def _id_jag(status: int, body: bytes, where: str) -> str:
    """The ID-JAG of the identity provider's answer, or its refusal in one line."""
    import json

    from dsh_cli.core.sanitize import one_line

    try:
        answer = json.loads(body)
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        raise CredentialsRefused(f"the identity provider at {where} answered {status} "
                                 "with no JSON object")
    if status != 200:
        said = " ".join(str(answer.get(key))[:200] for key in ("error", "error_description")
                        if isinstance(answer.get(key), str))
        raise CredentialsRefused(f"the identity provider refused the ID token ({status}): "
                                 f"{one_line(said, 500) or 'no reason given'}")
    token, kind = answer.get("access_token"), answer.get("issued_token_type")
    if kind != ID_JAG or not isinstance(token, str) or token.count(".") != 2:
        raise CredentialsRefused("the identity provider's answer holds no ID-JAG "
                                 f"(issued_token_type {one_line(str(kind), 80)})")
    return token

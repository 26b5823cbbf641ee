"""Where a credential may travel: https, or plain http on this machine; every request of
the SDK's login flows is checked before it is sent."""

from __future__ import annotations

from typing import Any

from dsh_cli.mcp_client.auth.login_required import CredentialsRefused

__all__ = ["UnsafeEndpoint", "check_endpoint", "endpoint_check", "travels_safely"]


class UnsafeEndpoint(Exception):
    """An authorization endpoint over plain http off loopback: a token would travel bare."""


def travels_safely(url: str) -> bool:
    """Whether a credential may travel to ``url``: https, or plain http on this machine."""
    from dsh_cli.core.urls import parse_endpoint

    parsed = parse_endpoint(url)
    return parsed is not None and parsed.keeps_secrets


def check_endpoint(url: str) -> None:
    """Refuse an OAuth endpoint over http:// unless it is on this machine."""
    from dsh_cli.core.urls import masked

    if not travels_safely(url):
        raise UnsafeEndpoint(f"the authorization server's endpoint {masked(url.split('?')[0])} "
                             "is not https (plain http is only for 127.0.0.1): refused")


def endpoint_check(credentials: bool = False) -> type[Any]:
    """A mixin for the SDK's providers: every request the flow makes is checked first;
    with ``credentials`` (a grant of the entry's own: a secret, a key, an assertion), a
    failed flow is ``CredentialsRefused`` with the SDK's reason, not a login to run."""
    from mcp.client.auth import OAuthFlowError

    from dsh_cli.core.urls import masked

    class EndpointCheck:
        # the flow's own request still unanswered (metadata, registration, token): what a
        # login that timed out names as the server that did not answer
        waiting_on: str | None = None

        async def async_auth_flow(self, request: Any) -> Any:
            flow = super().async_auth_flow(request)  # type: ignore[misc]
            try:
                outgoing = await flow.__anext__()
                while True:
                    if outgoing is not request:
                        check_endpoint(str(outgoing.url))
                        self.waiting_on = masked(str(outgoing.url).split("?")[0])
                    response = yield outgoing
                    self.waiting_on = None
                    try:
                        outgoing = await flow.asend(response)
                    except StopAsyncIteration:
                        return
            except OAuthFlowError as error:
                if not credentials:
                    raise
                raise CredentialsRefused(" ".join(str(error).split())[:300]) from None
            finally:  # closed here, in this task: it holds the SDK's lock
                await flow.aclose()

    return EndpointCheck

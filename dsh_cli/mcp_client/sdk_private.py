"""The MCP SDK's private names dsh overrides or reads, in one list a test checks.

dsh subclasses the SDK's OAuth providers to keep a token's expiry and endpoint across
processes (a refresh goes where the tokens came from), bind DPoP proofs, check endpoints
before credentials travel and answer a refusal the stored login can still answer
(``auth.py``, ``assertion.py``); it builds the SDK's own HTTP client (``connection.py``).
``dsh mcp`` reaches a session's connection to close its tickets when the session ends
(``mcp_server/owned/owners.py``'s ``on_session_end``; the owner itself is the public header).
None of these is public API, so ``mcp`` is pinned below its next minor
and ``tests/mcp_client/test_sdk_private.py`` fails the day one of them is gone.
"""

from __future__ import annotations

__all__ = ["PRIVATE", "missing"]

# (module, class or "" for the module itself, attribute)
PRIVATE: tuple[tuple[str, str, str], ...] = (
    ("mcp.client.auth", "OAuthClientProvider", "_initialize"),
    ("mcp.client.auth", "OAuthClientProvider", "_initialized"),
    ("mcp.client.auth", "OAuthClientProvider", "_auth_flow"),
    ("mcp.client.auth", "OAuthClientProvider", "_add_auth_header"),
    ("mcp.client.auth", "OAuthClientProvider", "_exchange_token_authorization_code"),
    ("mcp.client.auth", "OAuthClientProvider", "_handle_token_response"),
    ("mcp.client.auth", "OAuthClientProvider", "_handle_refresh_response"),
    ("mcp.client.auth", "OAuthClientProvider", "_refresh_token"),
    ("mcp.client.auth.extensions.identity_assertion", "IdentityAssertionOAuthProvider",
     "_build_token_request"),
    ("mcp.client.auth.extensions.identity_assertion", "IdentityAssertionOAuthProvider",
     "_token_endpoint"),
    ("mcp.client.auth.extensions.identity_assertion", "IdentityAssertionOAuthProvider",
     "_resource"),
    ("mcp.shared._httpx_utils", "", "create_mcp_http_client"),
    ("mcp.server.session", "ServerSession", "_connection"),
)


def missing() -> list[str]:
    """Every listed name the installed SDK no longer has (an instance attribute counts when
    ``__init__`` or the class body assigns it)."""
    import importlib
    import inspect

    gone = []
    for module_name, class_name, attribute in PRIVATE:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            gone.append(f"{module_name} (the module)")
            continue
        owner = getattr(module, class_name, None) if class_name else module
        if owner is None:
            gone.append(f"{module_name}.{class_name}")
            continue
        if hasattr(owner, attribute):
            continue
        source = inspect.getsource(owner) if inspect.isclass(owner) else ""
        if f"self.{attribute} =" not in source and f"self.{attribute}:" not in source:
            gone.append(f"{module_name}.{class_name}.{attribute}".replace("..", "."))
    return gone

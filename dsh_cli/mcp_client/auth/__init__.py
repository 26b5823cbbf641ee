"""The MCP client's logins: OAuth providers, endpoint checks, grants, DPoP, tokens.

    oauth.py           the SDK's OAuth providers for remote servers, as dsh presents them
    assertion.py       logins by assertion (RFC 7523: a JWT as the grant), no browser
    dpop.py            DPoP (RFC 9449): a login's key pair, its proofs, the servers' nonces
    endpoint_check.py  where a credential may travel: https, or plain http on this machine
    tokens.py          the logins kept: ``mcp-tokens.json`` of the config directory
    login_required.py  the errors a connection reports as "log in first"
"""

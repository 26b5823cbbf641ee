"""The MCP client's logins: OAuth providers, endpoint checks, grants, DPoP, tokens."""

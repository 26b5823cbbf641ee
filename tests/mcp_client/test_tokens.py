"""``tokens``: the token file, as the SDK's token storage writes it."""

from __future__ import annotations

import asyncio
import json

from mcp.shared.auth import OAuthToken

from dsh_cli.mcp_client.auth.tokens import StoredLogin, TokenFile


def test_new_tokens_and_their_expiry_are_one_write(tmp_path, monkeypatch):
    # another process reading between two writes would take the new tokens as expired
    file = TokenFile(tmp_path / "mcp-tokens.json")
    written = []
    save = file._write
    monkeypatch.setattr(file, "_write", lambda document: (written.append(
        json.loads(json.dumps(document))), save(document)))
    login = StoredLogin(file, "https://mcp.example/mcp")
    asyncio.run(login.set_tokens(OAuthToken(access_token="a", expires_in=60)))
    [document] = written
    entry = document["https://mcp.example/mcp"]
    assert entry["tokens"]["access_token"] == "a" and entry["expires_at"] > 0
    assert file.entry("https://mcp.example/mcp") == entry

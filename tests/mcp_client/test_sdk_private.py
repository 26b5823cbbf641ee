"""The SDK's private names dsh relies on still exist, and the list names only what dsh uses."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh_cli.mcp_client import sdk_private
from dsh_cli.mcp_client.sdk_private import PRIVATE, missing

SOURCE = Path(sdk_private.__file__).resolve().parents[1]


def test_every_private_name_dsh_relies_on_is_in_the_installed_sdk():
    assert missing() == []


def test_a_name_the_sdk_lost_is_reported(monkeypatch):
    monkeypatch.setattr(sdk_private, "PRIVATE", (
        ("mcp.client.auth", "OAuthClientProvider", "_gone_in_the_next_minor"),
        ("mcp.shared._no_such_module", "", "anything"),
        ("mcp.client.auth", "NoSuchClass", "_x")))
    assert sdk_private.missing() == [
        "mcp.client.auth.OAuthClientProvider._gone_in_the_next_minor",
        "mcp.shared._no_such_module (the module)",
        "mcp.client.auth.NoSuchClass"]


@pytest.mark.parametrize("entry", PRIVATE, ids=lambda entry: entry[2])
def test_every_listed_name_is_used_by_dsh(entry):
    _, _, attribute = entry
    users = [path for path in SOURCE.rglob("*.py")
             if path.name != "sdk_private.py" and attribute in path.read_text(encoding="utf-8")]
    assert users, f"{attribute} is listed but no dsh module uses it: drop it from PRIVATE"

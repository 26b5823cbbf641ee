"""The latest stored session's messages, as ``dsh sessions show --json`` prints them.

Read in the test's own process: a test of what reached the model starts no two more ``dsh``
children (``sessions list``, then ``show``) per read; ``dsh sessions`` has its own tests.
"""

from __future__ import annotations

from typing import Any

__all__ = ["latest_messages", "latest_tool_results"]


def latest_messages() -> list[dict[str, Any]]:
    """Every message of the most recently updated session in this test's ``DSH_HOME``."""
    from dsh_cli.store import SessionStore

    with SessionStore.open() as store:
        latest = store.list_sessions()[0].id
        messages: list[dict[str, Any]] = store.load_session(latest).to_json()["messages"]
    return messages


def latest_tool_results() -> list[dict[str, Any]]:
    """What the model received for each tool call of the latest stored session."""
    return [message for message in latest_messages() if message["role"] == "tool"]

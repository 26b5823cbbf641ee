"""Permission requests in the transcript: one compact line when each settles."""

from __future__ import annotations

import io

from dsh_cli.core.events import PermissionRequested, PermissionResolved
from dsh_cli.transcript import TranscriptRenderer


def requested(rpc_id: str, tool: str) -> PermissionRequested:
    return PermissionRequested(rpc_id=rpc_id, session_id=None, call_id="c1", tool=tool,
                               server="notes", arguments={}, hints={})


def rendered(*events) -> str:
    stream = io.StringIO()
    renderer = TranscriptRenderer(stream, color=False)
    for event in events:
        renderer(event)
    return stream.getvalue()


def test_allowed_denied_and_unsettled_requests_each_leave_one_line():
    text = rendered(
        requested("p1", "mcp__notes__write_note"),
        PermissionResolved("p1", "decided", "allow_session"),
        requested("p2", "mcp__git__git_reset"),
        PermissionResolved("p2", "decided", "deny", "not\x1b[2J now"),
        requested("p3", "mcp__git__git_commit"),
        PermissionResolved("p3", "timeout"),
    )
    assert text.splitlines() == [
        "✓ mcp__notes__write_note allowed for this session",
        "✗ mcp__git__git_reset denied: not now",
        "✗ mcp__git__git_commit timeout",
    ]


def test_a_requested_event_alone_draws_nothing_and_tool_names_are_sanitised():
    assert rendered(requested("p1", "mcp__x")) == ""
    text = rendered(requested("p1", "mcp__\x1b]0;evil\x07x"),
                    PermissionResolved("p1", "decided", "allow_once"))
    assert "\x1b" not in text and "\x07" not in text and "allowed once" in text

"""A server's URL-mode request with a URL made to mislead, through a real ``dsh run --jsonl``:
the consent names the host a browser opens, flags look-alike hosts, and Open hands over
exactly the URL shown."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from harness.dsh_under_test import DSH
from mcp_client.raw_runs import run_raw_tool

CEILING = 60


def consent_through_dsh(tmp_path: Path, server: dict, url: str, label: str = "Open"
                        ) -> tuple[dict, list[dict], str]:
    """The consent question ``dsh run --jsonl`` shows for ``url`` (asked by ``server``, the
    entry of a raw form server), every event, and stderr, after a controller answers
    ``label``."""
    servers = tmp_path / "servers.json"
    servers.write_text(json.dumps({"mcpServers": {"raw": server}}))
    script = tmp_path / "model.json"
    script.write_text(json.dumps({"turns": [
        {"tool_calls": [{"name": "mcp__raw__open", "arguments": {"url": url}}]},
        {"content": "done"}]}))
    environ = {key: value for key, value in os.environ.items()
               if key not in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER")}  # Open prints
    process = subprocess.Popen([DSH, "run", "--jsonl", "--model", f"script:{script}",
                                "--mcp-config", str(servers), "--allow", "mcp__raw", "go"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=environ)
    assert process.stdin is not None and process.stdout is not None
    events: list[dict] = []
    try:
        for line in process.stdout:
            event = json.loads(line)
            events.append(event)
            if event["type"] == "question/requested":
                process.stdin.write(json.dumps({
                    "type": "question/answer", "rpc_id": event["rpc_id"],
                    "session_id": event["session_id"],
                    "answers": [{"id": "open", "selected": [label]}]}) + "\n")
                process.stdin.flush()
            elif event["type"] == "turn/completed":
                process.stdin.close()
        assert process.wait(CEILING) == 0
        stderr = process.stderr.read() if process.stderr else ""
    finally:
        if process.poll() is None:
            process.kill()
    assert "Traceback" not in stderr
    [asked] = [event for event in events if event["type"] == "question/requested"]
    [question] = asked["questions"]
    return question, events, stderr


def server_got(events: list[dict]) -> dict:
    [result] = [event for event in events if event["type"] == "tool/result"]
    assert result["error"] is None, result
    return json.loads(result["content"])["u"]


@pytest.mark.parametrize(("url", "shown", "host", "flags"), [
    # urllib read the host after the "@"; a browser reads the backslash as "/"
    ("https://evil.example\\@accounts.google.com/", "https://evil.example/@accounts.google.com/",
     "evil.example", ["the server wrote '\\', which a browser reads as '/'"]),
    ("https://accounts.google.com@evil.example/", "https://accounts.google.com@evil.example/",
     "evil.example", ["the text before '@' ('accounts.google.com') is a user name"]),
    # a raw Cyrillic "а": no warning before, as the host was never punycode on the wire
    ("https://p\u0430ypal.com/login", "https://xn--pypal-4ve.com/login", "xn--pypal-4ve.com",
     ["it reads as 'p\u0430ypal.com'", "'p\u0430ypal' mixes scripts (Cyrillic, Latin)",
      "'\u0430' (Cyrillic) looks like Latin 'a'"]),
    # a whole label in Cyrillic mixes nothing, but its letters only look Latin
    ("https://\u0430\u0440\u0440\u04cf\u0435.com/", "https://xn--80ak6aa92e.com/",
     "xn--80ak6aa92e.com", ["it reads as '\u0430\u0440\u0440\u04cf\u0435.com'",
                            "'\u0440' (Cyrillic) looks like Latin 'p'"]),
    # a tab and a zero-width space: dropped by the browser, so dropped from what is shown
    ("https://accou\tnts.goo\u200bgle.com/\u202eexe", "https://accounts.google.com/%E2%80%AEexe",
     "accounts.google.com", []),
], ids=["backslash-at", "userinfo", "mixed-script", "whole-script", "hidden-characters"])
def test_the_consent_shows_the_host_a_browser_opens_and_open_hands_over_that_url(
        tmp_path, raw_form_http, url, shown, host, flags):
    question, events, stderr = consent_through_dsh(tmp_path, raw_form_http, url)
    assert question["question"] == f"Open {host} in your browser?"
    assert f"URL:  {shown}\nhost: >>> {host} <<<" in question["detail"]
    for flag in flags:
        assert flag in question["warning"] and flag in question["detail"]
    if not flags:
        assert question.get("warning") is None
    assert stderr.splitlines().count(f"dsh: open this URL in a browser: {shown}") == 1
    assert server_got(events)["action"] == "accept"


def test_a_url_no_browser_would_open_is_refused_before_anything_is_shown(tmp_path,
                                                                          raw_form_http):
    for url in ("javascript:alert(1)", "https://", "https://a.example/" + "x" * 3000):
        result, events = run_raw_tool(tmp_path, "open", {"url": url}, raw_form_http)
        assert result.returncode == 0, result.stderr
        assert not [event for event in events if event["type"] == "question/requested"]
        [outcome] = [event for event in events if event["type"] == "tool/result"]
        assert "dsh cannot ask this form: url: " in outcome["error"]["message"], outcome
        assert "open this URL" not in result.stderr

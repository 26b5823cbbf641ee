"""A server's URL-mode request with a URL made to mislead, through a real ``dsh run --jsonl``:
the consent names the host a browser opens, flags look-alike hosts, and Open hands over
exactly the URL shown. One run is asked every URL of the consent cases in turn
(``consents``): each test reads its own call's question and result."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from harness.dsh_under_test import DSH
from mcp_client.raw_runs import by_call, run_raw_tools

CEILING = 60


def consents_through_dsh(tmp_path: Path, server: dict, urls: list[str], label: str = "Open"
                         ) -> tuple[list[tuple[dict, list[dict]]], str]:
    """The consent question ``dsh run --jsonl`` shows for each of ``urls`` (asked in turn by
    ``server``, the entry of a raw form server) with the events of its call, and stderr,
    after a controller answers ``label`` to each."""
    servers = tmp_path / "servers.json"
    servers.write_text(json.dumps({"mcpServers": {"raw": server}}))
    script = tmp_path / "model.json"
    script.write_text(json.dumps({"turns": [
        *({"tool_calls": [{"name": "mcp__raw__open", "arguments": {"url": url}}]}
          for url in urls), {"content": "done"}]}))
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
    shown = []
    for call in by_call(events, len(urls)):
        [asked] = [event for event in call if event["type"] == "question/requested"]
        [question] = asked["questions"]
        shown.append((question, call))
    return shown, stderr


def server_got(events: list[dict]) -> dict:
    """What the server was answered, from the ``tool/result`` among a call's ``events``."""
    [result] = [event for event in events if event["type"] == "tool/result"]
    assert result["error"] is None, result
    return json.loads(result["content"])["u"]


CONSENTS = [
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
]


@pytest.fixture(scope="module")
def consents(tmp_path_factory, raw_form_http) -> tuple[dict[str, tuple[dict, list[dict]]], str]:
    """Each consent case's URL: its question and its call's events in one run that asks
    them all in turn, every one answered Open; and that run's stderr."""
    urls = [url for url, *_ in CONSENTS]
    shown, stderr = consents_through_dsh(tmp_path_factory.mktemp("consents"), raw_form_http,
                                         urls)
    return dict(zip(urls, shown, strict=True)), stderr


@pytest.mark.parametrize(("url", "shown", "host", "flags"), CONSENTS,
                         ids=["backslash-at", "userinfo", "mixed-script", "whole-script",
                              "hidden-characters"])
def test_the_consent_shows_the_host_a_browser_opens_and_open_hands_over_that_url(
        consents, url, shown, host, flags):
    by_url, stderr = consents
    question, events = by_url[url]
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
    urls = ["javascript:alert(1)", "https://", "https://a.example/" + "x" * 3000]
    result, events = run_raw_tools(tmp_path, [("open", {"url": url}) for url in urls],
                                   raw_form_http)  # one run calls each in turn
    assert result.returncode == 0, result.stderr
    assert "open this URL" not in result.stderr
    assert events[-1]["type"] == "turn/completed"
    for call in by_call(events, len(urls)):
        assert not [event for event in call if event["type"] == "question/requested"]
        [outcome] = [event for event in call if event["type"] == "tool/result"]
        assert "dsh cannot ask this form: url: " in outcome["error"]["message"], outcome

"""The base URL as the CLI reads it: parsed once (``core/urls.py``), a bad one one
``CONFIG_ERROR`` line naming where it was given, its user information never shown."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from fakes.openai_server import Reply
from harness.dsh_under_test import DSH

SECRET = "s3cret-userinfo-0123"


def dsh(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([DSH, *args], capture_output=True, text=True, timeout=30,
                          env={**os.environ, "DSH_API_KEY": "sk-test", **(env or {})},
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("url", ["http://[::1/v1", "ftp://127.0.0.1/v1", "http:///v1",
                                 "http://127.0.0.1:99999/v1", "127.0.0.1:9/v1"])
def test_a_bad_base_url_flag_is_one_config_line_naming_the_flag(dsh_home, url):
    result = dsh("run", "--base-url", url, "-m", "some-model", "hi")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == (f"dsh: CONFIG_ERROR: --base-url: {url!r} is not an http(s) URL "
                             "with a host\n")


def test_a_bad_base_url_in_the_environment_or_the_file_names_it_and_masks_the_user(dsh_home):
    result = dsh("run", "-m", "some-model", "hi",
                 env={"DSH_BASE_URL": f"http://me:{SECRET}@[::1/v1"})
    assert result.stderr == ("dsh: CONFIG_ERROR: DSH_BASE_URL: 'http://***@[::1/v1' is not "
                             "an http(s) URL with a host\n")
    config = Path(dsh_home) / "config.toml"
    config.write_text('base_url = "http://[::1/v1"\n', encoding="utf-8")
    result = dsh("run", "-m", "some-model", "hi")
    assert result.returncode == 2
    assert result.stderr == (f"dsh: CONFIG_ERROR: {config}: base_url: 'http://[::1/v1' is "
                             "not an http(s) URL with a host\n")


def test_user_information_is_never_printed_nor_stored(dsh_home):
    url = f"http://user:{SECRET}@127.0.0.1:9/v1"  # nothing listens on port 9
    plain = dsh("run", "--base-url", url, "-m", "some-model", "hi")
    assert plain.returncode == 1
    assert plain.stderr.startswith("dsh: MODEL_CONNECTION: cannot reach ***@127.0.0.1:9: ")
    streamed = dsh("run", "--base-url", url, "-m", "some-model", "--jsonl", "hi")
    assert streamed.returncode == 1
    assert any(json.loads(line).get("type") == "error" for line in streamed.stdout.splitlines())
    for result in (plain, streamed):
        assert SECRET not in result.stdout + result.stderr and "user:" not in result.stderr
    stored = [path for path in Path(dsh_home).rglob("*") if path.is_file()]
    assert any(path.name == "sessions.db" for path in stored)
    for path in stored:  # the store, its journal, any log
        assert SECRET.encode() not in path.read_bytes(), path


def test_a_server_error_at_a_url_with_user_information_masks_it(server, dsh_home):
    server.enqueue(Reply.error(500, "boom"))
    url = server.base_url.replace("http://", f"http://user:{SECRET}@")
    result = dsh("run", "--base-url", url, "-m", "some-model", "hi")
    assert result.returncode == 1
    assert f"***@127.0.0.1:{server.port}" in result.stderr
    assert SECRET not in result.stderr + result.stdout


def test_a_bad_oauth_endpoint_is_one_config_line_naming_the_key_and_quoting_nothing(
        tmp_path, dsh_home):
    servers = tmp_path / "servers.json"
    servers.write_text(json.dumps({"mcpServers": {"prot": {
        "type": "http", "url": "http://127.0.0.1:9/mcp",
        "oauth": {"client_id": "ci", "client_secret_env": "X",
                  "issuer": f"https://me:{SECRET}@[::1/"}}}}))
    result = dsh("mcp", "list", "--mcp-config", str(servers))
    assert result.stderr == (f"dsh: CONFIG_ERROR: {servers}: server 'prot': oauth.issuer "
                             "must be an https URL (http only on 127.0.0.1 or localhost)\n")


def test_a_bad_mcp_server_url_is_one_config_line_not_a_server_that_failed(tmp_path, dsh_home):
    servers = tmp_path / "servers.json"
    servers.write_text(json.dumps({"mcpServers": {"prot": {
        "type": "http", "url": f"http://me:{SECRET}@[::1/mcp"}}}))
    result = dsh("mcp", "list", "--mcp-config", str(servers))
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == (f"dsh: CONFIG_ERROR: {servers}: server 'prot': url: "
                             "'http://***@[::1/mcp' is not an http(s) URL with a host\n")

"""Remote servers that need a login: ``dsh mcp login/logout`` against a real OAuth server.

The server is ``tests/fakes/oauth_mcp_server.py`` (the SDK's own server-side authorization,
a real process on 127.0.0.1) whose authorization endpoint approves at once; the test plays
the browser: it reads the URL ``dsh mcp login`` prints and follows its redirect to dsh's
callback. Every dsh is a real subprocess.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import time
from pathlib import Path

import httpx2
import pytest
from harness.dsh_under_test import DSH
from harness.oauth_login import (
    CEILING,
    GREETING,
    NOTED,
    age_login,
    dsh,
    in_mode,
    listed,
    log_in,
    running_protected_server,
    servers_file,
)

NEEDS_LOGIN = "MCP_AUTH_REQUIRED: prot needs a login: run dsh mcp login prot"


def stored_token(home: Path) -> str:
    tokens = home / "mcp-tokens.json"
    assert stat.S_IMODE(os.stat(tokens).st_mode) == 0o600
    [entry] = json.loads(tokens.read_text()).values()
    return entry["tokens"]["access_token"]


def test_a_server_that_answers_401_is_named_with_the_login_to_run(tmp_path, oauth_server):
    url = oauth_server
    servers = servers_file(tmp_path, url)
    server = listed(servers)
    shown = dsh("mcp", "list", "--mcp-config", servers)
    assert (server["started"], server["code"]) == (False, "MCP_AUTH_REQUIRED")
    assert server["error"] == "prot needs a login: run dsh mcp login prot"
    assert f"  {NEEDS_LOGIN}\n" in shown.stdout


def test_login_stores_the_token_0600_and_the_session_uses_it_nowhere_else(tmp_path, dsh_home,
                                                                          oauth_server):
    script = tmp_path / "model.json"
    script.write_text(json.dumps({"turns": [
        {"tool_calls": [{"name": "mcp__prot__whoami", "arguments": {}}]},
        {"content": "done"}]}))
    url = oauth_server
    servers = servers_file(tmp_path, url)
    login = log_in(servers)
    assert login.returncode == 0, login.stderr
    assert login.stderr.endswith("dsh: prot: logged in\n")
    token = stored_token(dsh_home)
    server = listed(servers)
    assert server["started"] and [t["name"] for t in server["tools"]] == [
        "mcp__prot__whoami"]
    run = subprocess.run([DSH, "run", "--model", f"script:{script}", "--mcp-config",
                          servers, "--yes", "--jsonl", "go"], capture_output=True,
                         text=True, timeout=CEILING, stdin=subprocess.DEVNULL)
    assert run.returncode == 0, run.stderr
    assert GREETING in run.stdout
    # the token is in its file and nowhere else: not the session store, the log, --json
    assert token not in run.stdout + run.stderr + login.stderr + json.dumps(server)
    others = [path for path in dsh_home.rglob("*")
              if path.is_file() and path.name != "mcp-tokens.json"]
    assert any(path.name == "sessions.db" for path in others)
    for path in others:
        assert token.encode() not in path.read_bytes(), path


def test_logout_forgets_the_login(tmp_path, dsh_home, oauth_server):
    url = oauth_server
    servers = servers_file(tmp_path, url)
    assert log_in(servers).returncode == 0
    out = dsh("mcp", "logout", "prot", "--mcp-config", servers)
    assert out.stderr == "dsh: prot: logged out\n"
    assert json.loads((dsh_home / "mcp-tokens.json").read_text()) == {}
    assert listed(servers)["code"] == "MCP_AUTH_REQUIRED"


def test_an_expired_token_is_refreshed_and_a_revoked_refresh_asks_for_login(tmp_path,
                                                                             dsh_home,
                                                                             protected_mode):
    record = tmp_path / "grants.txt"
    with protected_mode("--record", str(record)) as running:
        servers = servers_file(tmp_path, running.url)
        assert log_in(servers).returncode == 0
        age_login(running, dsh_home)  # the access token is expired; the refresh token is good
        assert listed(servers)["started"]
    assert record.read_text().split() == ["authorization_code", "refresh_token"]
    with protected_mode("--refuse-refresh") as running:
        servers = servers_file(tmp_path, running.url)
        assert log_in(servers).returncode == 0
        age_login(running, dsh_home)
        server = listed(servers)
    assert (server["started"], server["code"]) == (False, "MCP_AUTH_REQUIRED")


def test_a_browser_that_never_comes_back_is_a_timeout_not_a_hang(tmp_path, dsh_home, oauth_server):
    url = oauth_server
    servers = servers_file(tmp_path, url)
    started = time.monotonic()
    login = log_in(servers, follow=False, timeout="1")
    assert login.returncode == 1
    assert login.stderr.splitlines()[-1] == (
        "dsh: MCP_LOGIN_FAILED: prot: no answer from the browser within 1 s "
        "(run dsh mcp login prot again)")
    assert time.monotonic() - started < 20
    [entry] = json.loads((dsh_home / "mcp-tokens.json").read_text()).values()
    assert entry["client"]["client_id"] and "tokens" not in entry  # registered, no token


@pytest.mark.parametrize("name", ["nope", "local"])
def test_login_to_an_unknown_or_stdio_server_is_one_line(tmp_path, name):
    servers = tmp_path / "servers.json"
    servers.write_text(json.dumps({"mcpServers": {"local": {"command": "true"}}}))
    out = dsh("mcp", "login", name, "--mcp-config", str(servers))
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    assert out.stderr.startswith("dsh: USAGE: ")


@pytest.mark.parametrize(("oauth", "key"), [
    ({"client_id": "ci", "client_secret_env": "CI_SECRET"}, "client_secret_env"),
    # an ID token's entry has a secret too: what it logs in with is the ID token
    ({"client_id": "ci", "client_secret_env": "CI_SECRET", "id_token_env": "ID_TOKEN",
      "issuer": "https://as.example", "idp_token_endpoint": "https://idp.example/token",
      "idp_client_id": "dsh"}, "id_token_env"),
], ids=["secret", "id-token"])
def test_login_to_a_server_that_logs_in_by_itself_says_so_and_opens_nothing(tmp_path, oauth,
                                                                           key):
    servers = tmp_path / "servers.json"
    servers.write_text(json.dumps({"mcpServers": {"ci": {
        "type": "http", "url": "http://127.0.0.1:9/mcp", "oauth": oauth}}}))
    out = dsh("mcp", "login", "ci", "--mcp-config", str(servers))
    assert out.returncode == 2
    assert out.stderr == (f"dsh: USAGE: ci logs in by itself (oauth.{key}): there "
                          "is nothing for dsh mcp login to do\n")


def test_metadata_sending_the_login_over_plain_http_elsewhere_is_refused(tmp_path, dsh_home,
                                                                         protected_mode):
    with protected_mode("--plain-http-endpoints") as running:
        url = running.url
        servers = servers_file(tmp_path, url)
        login = log_in(servers, follow=False)
    assert login.returncode == 1
    assert login.stderr == (
        "dsh: MCP_LOGIN_FAILED: prot: the authorization server's endpoint "
        "http://10.9.9.9/register is not https (plain http is only for 127.0.0.1): refused\n")


def test_metadata_redirected_to_another_host_is_not_followed(tmp_path, dsh_home, protected_mode):
    record = tmp_path / "requests.txt"
    with protected_mode("--redirect-metadata", "--record", str(record)) as running:
        url = running.url
        login = log_in(servers_file(tmp_path, url))
    # the redirect is a metadata document not found: the login goes on with the endpoints
    # of the server's own origin (MCP 2025-03-26's fallback), nothing reaches the other host
    assert login.returncode == 0, login.stderr
    assert f"open this URL in a browser: {url.removesuffix('/mcp')}/authorize?" in login.stderr
    assert record.read_text().split() == ["authorization_code"]


def test_a_token_refused_mid_login_is_a_second_authorization_with_its_own_redirect(
        tmp_path, dsh_home, protected_mode):
    record = tmp_path / "grants.txt"
    with protected_mode("--one-shot-tokens", "--refuse-refresh", "--record",
                          str(record)) as running:
        url = running.url
        process = subprocess.Popen([DSH, "mcp", "login", "prot", "--mcp-config",
                                    servers_file(tmp_path, url), "--no-open", "--timeout", "30"],
                                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True)
        assert process.stderr is not None
        said = []
        for line in process.stderr:  # the browser that says yes to every round
            said.append(line)
            if "open this URL in a browser" in line:
                httpx2.get(line.rsplit(" ", 1)[-1].strip(), follow_redirects=True,
                           timeout=CEILING)
        assert process.wait(timeout=CEILING) == 0, said
    # the second round was answered by its own redirect (the first round's answer given
    # again was "State parameter mismatch")
    assert sum("open this URL in a browser" in line for line in said) == 2
    assert said[-1] == "dsh: prot: logged in\n"
    assert record.read_text().split() == ["authorization_code", "refresh_token",
                                          "authorization_code"]


def test_client_credentials_whose_secret_variable_is_unset_says_which(tmp_path, oauth_server):
    url = oauth_server
    servers = tmp_path / "servers.json"
    servers.write_text(json.dumps({"mcpServers": {"prot": {
        "type": "http", "url": url,
        "oauth": {"client_id": "ci", "client_secret_env": "DSH_TEST_UNSET_SECRET"}}}}))
    server = listed(str(servers))
    assert (server["started"], server["code"]) == (False, "MCP_AUTH_REQUIRED")
    assert server["error"] == ("prot cannot log in: oauth.client_secret_env names "
                               "DSH_TEST_UNSET_SECRET, which is not set")


def test_where_no_browser_opens_the_pasted_address_finishes_the_login(tmp_path, dsh_home,
                                                                      oauth_server):
    import asyncio

    from dsh_cli.mcp_client import parse_servers
    from dsh_cli.mcp_client.login import log_in

    read_end, write_end = os.pipe()
    url = oauth_server
    with open(read_end, encoding="utf-8") as paste:
        [config] = parse_servers({"mcpServers": {"prot": {"type": "http", "url": url}}},
                                 "test", {})

        def show(authorization_url: str) -> None:
            # the browser on another machine lands on dsh's callback address, which it
            # cannot reach; the human copies that address and pastes it
            landed = httpx2.get(authorization_url, follow_redirects=False, timeout=CEILING)
            assert "127.0.0.1" in landed.headers["location"]
            os.write(write_end, (landed.headers["location"] + "\n").encode())

        asyncio.run(asyncio.wait_for(log_in(config, dsh_home, show=show, paste=paste,
                                            timeout=30), CEILING))
        os.close(write_end)
        assert stored_token(dsh_home)
        assert listed(servers_file(tmp_path, url))["started"]


def asked_scope(login: subprocess.CompletedProcess[str]) -> str:
    """The scope of the authorization URL ``dsh mcp login`` printed first."""
    from urllib.parse import parse_qs, urlsplit

    url = login.stderr.splitlines()[0].rsplit(" ", 1)[-1]
    return parse_qs(urlsplit(url).query)["scope"][0]


def run_tools(tmp_path: Path, servers: str, *calls: tuple[str, dict]) -> list[dict]:
    """One real ``dsh run --jsonl`` making ``calls`` in turn: the tool results it reports."""
    script = tmp_path / "calls.json"
    script.write_text(json.dumps({"turns": [
        *({"tool_calls": [{"name": name, "arguments": arguments}]} for name, arguments in calls),
        {"content": "done"}]}))
    run = subprocess.run([DSH, "run", "--model", f"script:{script}", "--mcp-config", servers,
                          "--yes", "--jsonl", "go"], capture_output=True, text=True,
                         timeout=CEILING, stdin=subprocess.DEVNULL)
    assert run.returncode == 0, run.stderr
    events = [json.loads(line) for line in run.stdout.splitlines()]
    return [event for event in events if event["type"] == "tool/result"]


def test_a_token_revoked_before_its_expiry_is_refreshed_once_mid_session(tmp_path, dsh_home,
                                                                         protected_mode):
    record = tmp_path / "grants.txt"
    with protected_mode("--revocable", "--record", str(record)) as running:
        url = running.url
        servers = servers_file(tmp_path, url)
        assert log_in(servers).returncode == 0
        revoked, greeted = run_tools(tmp_path, servers, ("mcp__prot__revoke", {}),
                                     ("mcp__prot__whoami", {}))
    assert revoked["content"] == "revoked"
    assert greeted["content"] == GREETING
    # the 401 was answered by one refresh; the refreshed token was stored for the next run
    assert record.read_text().split() == ["authorization_code", "refresh_token"]
    [entry] = json.loads((dsh_home / "mcp-tokens.json").read_text()).values()
    assert entry["tokens"]["access_token"] not in greeted["content"]


def test_a_revoked_login_mid_session_is_the_login_line_and_the_session_goes_on(
        tmp_path, protected_mode):
    record = tmp_path / "grants.txt"
    with protected_mode("--revocable", "--record", str(record)) as running:
        url = running.url
        servers = servers_file(tmp_path, url)
        assert log_in(servers).returncode == 0
        revoked, refused, again = run_tools(
            tmp_path, servers, ("mcp__prot__revoke", {"refresh": True}),
            ("mcp__prot__whoami", {}), ("mcp__prot__whoami", {}))
    assert revoked["content"] == "revoked"
    for result in (refused, again):  # the connection lives on: the next call says the same
        assert result["error"] == {
            "name": "ToolError", "code": "MCP_AUTH_REQUIRED",
            "message": "prot needs a login: run dsh mcp login prot"}
    assert record.read_text().split()[:2] == ["authorization_code", "refresh_token"]


def test_a_tool_that_needs_more_scope_asks_for_a_broader_login_that_keeps_it(tmp_path,
                                                                             dsh_home,
                                                                             protected_mode):
    with protected_mode("--write-scope") as running:
        url = running.url
        servers = servers_file(tmp_path, url)
        assert asked_scope(log_in(servers)) == "read"  # the server's metadata names read
        [refused] = run_tools(tmp_path, servers, ("mcp__prot__write_note", {}))
        assert refused["error"] == {
            "name": "ToolError", "code": "MCP_AUTH_REQUIRED",
            "message": ("prot needs a broader login (scope read write): "
                        "run dsh mcp login prot")}
        [entry] = json.loads((dsh_home / "mcp-tokens.json").read_text()).values()
        assert entry["wanted_scope"] == "read write"
        login = log_in(servers)
        assert login.returncode == 0, login.stderr
        assert asked_scope(login) == "read write"  # the challenge's scope and the kept one
        [entry] = json.loads((dsh_home / "mcp-tokens.json").read_text()).values()
        assert "wanted_scope" not in entry and entry["tokens"]["scope"] == "read write"
        noted, greeted = run_tools(tmp_path, servers, ("mcp__prot__write_note", {}),
                                   ("mcp__prot__whoami", {}))
    assert (noted["content"], greeted["content"]) == (NOTED, GREETING)


def test_a_session_takes_up_the_broader_login_made_beside_it(tmp_path, dsh_home, protected_mode):
    """The user runs ``dsh mcp login`` in another terminal; the open session's next call
    presents the login that process stored, without restarting."""
    import asyncio

    from dsh_cli.interaction import UserInteraction
    from dsh_cli.mcp_client import McpToolset, parse_servers
    from dsh_cli.tools import ToolRegistry
    from dsh_cli.tools.registry import ToolContext

    async def session(url: str, servers: str) -> tuple[dict | None, str]:
        [config] = parse_servers({"mcpServers": {"prot": {"type": "http", "url": url}}},
                                 "test", {})
        registry, ui = ToolRegistry(), UserInteraction()
        with open(tmp_path / "mcp.log", "w", encoding="utf-8") as errlog:
            toolset = await McpToolset.start([config], errlog=errlog, auth_dir=dsh_home)
            try:
                toolset.register(registry)
                ctx = ToolContext(user_interaction=ui, call_id="call_1")
                refused = await registry.execute("mcp__prot__write_note", {}, ctx)
                login = await asyncio.to_thread(log_in, servers)
                assert login.returncode == 0, login.stderr
                noted = await registry.execute("mcp__prot__write_note", {}, ctx)
            finally:
                await toolset.close()
        return refused.error, noted.content

    with protected_mode("--write-scope") as running:
        url = running.url
        servers = servers_file(tmp_path, url)
        assert log_in(servers).returncode == 0
        refused, noted = asyncio.run(asyncio.wait_for(session(url, servers), CEILING))
    assert refused is not None and refused["code"] == "MCP_AUTH_REQUIRED"
    assert noted == NOTED


@pytest.fixture(scope="module")
def apart_server(tmp_path_factory):
    """The server with ``--auth-server-apart`` (its authorization server on a port of its
    own), shared by this module's tests, each recording to a file of its own."""
    record = tmp_path_factory.mktemp("apart") / "requests.jsonl"
    with running_protected_server("--auth-server-apart", str(record)) as server:
        yield server


def received(record: Path, server: str) -> list[dict]:
    """Every request the ``server`` (``mcp`` or ``auth``) of ``--auth-server-apart`` took."""
    lines = record.read_text().splitlines() if record.exists() else []
    return [request for request in map(json.loads, lines) if request["server"] == server]


def test_a_refresh_goes_to_the_authorization_server_never_to_the_mcp_server(tmp_path,
                                                                            dsh_home, apart_server):
    record = tmp_path / "requests.jsonl"
    with in_mode(apart_server, "--auth-server-apart", str(record)) as running:
        url = running.url
        servers = servers_file(tmp_path, url)
        login = log_in(servers)
        assert login.returncode == 0, login.stderr
        [entry] = json.loads((dsh_home / "mcp-tokens.json").read_text()).values()
        refresh = entry["tokens"]["refresh_token"]
        issuer = received(record, "auth")[0]
        age_login(running, dsh_home)  # a later process, with the access token expired
        server = listed(servers)
    assert server["started"], server
    token_requests = [request["body"] for request in received(record, "auth")
                      if request["path"] == "/token"]
    assert [parse_qs_one(body)["grant_type"] for body in token_requests] == [
        "authorization_code", "refresh_token"]
    for request in received(record, "mcp"):  # the refresh token never reached it
        assert refresh not in json.dumps(request), request
        assert "refresh_token" not in request["body"], request
    assert issuer["path"].startswith("/.well-known/")
    [entry] = json.loads((dsh_home / "mcp-tokens.json").read_text()).values()
    assert entry["token_endpoint"].endswith("/token")
    assert entry["token_endpoint"] != url.removesuffix("/mcp") + "/token"


def test_a_login_stored_without_its_token_endpoint_is_never_refreshed_blind(tmp_path,
                                                                           dsh_home, apart_server):
    record = tmp_path / "requests.jsonl"
    with in_mode(apart_server, "--auth-server-apart", str(record)) as running:
        servers = servers_file(tmp_path, running.url)
        assert log_in(servers).returncode == 0
        age_login(running, dsh_home)  # a later process, with the access token expired
        tokens = dsh_home / "mcp-tokens.json"
        document = json.loads(tokens.read_text())
        for entry in document.values():  # a login stored before dsh kept its endpoint
            entry.pop("token_endpoint", None)
            entry.pop("issuer", None)
        tokens.write_text(json.dumps(document))
        refresh = next(iter(document.values()))["tokens"]["refresh_token"]
        before = len(record.read_text().splitlines())
        server = listed(servers)
    assert (server["started"], server["code"]) == (False, "MCP_AUTH_REQUIRED")
    later = [json.loads(line) for line in record.read_text().splitlines()[before:]]
    assert later and all(refresh not in json.dumps(request) for request in later)


def parse_qs_one(body: str) -> dict[str, str]:
    from urllib.parse import parse_qs

    return {key: values[0] for key, values in parse_qs(body).items()}


def start_login(servers: str, timeout: str = "30") -> tuple[subprocess.Popen[str], str]:
    """``dsh mcp login prot`` running, and the authorization URL it printed."""
    process = subprocess.Popen([DSH, "mcp", "login", "prot", "--mcp-config", servers,
                                "--no-open", "--timeout", timeout], stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    first = process.stderr.readline()
    url = first.rsplit(" ", 1)[-1].strip()
    assert "/authorize?" in url, first
    return process, url


def callback_of(url: str) -> str:
    """The loopback callback address the authorization URL sends the browser back to."""
    from urllib.parse import parse_qs, urlsplit

    return parse_qs(urlsplit(url).query)["redirect_uri"][0]


def test_a_callback_with_a_wrong_state_is_refused_and_the_login_waits_on(tmp_path, dsh_home,
                                                                         oauth_server):
    url = oauth_server
    process, authorize = start_login(servers_file(tmp_path, url))
    # another local process guesses the port: it is refused, and told nothing else
    bogus = httpx2.get(callback_of(authorize), params={"code": "forged", "state": "x"},
                       timeout=CEILING)
    stateless = httpx2.get(callback_of(authorize), params={"code": "forged"},
                           timeout=CEILING)
    assert process.poll() is None  # still waiting for the browser
    page = httpx2.get(authorize, follow_redirects=True, timeout=CEILING)
    _, err = process.communicate(timeout=CEILING)
    assert (bogus.status_code, stateless.status_code) == (400, 400)
    assert "logged in" not in bogus.text + stateless.text
    assert page.status_code == 200 and "logged in" in page.text
    assert process.returncode == 0, err
    assert err == "dsh: prot: logged in\n"


def test_a_wrong_state_until_the_timeout_is_the_timeout_line(tmp_path, dsh_home, oauth_server):
    url = oauth_server
    process, authorize = start_login(servers_file(tmp_path, url), timeout="3")
    bogus = httpx2.get(callback_of(authorize), params={"code": "forged", "state": "x"},
                       timeout=CEILING)
    _, err = process.communicate(timeout=CEILING)
    assert bogus.status_code == 400
    assert process.returncode == 1
    assert err == ("dsh: MCP_LOGIN_FAILED: prot: no answer from the browser within 3 s "
                   "(run dsh mcp login prot again)\n")


def test_idle_connections_to_the_callback_leave_no_traceback(tmp_path, dsh_home, oauth_server):
    import socket
    from urllib.parse import urlsplit

    url = oauth_server
    process, authorize = start_login(servers_file(tmp_path, url))
    address = urlsplit(callback_of(authorize))
    idle = [socket.create_connection((address.hostname, address.port)) for _ in range(3)]
    idle[0].sendall(b"GET /callback?code=")  # a request line never finished
    page = httpx2.get(authorize, follow_redirects=True, timeout=CEILING)
    _, err = process.communicate(timeout=CEILING)
    for each in idle:
        each.close()
    assert page.status_code == 200
    assert process.returncode == 0, err
    assert err == "dsh: prot: logged in\n"


def test_metadata_that_never_answers_is_one_line(tmp_path, dsh_home, protected_mode):
    servers = tmp_path / "servers.json"
    with protected_mode("--hang-metadata") as running:
        url = running.url
        servers.write_text(json.dumps({"mcpServers": {"prot": {
            "type": "http", "url": url, "startup_timeout": 2}}}))
        login = dsh("mcp", "login", "prot", "--mcp-config", str(servers), "--no-open",
                    "--timeout", "1")
    assert login.returncode == 1
    base = url.removesuffix("/mcp")
    assert login.stderr == (
        f"dsh: MCP_LOGIN_FAILED: prot: no answer from {base}/.well-known/"
        "oauth-authorization-server within 3 s\n"), login.stderr

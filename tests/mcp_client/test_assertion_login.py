"""Logins by assertion (a JWT as the jwt-bearer grant, RFC 7523 2.1) against the real OAuth
server of ``tests/fakes/oauth_mcp_server.py`` (``--assertion-key``): a workload's token
(SEP-1933), and a user's ID token exchanged for an ID-JAG at an identity provider this test
runs on 127.0.0.1 (SEP-990). Every dsh is a real subprocess; the tokens reach it through
environment variables only, and are found nowhere it writes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from harness.oauth_login import entry_file, grants, mcp_list, pem, public_pem_file

SECRET = "s3cret-of-the-enterprise-client"
ID_TOKEN = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbGljZSJ9.the-users-id-token"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"


def signed(key: ec.EllipticCurvePrivateKey, audience: str, **claims: object) -> str:
    now = int(time.time())
    return jwt.encode({"iss": "https://ci.example", "sub": "workload", "aud": audience,
                       "iat": now, "exp": now + 300, **claims}, pem(key), algorithm="ES256")


@pytest.fixture
def key(tmp_path: Path) -> Iterator[tuple[ec.EllipticCurvePrivateKey, str]]:
    private = ec.generate_private_key(ec.SECP256R1())
    yield private, public_pem_file(private, tmp_path / "issuer.pub")


def no_trace(secret: str, dsh_home: Path, *said: str) -> None:
    """``secret`` is in nothing dsh said or wrote (its config directory, the session store)."""
    assert not any(secret in text for text in said)
    for path in dsh_home.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path


def test_a_workloads_token_is_the_grant_and_is_kept_nowhere(tmp_path, dsh_home, key,
                                                            protected_mode):
    private, public = key
    record = tmp_path / "grants.txt"
    with protected_mode("--assertion-key", public, "--record", str(record)) as running:
        url = running.url
        issuer = url.removesuffix("/mcp")
        token = signed(private, issuer)
        servers = entry_file(tmp_path, url, {"assertion_env": "DSH_TEST_JWT", "issuer": issuer})
        server, stderr = mcp_list(servers, DSH_TEST_JWT=token)
    assert server["started"] and [tool["name"] for tool in server["tools"]] == [
        "mcp__prot__whoami"], server
    assert (grants(record), stderr) == (["jwt-bearer"], "")
    assert not (dsh_home / "mcp-tokens.json").exists()  # the token it bought: memory only
    no_trace(token, dsh_home, stderr, json.dumps(server))


def test_a_refused_token_is_one_line_with_no_retry_and_no_other_grant(tmp_path, dsh_home,
                                                                       key, protected_mode):
    private, public = key
    record = tmp_path / "grants.txt"
    with protected_mode("--assertion-key", public, "--record", str(record)) as running:
        url = running.url
        issuer = url.removesuffix("/mcp")
        token = signed(private, "https://another.example")
        servers = entry_file(tmp_path, url, {"assertion_env": "DSH_TEST_JWT", "issuer": issuer})
        server, stderr = mcp_list(servers, DSH_TEST_JWT=token)
    assert (server["started"], server["code"]) == (False, "MCP_AUTH_REQUIRED")
    assert server["error"] == ('prot cannot log in: Token exchange failed (400): '
                               '{"error": "invalid_grant", "error_description": '
                               '"Audience doesn\'t match"}')
    assert grants(record) == ["jwt-bearer"]  # once, and never the browser's grant after it
    no_trace(token, dsh_home, stderr, json.dumps(server))


def test_an_issuer_that_does_not_answer_is_no_login_to_run(tmp_path, dsh_home, key, protected_mode):
    private, public = key
    record = tmp_path / "grants.txt"
    with protected_mode("--assertion-key", public, "--record", str(record)) as running:
        url = running.url
        token = signed(private, url.removesuffix("/mcp"))
        servers = entry_file(tmp_path, url, {"assertion_env": "DSH_TEST_JWT",
                                             "issuer": "http://127.0.0.1:9"})
        server, stderr = mcp_list(servers, DSH_TEST_JWT=token)
    assert (server["started"], server["code"]) == (False, "MCP_UNAVAILABLE")
    assert server["error"].startswith("MCP server prot failed to start: "), server
    assert "dsh mcp login" not in server["error"]
    assert grants(record) == []  # the MCP server's own authorization server never saw it
    no_trace(token, dsh_home, stderr, json.dumps(server))


def test_an_unset_assertion_variable_says_which(tmp_path, oauth_server):
    url = oauth_server
    servers = entry_file(tmp_path, url, {"assertion_env": "DSH_TEST_UNSET_JWT",
                                         "issuer": url.removesuffix("/mcp")})
    server, _ = mcp_list(servers)
    assert (server["started"], server["code"]) == (False, "MCP_AUTH_REQUIRED")
    assert server["error"] == ("prot cannot log in: oauth.assertion_env names "
                               "DSH_TEST_UNSET_JWT, which is not set")


@contextlib.contextmanager
def identity_provider(private: ec.EllipticCurvePrivateKey, mode: str = "grant",
                      ) -> Iterator[tuple[str, list[dict[str, str]]]]:
    """An RFC 8693 token endpoint on 127.0.0.1 that turns ``ID_TOKEN`` into an ID-JAG
    signed with ``private`` (for the request's audience and resource); its URL, and each
    request's form. ``mode``: ``refuse`` answers invalid_grant, ``access-token`` an access
    token instead of an ID-JAG, ``huge`` a megabyte of JSON, ``trickle`` a byte of it every
0.1 s, for ever (each read is answered; the whole never ends)."""
    seen: list[dict[str, str]] = []

    class Exchange(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
            seen.append(form)
            if mode == "refuse" or form.get("subject_token") != ID_TOKEN:
                status, answer = 400, {"error": "invalid_grant",
                                       "error_description": "Invalid ID token"}
            elif mode == "access-token":
                status, answer = 200, {"access_token": "a.b.c", "token_type": "Bearer",
                                       "issued_token_type":
                                           "urn:ietf:params:oauth:token-type:access_token"}
            elif mode == "trickle":
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                with contextlib.suppress(OSError):
                    for _ in range(600):
                        self.wfile.write(b" ")
                        self.wfile.flush()
                        time.sleep(0.1)
                return
            elif mode == "huge":
                status, answer = 200, {"padding": "x" * 1024 * 1024}
            else:
                grant = signed(private, form["audience"], sub="alice",
                               resource=form["resource"], client_id="dsh-enterprise")
                status, answer = 200, {"access_token": grant, "issued_token_type": ID_JAG,
                                       "token_type": "N_A"}
            body = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Exchange)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/token", seen
    finally:
        server.shutdown()
        server.server_close()


def enterprise_entry(tmp_path: Path, url: str, endpoint: str) -> str:
    return entry_file(tmp_path, url, {
        "client_id": "dsh-enterprise", "client_secret_env": "DSH_TEST_SECRET",
        "issuer": url.removesuffix("/mcp"), "id_token_env": "DSH_TEST_ID_TOKEN",
        "idp_token_endpoint": endpoint, "idp_client_id": "dsh-at-idp"})


def test_an_id_token_is_exchanged_for_an_id_jag_which_is_the_grant(tmp_path, dsh_home, key,
                                                                   protected_mode):
    private, public = key
    record = tmp_path / "grants.txt"
    with identity_provider(private) as (endpoint, seen), protected_mode(
            "--assertion-key", public, "--client", f"dsh-enterprise:{SECRET}",
            "--record", str(record)) as running:
        url = running.url
        servers = enterprise_entry(tmp_path, url, endpoint)
        server, stderr = mcp_list(servers, DSH_TEST_SECRET=SECRET, DSH_TEST_ID_TOKEN=ID_TOKEN)
    assert server["started"], server
    assert (grants(record), stderr) == (["jwt-bearer"], "")
    [form] = seen
    assert form == {"grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
                    "requested_token_type": ID_JAG, "subject_token": ID_TOKEN,
                    "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
                    "audience": url.removesuffix("/mcp"), "resource": url,
                    "client_id": "dsh-at-idp"}
    no_trace(ID_TOKEN, dsh_home, stderr, json.dumps(server))
    no_trace(SECRET, dsh_home, stderr, json.dumps(server))


@pytest.mark.parametrize(("mode", "said"), [
    ("refuse", "the identity provider refused the ID token (400): invalid_grant Invalid ID "
               "token"),
    ("access-token", "the identity provider's answer holds no ID-JAG (issued_token_type "
                     "urn:ietf:params:oauth:token-type:access_token)"),
    ("huge", "the identity provider's answer is over 65536 bytes: refused"),
])
def test_an_identity_provider_that_gives_no_id_jag_is_one_line(tmp_path, dsh_home, key,
                                                               mode, said, protected_mode):
    private, public = key
    record = tmp_path / "grants.txt"
    with identity_provider(private, mode) as (endpoint, seen), protected_mode(
            "--assertion-key", public, "--client", f"dsh-enterprise:{SECRET}",
            "--record", str(record)) as running:
        url = running.url
        servers = enterprise_entry(tmp_path, url, endpoint)
        server, stderr = mcp_list(servers, DSH_TEST_SECRET=SECRET, DSH_TEST_ID_TOKEN=ID_TOKEN)
    assert (server["started"], server["code"]) == (False, "MCP_AUTH_REQUIRED")
    assert server["error"] == f"prot cannot log in: {said}"
    assert (len(seen), grants(record)) == (1, [])  # the authorization server saw nothing
    no_trace(ID_TOKEN, dsh_home, stderr, json.dumps(server))


def test_an_identity_provider_that_trickles_is_cut_at_the_exchanges_bound(monkeypatch):
    from dsh_cli.mcp_client.auth import assertion
    from dsh_cli.mcp_client.auth.login_required import CredentialsRefused

    monkeypatch.setattr(assertion, "EXCHANGE_TIMEOUT", 1.0)  # 30 s in use
    private = ec.generate_private_key(ec.SECP256R1())
    with identity_provider(private, "trickle") as (endpoint, seen):
        started = time.monotonic()
        with pytest.raises(CredentialsRefused) as refused:
            asyncio.run(assertion.exchange_id_token(
                endpoint, ID_TOKEN, client_id="dsh-at-idp", audience="http://127.0.0.1:9",
                resource="http://127.0.0.1:9/mcp"))
        took = time.monotonic() - started
    assert str(refused.value) == (f"the identity provider at {endpoint} did not answer "
                                  "within 1 s")
    assert took < 10 and len(seen) == 1  # cut at the bound (each read got a byte), no retry

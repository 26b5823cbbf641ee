"""Logins with no browser (``client_credentials``: a secret or a signed JWT) and a client
metadata document, against the real OAuth server of ``tests/fakes/oauth_mcp_server.py``
(``--client`` and ``--client-key`` add its ``client_credentials`` clients). Every dsh is a
real subprocess; the secret and the key reach it through environment variables only.
"""

from __future__ import annotations

import json

import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from harness.oauth_login import (
    entry_file,
    grants,
    log_in,
    mcp_list,
    pem,
    public_pem_file,
)

SECRET = "s3cret-of-the-ci-client"


def test_a_client_secret_logs_in_with_no_warning_on_the_terminal(tmp_path, protected_mode):
    record = tmp_path / "grants.txt"
    with protected_mode("--client", f"ci:{SECRET}", "--record", str(record)) as running:
        url = running.url
        servers = entry_file(tmp_path, url, {"client_id": "ci",
                                             "client_secret_env": "DSH_TEST_SECRET"})
        server, stderr = mcp_list(servers, DSH_TEST_SECRET=SECRET)
    assert server["started"], server
    assert grants(record) == ["client_credentials"]
    # without oauth.issuer the SDK warns (MCPDeprecationWarning) over the user's terminal
    assert stderr == ""
    assert SECRET not in json.dumps(server)


@pytest.mark.parametrize("algorithm", ["ES256", "RS256"])
def test_a_signed_jwt_logs_in_and_the_key_is_nowhere_but_its_variable(tmp_path, dsh_home,
                                                                       algorithm, protected_mode):
    key = (ec.generate_private_key(ec.SECP256R1()) if algorithm == "ES256"
           else rsa.generate_private_key(public_exponent=65537, key_size=2048))
    record = tmp_path / "grants.txt"
    public = public_pem_file(key, tmp_path / "ci.pub")
    with protected_mode("--client-key", f"jwt-ci:{public}", "--record", str(record)) as running:
        url = running.url
        oauth = {"client_id": "jwt-ci", "private_key_env": "DSH_TEST_KEY",
                 "issuer": url.removesuffix("/mcp")}
        if algorithm != "RS256":  # the default
            oauth["signing_algorithm"] = algorithm
        servers = entry_file(tmp_path, url, oauth)
        server, stderr = mcp_list(servers, DSH_TEST_KEY=pem(key))
    assert server["started"] and [tool["name"] for tool in server["tools"]] == [
        "mcp__prot__whoami"], server
    assert (grants(record), stderr) == (["client_credentials"], "")
    body = "".join(pem(key).splitlines()[1:-1])
    for path in dsh_home.rglob("*"):
        if path.is_file():
            assert body[:40].encode() not in path.read_bytes(), path


@pytest.mark.parametrize("value", [
    "not a key at all",
    pem(rsa.generate_private_key(public_exponent=65537, key_size=2048)),  # RS256's, not ES256's
], ids=["not-a-key", "an-rs256-key"])  # ids a fresh key leaves the same (two workers collect)
def test_a_key_that_is_not_one_for_the_algorithm_is_one_line_naming_its_variable(tmp_path,
                                                                                  value,
                                                                                  protected_mode):
    record = tmp_path / "grants.txt"
    with protected_mode("--record", str(record)) as running:
        url = running.url
        servers = entry_file(tmp_path, url, {
            "client_id": "jwt-ci", "private_key_env": "DSH_TEST_KEY",
            "signing_algorithm": "ES256"})
        server, stderr = mcp_list(servers, DSH_TEST_KEY=value)
    assert (server["started"], server["code"]) == (False, "MCP_AUTH_REQUIRED")
    assert server["error"] == ("prot cannot log in: oauth.private_key_env names DSH_TEST_KEY, "
                               "which holds no PEM private key for ES256")
    quoted = max(value.splitlines(), key=len)[:20]
    assert quoted not in stderr + json.dumps(server)
    assert grants(record) == []  # said before any token request


def test_an_issuer_other_than_the_servers_keeps_the_secret_from_it(tmp_path, protected_mode):
    record = tmp_path / "grants.txt"
    with protected_mode("--client", f"ci:{SECRET}", "--record", str(record)) as running:
        url = running.url
        servers = entry_file(tmp_path, url, {
            "client_id": "ci", "client_secret_env": "DSH_TEST_SECRET",
            "issuer": "https://auth.example.com"})
        server, stderr = mcp_list(servers, DSH_TEST_SECRET=SECRET)
    assert (server["started"], server["code"]) == (False, "MCP_AUTH_REQUIRED")
    assert server["error"] == (
        "prot cannot log in: Authorization server metadata issuer mismatch: "
        f"{url.removesuffix('/mcp')} != https://auth.example.com")
    assert grants(record) == []  # the token endpoint never saw the secret
    assert SECRET not in stderr + json.dumps(server)


def test_a_refused_secret_is_the_servers_reason_not_a_login_to_run(tmp_path, protected_mode):
    with protected_mode("--client", f"ci:{SECRET}") as running:
        url = running.url
        servers = entry_file(tmp_path, url, {"client_id": "ci",
                                             "client_secret_env": "DSH_TEST_SECRET"})
        server, stderr = mcp_list(servers, DSH_TEST_SECRET="wrong-secret")
    assert (server["started"], server["code"]) == (False, "MCP_AUTH_REQUIRED")
    assert server["error"] == ('prot cannot log in: Token exchange failed (401): '
                               '{"error": "invalid_client"}')
    assert "wrong-secret" not in stderr + json.dumps(server)


def test_a_metadata_document_where_the_server_takes_none_falls_back_to_registration(
        tmp_path, dsh_home, oauth_server):
    document = "https://dsh.example/client-metadata.json"
    url = oauth_server
    servers = entry_file(tmp_path, url, {"client_metadata_url": document})
    login = log_in(servers)
    assert login.returncode == 0, login.stderr
    server, _ = mcp_list(servers)
    assert server["started"], server
    [stored] = json.loads((dsh_home / "mcp-tokens.json").read_text()).values()
    assert stored["client"]["client_id"] not in ("", document)  # registered: the server's ID


def test_a_key_variable_that_is_unset_says_which(tmp_path, oauth_server):
    url = oauth_server
    servers = entry_file(tmp_path, url, {"client_id": "jwt-ci",
                                         "private_key_env": "DSH_TEST_UNSET_KEY"})
    server, _ = mcp_list(servers)
    assert (server["started"], server["code"]) == (False, "MCP_AUTH_REQUIRED")
    assert server["error"] == ("prot cannot log in: oauth.private_key_env names "
                               "DSH_TEST_UNSET_KEY, which is not set")

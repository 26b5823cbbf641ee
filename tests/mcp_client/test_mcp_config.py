"""The mcpServers format: stdio and http entries, ${VAR} expansion, filters, clear errors."""

from __future__ import annotations

import json

import pytest

from dsh_cli.core.errors import ConfigError
from dsh_cli.mcp_client import load_servers, parse_servers


def test_stdio_and_http_servers_with_variables_expanded():
    servers = parse_servers({"mcpServers": {
        "git": {"command": "uvx", "args": ["mcp-server-git", "--repository", "${REPO}"],
                "env": {"TOKEN": "${TOKEN:-none}"}, "cwd": "${HOME}/src"},
        "docs": {"type": "http", "url": "http://127.0.0.1:${PORT:-9000}/mcp",
                 "headers": {"Authorization": "Bearer ${TOKEN}"}},
    }}, "a.json", {"REPO": "/r", "HOME": "/h", "TOKEN": ""})
    git, docs = servers
    assert (git.transport, git.command, git.args) == ("stdio", "uvx",
                                                      ("mcp-server-git", "--repository", "/r"))
    assert git.env == {"TOKEN": "none"} and git.cwd == "/h/src"
    assert (docs.transport, docs.url) == ("http", "http://127.0.0.1:9000/mcp")
    assert docs.headers == {"Authorization": "Bearer "}


def test_vs_code_servers_key_and_disabled_entries():
    servers = parse_servers({"servers": {"a": {"command": "x"},
                                         "b": {"command": "y", "disabled": True}}}, "f", {})
    assert [server.name for server in servers] == ["a"]


def test_include_and_exclude_filters():
    server, = parse_servers({"mcpServers": {"git": {
        "command": "x", "includeTools": ["git_status", "git_log"],
        "excludeTools": ["git_log"]}}}, "f", {})
    assert server.offers("git_status")
    assert not server.offers("git_log") and not server.offers("git_reset")


@pytest.mark.parametrize(("document", "fragment"), [
    ([], "expected a JSON object"),
    ({}, "no \"mcpServers\""),
    ({"mcpServers": []}, "must be an object"),
    ({"mcpServers": {"a__b": {"command": "x"}}}, "no '__'"),
    ({"mcpServers": {"a": "x"}}, "expected an object"),
    ({"mcpServers": {"a": {}}}, "needs a \"command\""),
    ({"mcpServers": {"a": {"command": 3}}}, "command must be a string"),
    ({"mcpServers": {"a": {"command": "x", "args": "y"}}}, "args must be a list"),
    ({"mcpServers": {"a": {"type": "http"}}}, "needs a \"url\""),
    ({"mcpServers": {"a": {"type": "sse", "url": "http://x"}}}, "unsupported type"),
    ({"mcpServers": {"a": {"command": "x", "tool_timeout": 0}}}, "positive number"),
])
def test_bad_entries_name_the_file_and_the_server(document, fragment):
    with pytest.raises(ConfigError) as caught:
        parse_servers(document, "servers.json", {})
    assert caught.value.message.startswith("servers.json")
    assert fragment in caught.value.message


def test_later_files_replace_earlier_servers_and_broken_files_are_clear(tmp_path):
    first = tmp_path / "a.json"
    second = tmp_path / "b.json"
    first.write_text(json.dumps({"mcpServers": {"x": {"command": "one"}, "y": {"command": "y"}}}))
    second.write_text(json.dumps({"mcpServers": {"x": {"command": "two"}}}))
    servers = load_servers([first, second], {})
    assert [(s.name, s.command) for s in servers] == [("x", "two"), ("y", "y")]
    broken = tmp_path / "broken.json"
    broken.write_text("{nope")
    with pytest.raises(ConfigError, match=r"broken\.json: not valid JSON"):
        load_servers([broken], {})
    with pytest.raises(ConfigError, match="cannot read"):
        load_servers([tmp_path / "missing.json"], {})


def test_a_server_may_ask_for_the_session_era_only():
    auto, legacy = parse_servers({"mcpServers": {"a": {"command": "x"},
                                                 "b": {"command": "x", "protocol": "legacy"}}},
                                 "f", {})
    assert (auto.protocol, legacy.protocol) == ("auto", "legacy")
    with pytest.raises(ConfigError, match="protocol must be"):
        parse_servers({"mcpServers": {"c": {"command": "x", "protocol": "2024"}}}, "f", {})


def test_the_oauth_keys_of_an_http_server():
    [server] = parse_servers({"mcpServers": {"docs": {
        "type": "http", "url": "https://example.com/mcp",
        "oauth": {"client_id": "${ID}", "client_secret_env": "DOCS_SECRET",
                  "scopes": ["read", "write"]}}}}, "f.json", {"ID": "dsh-ci"})
    assert (server.oauth.client_id, server.oauth.client_secret_env, server.oauth.scopes) == (
        "dsh-ci", "DOCS_SECRET", ("read", "write"))


def test_the_oauth_keys_of_a_signed_jwt_client_an_issuer_and_a_metadata_document():
    [ci, browser] = parse_servers({"mcpServers": {
        "ci": {"type": "http", "url": "https://example.com/mcp",
               "oauth": {"client_id": "dsh-ci", "private_key_env": "DOCS_KEY",
                         "signing_algorithm": "ES256", "issuer": "${AS}"}},
        "browser": {"type": "http", "url": "https://example.com/mcp",
                    "oauth": {"client_metadata_url": "https://dsh.example/client.json"}}}},
        "f.json", {"AS": "https://auth.example.com"})
    assert (ci.oauth.client_id, ci.oauth.private_key_env, ci.oauth.signing_algorithm,
            ci.oauth.issuer, ci.oauth.client_secret_env) == (
        "dsh-ci", "DOCS_KEY", "ES256", "https://auth.example.com", None)
    assert (browser.oauth.client_metadata_url, browser.oauth.signing_algorithm,
            browser.oauth.issuer) == ("https://dsh.example/client.json", "RS256", None)
    [local] = parse_servers({"mcpServers": {"l": {
        "type": "http", "url": "http://127.0.0.1:8000/mcp",
        "oauth": {"issuer": "http://127.0.0.1:8000"}}}}, "f.json", {})
    assert local.oauth.issuer == "http://127.0.0.1:8000"


def test_the_oauth_keys_of_logins_by_assertion():
    [ci, user] = parse_servers({"mcpServers": {
        "ci": {"type": "http", "url": "https://example.com/mcp",
               "oauth": {"assertion_env": "CI_OIDC_TOKEN", "issuer": "https://auth.example.com"}},
        "user": {"type": "http", "url": "https://example.com/mcp",
                 "oauth": {"client_id": "dsh", "client_secret_env": "DSH_SECRET",
                           "issuer": "https://auth.example.com", "id_token_env": "ID_TOKEN",
                           "idp_token_endpoint": "${IDP}/token", "idp_client_id": "${IDC}"}}}},
        "f.json", {"IDP": "https://idp.example.com", "IDC": "dsh-at-idp"})
    assert (ci.oauth.assertion_env, ci.oauth.issuer, ci.oauth.client_id,
            ci.oauth.id_token_env) == ("CI_OIDC_TOKEN", "https://auth.example.com", None, None)
    assert (user.oauth.id_token_env, user.oauth.idp_token_endpoint, user.oauth.idp_client_id,
            user.oauth.assertion_env) == (
        "ID_TOKEN", "https://idp.example.com/token", "dsh-at-idp", None)


SEP_990 = {"client_id": "a", "client_secret_env": "S", "issuer": "https://as.example.com",
           "id_token_env": "T", "idp_token_endpoint": "https://idp.example.com/token",
           "idp_client_id": "i"}


@pytest.mark.parametrize(("oauth", "fragment"), [
    ({"assertion_env": "eyJhbGciOiJSUzI1NiJ9.e30.sig", "issuer": "https://as.example.com"},
     "oauth.assertion_env names an environment variable .*, not the assertion"),
    ({**SEP_990, "id_token_env": "eyJ.e30.x"},
     "oauth.id_token_env names an environment variable .*, not the ID token"),
    ({"assertion_env": "T"}, r"oauth.assertion_env needs oauth.issuer \(the authorization "),
    ({**SEP_990, "issuer": None}, "oauth.id_token_env needs oauth.issuer"),
    ({"assertion_env": "T", "id_token_env": "U", "issuer": "https://as.example.com"},
     "oauth.assertion_env and oauth.id_token_env are two ways to log in: give one"),
    ({"client_id": "a", "client_secret_env": "S", "assertion_env": "T",
      "issuer": "https://as.example.com"},
     "oauth.assertion_env and oauth.client_secret_env are two ways to log in: give one"),
    ({**SEP_990, "client_secret_env": None}, "oauth.id_token_env needs oauth.client_secret_env"),
    ({**SEP_990, "idp_token_endpoint": None}, "oauth.id_token_env needs oauth.idp_token_endpoint"),
    ({**SEP_990, "idp_client_id": None}, "oauth.id_token_env needs oauth.idp_client_id"),
    ({**SEP_990, "id_token_env": None}, "oauth.idp_token_endpoint needs oauth.id_token_env"),
    ({**SEP_990, "idp_token_endpoint": "http://idp.example.com/token"},
     "oauth.idp_token_endpoint must be an https URL"),
    ({**SEP_990, "idp_client_id": 7}, "oauth.idp_client_id must be a string"),
])
def test_bad_assertion_keys_are_one_config_error(oauth, fragment):
    entry = {"type": "http", "url": "https://example.com/mcp",
             "oauth": {key: value for key, value in oauth.items() if value is not None}}
    with pytest.raises(ConfigError, match=fragment):
        parse_servers({"mcpServers": {"docs": entry}}, "f.json", {})


@pytest.mark.parametrize(("oauth", "fragment"), [
    ("yes", "oauth must be an object"),
    ({"client_secret": "s3cret"}, "oauth has no key 'client_secret'"),
    ({"client_id": "a", "client_secret_env": "s3cret value"}, "names an environment variable"),
    ({"client_secret_env": "SECRET"}, "oauth.client_secret_env needs oauth.client_id"),
    ({"scopes": "read"}, "oauth.scopes must be a list of strings"),
    ({"private_key_env": "KEY"}, "oauth.private_key_env needs oauth.client_id"),
    ({"client_id": "a", "private_key_env": "-----BEGIN PRIVATE KEY-----"},
     "oauth.private_key_env names an environment variable .*, not the key"),
    ({"client_id": "a", "client_secret_env": "S", "private_key_env": "K"},
     "oauth.client_secret_env and oauth.private_key_env are two ways to log in: give one"),
    ({"client_id": "a", "private_key_env": "K", "signing_algorithm": "HS256"},
     "oauth.signing_algorithm 'HS256' is not one of RS256, .*ES256"),
    ({"client_id": "a", "private_key_env": "K", "signing_algorithm": 256},
     "oauth.signing_algorithm must be a string"),
    ({"client_id": "a", "client_secret_env": "S", "signing_algorithm": "ES256"},
     "oauth.signing_algorithm needs oauth.private_key_env"),
    ({"issuer": "http://auth.example.com"}, "oauth.issuer must be an https URL"),
    ({"issuer": "auth.example.com"}, "oauth.issuer must be an https URL"),
    ({"issuer": "https://"}, "oauth.issuer must be an https URL"),
    ({"client_metadata_url": "http://dsh.example/client.json"},
     "oauth.client_metadata_url must be an https URL with a path"),
    ({"client_metadata_url": "https://dsh.example/"},
     "oauth.client_metadata_url must be an https URL with a path"),
    ({"client_id": "a", "client_metadata_url": "https://dsh.example/client.json"},
     "oauth.client_metadata_url and oauth.client_id are two client IDs: give one"),
])
def test_bad_oauth_keys_are_one_config_error(oauth, fragment):
    entry = {"type": "http", "url": "https://example.com/mcp", "oauth": oauth}
    with pytest.raises(ConfigError, match=fragment):
        parse_servers({"mcpServers": {"docs": entry}}, "f.json", {})

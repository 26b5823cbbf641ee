"""DPoP across the process boundary: ``dsh mcp login`` and a later ``dsh`` against the real
OAuth server of ``tests/fakes/oauth_mcp_server.py`` with ``--dpop`` (its ``DpopGate``
verifies every proof and takes a bound token only with one), and with ``--dpop-nonce``
(both of its servers first answer ``use_dpop_nonce``). Every dsh is a real subprocess.
"""

from __future__ import annotations

import json
import subprocess

from harness.dsh_under_test import DSH
from harness.oauth_login import (
    CEILING,
    GREETING,
    age_login,
    listed,
    log_in,
    servers_file,
)


def stored_entry(home) -> dict:
    [entry] = json.loads((home / "mcp-tokens.json").read_text()).values()
    return entry


def test_a_dpop_login_binds_its_token_to_a_stored_key_and_each_request_proves_it(
        tmp_path, dsh_home, protected_mode):
    record = tmp_path / "record.txt"
    script = tmp_path / "model.json"
    script.write_text(json.dumps({"turns": [
        {"tool_calls": [{"name": "mcp__prot__whoami", "arguments": {}}]},
        {"content": "done"}]}))
    with protected_mode("--dpop-nonce", "--record", str(record)) as running:
        url = running.url
        servers = servers_file(tmp_path, url)
        login = log_in(servers)
        assert login.returncode == 0, login.stderr
        entry = stored_entry(dsh_home)
        run = subprocess.run([DSH, "run", "--model", f"script:{script}", "--mcp-config",
                              servers, "--yes", "--jsonl", "go"], capture_output=True,
                             text=True, timeout=CEILING, stdin=subprocess.DEVNULL)
    assert run.returncode == 0, run.stderr
    assert GREETING in run.stdout
    assert entry["tokens"]["token_type"] == "DPoP"
    assert {"kty", "crv", "x", "y", "d"} <= set(entry["dpop_key"])
    notes = record.read_text().splitlines()
    # the origin's nonce asked for once a process (the login's at its token endpoint, which
    # shares the origin of /mcp), then every request carried it
    assert notes[:3] == ["nonce token", "dpop authorization_code+nonce", "authorization_code"]
    assert notes.count("nonce token") == 1 and notes.count("nonce mcp") == 1
    assert "dpop mcp+nonce" in notes and "dpop mcp" not in notes
    # the token and the private key are in the token file and nowhere else
    said = run.stdout + run.stderr + login.stdout + login.stderr
    for secret in (entry["tokens"]["access_token"], entry["dpop_key"]["d"]):
        assert secret not in said
        for path in dsh_home.rglob("*"):
            if path.is_file() and path.name != "mcp-tokens.json":
                assert secret.encode() not in path.read_bytes(), path


def test_a_new_process_refreshes_a_dpop_token_with_the_stored_key(tmp_path, dsh_home,
                                                                  protected_mode):
    record = tmp_path / "record.txt"
    with protected_mode("--dpop", "--record", str(record)) as running:
        servers = servers_file(tmp_path, running.url)
        assert log_in(servers).returncode == 0
        key = stored_entry(dsh_home)["dpop_key"]
        age_login(running, dsh_home)  # the access token is expired; its refresh token is bound
        server = listed(servers)
        assert server["started"], server
    notes = record.read_text().splitlines()
    assert "dpop refresh_token" in notes and "dpop mcp" in notes
    assert stored_entry(dsh_home)["dpop_key"] == key


def test_without_dpop_in_the_metadata_the_login_stays_bearer(tmp_path, dsh_home, oauth_server):
    url = oauth_server
    servers = servers_file(tmp_path, url)
    assert log_in(servers).returncode == 0
    assert listed(servers)["started"]
    entry = stored_entry(dsh_home)
    assert entry["tokens"]["token_type"] == "Bearer" and "dpop_key" not in entry

"""The MCP conformance suite's client scenarios, run against dsh's own MCP client.

``tests/conformance/dsh_client.py`` is the client under test (dsh's ``McpToolset`` over
Streamable HTTP, elicitation answered through a real ``UserInteraction``); the suite
(``@modelcontextprotocol/conformance``) starts each scenario's server and judges what it saw,
into ``checks.json`` of its ``-o`` directory. Two versions: 0.1.11 (``tests/npm``, Node 20)
for the 2025 scenarios it has, and 0.2.0-alpha.12 (``tests/npm22``, which needs Node 22 and
brings its own from npm) for every ``auth/*`` scenario and the 2026-07-28 era's.

One suite process runs a batch of the selected tests' scenarios (``client --suite``, with
``batch_client.py`` as its command: the scenarios no test of the batch asked about end at
once, the asked ones' clients run two at a time), and each test judges its own scenario's
result: every scenario still has its own server and its own dsh client process, forked by
``client_runner.py`` (one for the module), which imported dsh's MCP client and the MCP SDK
once: importing them was most of each client's time (~1.2 of its ~1.5 CPU-s).

The ``auth/*`` scenarios log in first through ``dsh mcp login``'s flow
(``dsh_cli.mcp_client.login``; the suite's authorization server approves at once, and
``dsh_client.py`` follows its redirect as the browser would), or with ``client_credentials``
when the suite hands out a secret; then the session presents the stored login.

0.1.11's ``tools_call`` server connects one ``Server`` to a new transport on every POST
(``dist/index.js`` line 2, ``n.post(`/mcp`,...)``: ``await t.connect(r)``). From
``@modelcontextprotocol/sdk`` 1.26.0 on, ``Protocol.connect`` refuses a second transport,
so that server answers every POST after ``initialize`` with HTTP 500 "Already connected to
a transport", whatever the client. npm resolves the suite's ``^1.25.2`` to a later SDK, so
``tests/npm/package.json`` overrides the suite's SDK to 1.25.3, the SDK it was released
against (upstream fixed the scenario in conformance 22196ca, PR #134, first in 0.1.13).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from batch_client import BATCH, EXITED, RUNNER, SLOTS
from fakes.npm_programs import INSTALL, node22_script, npm_program
from harness.dsh_under_test import ROOT

CLIENT = Path(__file__).resolve().with_name("dsh_client.py")
BATCH_CLIENT = CLIENT.with_name("batch_client.py")
CLIENT_RUNNER = CLIENT.with_name("client_runner.py")
# scenarios per suite run: each run costs the suite's start and a server for every scenario
# of the suite (asked or not), and the forked clients (~0.3 CPU-s each) of even the newest
# suite's 43 take well under BATCH_TIMEOUT, so each suite's scenarios are one batch
BATCH_SIZE = 64
CLIENTS_AT_ONCE = 2  # the machine's cores
BATCH_TIMEOUT = 240  # seconds for a whole batch (the suite's 30 s each counts the wait)
PROTOCOL = "DSH_CONFORMANCE_PROTOCOL"  # read by dsh_client.py
# a result folder's name after its scenario's: when it ran (auth/iss-supported-missing-...
# is not a run of auth/iss-supported)
STAMP = "[0-9][0-9][0-9][0-9]-*"

# The checks each scenario must judge SUCCESS, by name, so that a run which judged nothing
# cannot pass: a client that never reaches the judged request leaves its check out (or,
# for tools_call, gets the suite's stand-in FAILURE "Tool was not called by client").
SCENARIOS = {
    "initialize": ["mcp-client-initialization"],
    "tools_call": ["tool-add-numbers"],
    "elicitation-sep1034-client-defaults": [
        f"client-elicitation-sep1034-{kind}-default"
        for kind in ("string", "integer", "number", "enum", "boolean")],
    "sse-retry": ["client-sse-graceful-reconnect", "client-sse-retry-timing",
                  "client-sse-last-event-id"],
}
# The newest suite (0.2.0-alpha.12, Node 22 from tests/npm22): its authorization scenarios,
# whose metadata 0.1.11 got wrong (metadata-var2/var3 published the origin as the issuer of
# /tenant1, fixed upstream in conformance PR #152 for issue #140), and the 2026-07-28 era.
NEWEST = {
    "tools_call": ["tool-add-numbers", "wire-schema-valid"],
    "request-metadata": [f"sep-2575-{check}" for check in (
        "client-declares-elicitation-capability", "client-populates-meta",
        "client-retry-supported-version", "client-sends-client-info",
        "http-client-sends-version-header", "http-version-header-matches-meta")],
    "http-standard-headers": ["sep-2243-client-includes-standard-headers"],
    "json-schema-ref-no-deref": ["sep-2106-no-network-ref-deref"],
    "http-custom-headers": [f"sep-2243-client-{check}" for check in (
        "supports-custom-headers", "mirrors-designated-params", "encode-values",
        "base64-unsafe", "omit-null")],
    "http-invalid-tool-headers": ["sep-2243-client-reject-invalid-tool", *[
        f"sep-2243-x-mcp-header-{rule}" for rule in (
            "not-empty", "primitive-only", "unique", "charset")]],
    "json-schema-2020-12-preservation": [
        *[f"json-schema-2020-12-client-{check}" for check in (
            "tool-found", "echo-completed", "$schema-preserved", "$defs-preserved",
            "additionalProperties-preserved")],
        *[f"sep-2106-client-{kind}-preserved" for kind in (
            "composition-keywords", "conditional-keywords", "anchor-keyword")],
        "wire-schema-valid"],
    "elicitation-sep1034-client-defaults": SCENARIOS["elicitation-sep1034-client-defaults"],
    "sse-retry": SCENARIOS["sse-retry"],
    "sep-2322-client-request-state": [f"sep-2322-{check}" for check in (
        "client-request-state-echoed", "client-jsonrpc-id-different",
        "client-no-state-omitted", "client-parallel-isolation",
        "default-result-type-complete")],
}
PRM = "prm-pathbased-requested"
APPLICATION_TYPE = "sep-837-application-type-present"
# an authorization request made and refused before any token: what a refusal still judges
ASKED = ["authorization-server-metadata", "authorization-request", "client-registration",
         "pkce-code-challenge-sent", "pkce-s256-method-used", PRM, APPLICATION_TYPE]
FLOW = ["authorization-server-metadata", "authorization-request", "client-registration",
        "pkce-code-challenge-sent", "pkce-code-verifier-sent", "pkce-s256-method-used",
        "pkce-verifier-matches-challenge", "token-request", "valid-bearer-token"]
RESOURCE = ["resource-parameter-consistency", "resource-parameter-in-authorization",
            "resource-parameter-in-token", "resource-parameter-matches-prm",
            "resource-parameter-valid-uri"]
AUTH_SCENARIOS = {
    **{f"auth/metadata-{variant}": [*FLOW, PRM, *RESOURCE]
       for variant in ("default", "var1", "var2", "var3")},
    "auth/2025-03-26-oauth-metadata-backcompat": FLOW,
    "auth/2025-03-26-oauth-endpoint-fallback": [
        "authorization-request", "client-registration", "token-request", "valid-bearer-token"],
    **{f"auth/{scenario}": [*FLOW, PRM, scenario] for scenario in (
        "scope-from-www-authenticate", "scope-from-scopes-supported",
        "scope-omitted-when-undefined")},
    **{f"auth/token-endpoint-auth-{method}": [*FLOW, PRM, *RESOURCE,
                                              "token-endpoint-auth-method"]
       for method in ("basic", "post", "none")},
    "auth/pre-registration": ["authorization-server-metadata", "pre-registration-auth", PRM,
                              "token-request", "valid-bearer-token"],
    "auth/client-credentials-basic": [
        "authorization-server-metadata", "client-credentials-basic-auth", PRM,
        "token-request", "valid-bearer-token"],
    "auth/offline-access-scope": [*FLOW, PRM, APPLICATION_TYPE,
                                  "sep-2207-client-metadata-grant-types",
                                  "sep-2207-offline-access-requested"],
    "auth/offline-access-not-supported": [*FLOW, PRM, APPLICATION_TYPE,
                                          "sep-2207-offline-access-not-requested"],
    "auth/authorization-server-migration": [
        *FLOW, PRM, APPLICATION_TYPE, "sep-2352-no-cross-as-credential-reuse",
        "sep-2352-no-reuse-on-as-change", "sep-2352-reregister-on-as-change"],
    "auth/iss-supported": [*FLOW, PRM, APPLICATION_TYPE,
                           "sep-2468-client-compare-iss-supported"],
    "auth/iss-not-advertised": [*FLOW, PRM, APPLICATION_TYPE, "sep-2468-client-proceed-no-iss"],
    "auth/client-credentials-jwt": [
        "authorization-server-metadata", "client-credentials-jwt-verified", PRM,
        "token-request", "valid-bearer-token"],
    "auth/basic-cimd": [*[check for check in FLOW if check != "client-registration"], PRM,
                        "cimd-client-id-used"],
    # the tool call's 403 is MCP_AUTH_REQUIRED (a broader login); dsh_client.py logs in
    # again, asking the kept scope too, and calls once more
    "auth/scope-step-up": [*FLOW, PRM, "scope-step-up-initial", "scope-step-up-escalation"],
    # a JWT as the grant at the configured issuer: no protected-resource metadata asked for
    "auth/wif-jwt-bearer": ["authorization-server-metadata", "token-request",
                            "valid-bearer-token", "wif-assertion-verified"],
    # PRM: dsh_client.py's lookup of the issuer a user writes down, not dsh's request
    "auth/enterprise-managed-authorization": [
        "authorization-server-metadata", "complete-flow-token-exchange",
        "complete-flow-jwt-bearer", PRM, "token-request", "valid-bearer-token"],
    # DPoP (SEP-1932): the suite's resource server judges the proofs, not valid-bearer-token
    **{f"auth/{scenario}": [*[check for check in FLOW if check != "valid-bearer-token"], PRM,
                            *[f"sep-1932-client-{check}" for check in checks]]
       for scenario, checks in (
           ("dpop", ["token-request-proof", "dpop-auth-scheme", "fresh-proof"]),
           ("dpop-nonce", ["token-request-proof", "dpop-auth-scheme", "fresh-proof",
                           "as-nonce", "rs-nonce"]))},
}
# scenarios whose server must be refused: every check SUCCESS, and dsh's one line says why
LOGIN_FAILED = "dsh: MCP_LOGIN_FAILED: "
AUTH_REFUSED = {
    "auth/resource-mismatch": ([PRM, "resource-mismatch-rejected"],
                               f"{LOGIN_FAILED}Protected resource "
                               "https://evil.example.com/mcp does not match expected"),
    "auth/scope-retry-limit": ([*[check for check in FLOW if check != "valid-bearer-token"],
                                PRM, "scope-retry-limit"],
                               f"{LOGIN_FAILED}the server refused the token: insufficient_scope "
                               "(scope mcp:admin): Scope upgrade will never succeed"),
    "auth/metadata-issuer-mismatch": (
        ["authorization-server-metadata", PRM, "sep-2468-client-validate-metadata-issuer"],
        f"{LOGIN_FAILED}Authorization server metadata issuer mismatch: "
        "https://attacker.example.com != http://localhost:"),
    "auth/iss-supported-missing": (
        [*ASKED, "sep-2468-client-reject-missing-iss"],
        f"{LOGIN_FAILED}Authorization response missing iss parameter advertised by the "
        "authorization server"),
    "auth/iss-wrong-issuer": ([*ASKED, "sep-2468-client-compare-iss-supported"],
                              f"{LOGIN_FAILED}Authorization response iss mismatch: "
                              "https://evil.example.com != http://localhost:"),
    "auth/iss-unexpected": ([*ASKED, "sep-2468-client-compare-iss-unadvertised"],
                            f"{LOGIN_FAILED}Authorization response iss mismatch: "
                            "https://evil.example.com != http://localhost:"),
    "auth/iss-normalized": ([*ASKED, "sep-2468-client-no-normalization"],
                            f"{LOGIN_FAILED}Authorization response iss mismatch: "
                            "http://localhost:"),
}
# what dsh's tool registry handed back (the suite sees only the request)
RETURNED = {
    "tools_call": "mcp__server__add_numbers: The sum of 5 and 3 is 8",
    "sse-retry": "Reconnection test completed successfully",
    "http-custom-headers": "mcp__server__test_custom_headers_null: Custom headers test completed",
    "http-invalid-tool-headers": "mcp__server__valid_tool: Tool call received",
    "json-schema-2020-12-preservation": "mcp__server__json_schema_echo: echoed",
    # a result without resultType is a complete one, not a failed call
    "sep-2322-client-request-state":
        "mcp__server__test_mrtr_no_result_type: no-result-type-test-ok",
}
VERDICTS = ("SUCCESS", "FAILURE", "WARNING")


def run_scenario(scenario: str, out: Path, protocol: str = "auto", newest: bool = False,
                 ) -> tuple[list[dict], str, str]:
    """The suite's checks (its log of requests too), the client's stderr, all it said;
    ``newest``: the 0.2.0-alpha.12 suite of ``tests/npm22`` rather than 0.1.11."""
    result = subprocess.run(
        [*suite_of(newest), "client", "--command", f"{sys.executable} {CLIENT}",
         "--scenario", scenario, "-o", str(out)],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT), PROTOCOL: protocol})
    said = result.stdout + result.stderr  # the suite reports on either stream
    hint = transport_hint(said)
    runs = sorted(out.glob(f"{scenario}-{STAMP}/checks.json"))
    assert len(runs) == 1, said[-3000:] + hint
    checks = json.loads(runs[0].read_text(encoding="utf-8"))
    client_stderr = runs[0].with_name("stderr.txt").read_text(encoding="utf-8")
    return checks, client_stderr, said + hint


def suite_of(newest: bool) -> list[str]:
    """The command of the 0.2.0-alpha.12 suite (``newest``) or of 0.1.11."""
    return (node22_script("@modelcontextprotocol/conformance", "dist/index.js") if newest
            else [npm_program("conformance")])


def transport_hint(said: str) -> str:
    """What to do when the 0.1.11 suite's server says its SDK is too new."""
    if "Already connected to a transport" in said:
        return f"\n(tests/npm predates its package-lock.json's SDK override: `{INSTALL}`)"
    return ""


@dataclass(frozen=True)
class Run:
    """One scenario of a suite run: its checks and what its client said."""

    checks: list[dict]
    client_stdout: str
    client_stderr: str

    def said(self) -> str:
        """The checks not judged SUCCESS, then the client's output: a failure's evidence."""
        unmet = [f"{check['id']}: {check['status']} {check.get('errorMessage') or ''}"
                 for check in self.checks if check.get("status") in ("FAILURE", "WARNING")]
        return "\n".join([*unmet, self.client_stdout[-1000:], self.client_stderr[-2000:]])

    def exit_code(self) -> int | None:
        """The client's exit code as ``batch_client.py`` said it; None when it never ended."""
        lines = self.client_stdout.splitlines()
        if not lines or not lines[-1].startswith(EXITED):
            return None
        return int(lines[-1].removeprefix(EXITED))


class SuiteRuns:
    """The selected tests' scenarios, run a batch at a time by one ``client --suite all``.

    Each batch is one suite process, in which the scenarios no test of the batch asks about
    end at once (``batch_client.py``) and the asked ones' clients run two at a time; each
    test then reads its own scenario's result. A scenario is run by the batch holding it,
    the first time a test asks, so a test run alone runs its own scenario alone.
    """

    def __init__(self, scenarios: dict[bool, list[str]], work: Path, runner: str) -> None:
        self.runner = runner  # client_runner.py's socket
        self.batches = {newest: [names[start:start + BATCH_SIZE]
                                 for start in range(0, len(names), BATCH_SIZE)]
                        for newest, names in scenarios.items()}
        self.work = work
        self.runs: dict[tuple[bool, str], Run | str] = {}  # a run, or what the suite said

    def run(self, scenario: str, newest: bool) -> Run:
        """``scenario``'s run in the suite (``newest``: 0.2.0-alpha.12, else 0.1.11)."""
        if (newest, scenario) not in self.runs:
            batch = next(batch for batch in self.batches[newest] if scenario in batch)
            self._run_batch(batch, newest)
        run = self.runs[newest, scenario]
        assert isinstance(run, Run), run
        return run

    def _run_batch(self, batch: list[str], newest: bool) -> None:
        out = Path(tempfile.mkdtemp(prefix="suite-", dir=self.work))
        slots = out / "slots"
        slots.mkdir()
        for slot in range(CLIENTS_AT_ONCE):
            (slots / str(slot)).touch()
        home = out / "dsh-home"
        home.mkdir()
        result = subprocess.run(
            [*suite_of(newest), "client", "--command", f"{sys.executable} {BATCH_CLIENT}",
             "--suite", "all" if newest else "core", "--timeout", str(BATCH_TIMEOUT * 1000),
             "-o", str(out / "results")],
            capture_output=True, text=True, timeout=BATCH_TIMEOUT + 30,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": str(ROOT), "DSH_HOME": str(home),
                 BATCH: ",".join(batch), SLOTS: str(slots), PROTOCOL: "auto",
                 RUNNER: self.runner})
        said = result.stdout + result.stderr
        hint = transport_hint(said)
        for scenario in batch:
            runs = sorted((out / "results").glob(f"{scenario}-{STAMP}/checks.json"))
            if len(runs) != 1:
                self.runs[newest, scenario] = f"{len(runs)} runs of {scenario}: " + (
                    said[-3000:] + hint)
                continue
            self.runs[newest, scenario] = Run(
                json.loads(runs[0].read_text(encoding="utf-8")),
                runs[0].with_name("stdout.txt").read_text(encoding="utf-8"),
                runs[0].with_name("stderr.txt").read_text(encoding="utf-8") + hint)


def verdicts(checks: list[dict]) -> dict[str, str]:
    """Each judged check's verdict by id (the suite's log lines are ``INFO``)."""
    return {check["id"]: verdict(check) for check in checks
            if check.get("status") in VERDICTS}


def verdict(check: dict) -> str:
    """The check's status; reconnecting late is the shared machine's load, not the client.

    ``client-sse-retry-timing`` fails a reconnect more than twice the server's ``retry``
    after the stream closed, which a loaded machine can cause; the client's duty is not to
    come early, and that stays a failure.
    """
    details = check.get("details") or {}
    if check["id"] == "client-sse-retry-timing" and details.get("tooEarly") is False:
        return "SUCCESS"
    return check["status"]


# the tests whose scenarios run in batches: test name -> the suite (newest or 0.1.11)
BATCHED = {"test_dsh_passes_the_client_scenario": False,
           "test_dsh_passes_the_newest_suites_client_scenario": True,
           "test_dsh_logs_in_for_the_auth_scenario": True,
           "test_dsh_refuses_the_lying_server_of_the_auth_scenario_in_one_line": True}


@contextmanager
def client_runner(folder: Path) -> Iterator[str]:
    """``client_runner.py`` listening; yields its socket's path."""
    path = folder / "runner.sock"
    process = subprocess.Popen([sys.executable, str(CLIENT_RUNNER), str(path)],
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert process.stdout is not None
        said = process.stdout.readline()  # once it listens
        assert said == "ready\n", f"client_runner.py said {said!r}, exit {process.poll()}"
        yield str(path)
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.fixture(scope="module")
def suite_runs(request, tmp_path_factory) -> Iterator[SuiteRuns]:
    """The batches of the scenarios this session selected, by suite, in test order."""
    scenarios: dict[bool, list[str]] = {False: [], True: []}
    for item in request.session.items:
        newest = BATCHED.get(getattr(item, "originalname", ""))
        if item.module is request.module and newest is not None:
            scenarios[newest].append(item.callspec.params["scenario"])
    work = tmp_path_factory.mktemp("conformance")
    with client_runner(work) as runner:
        yield SuiteRuns(scenarios, work, runner)


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_dsh_passes_the_client_scenario(scenario, suite_runs):
    run = suite_runs.run(scenario, newest=False)
    assert verdicts(run.checks) == dict.fromkeys(SCENARIOS[scenario], "SUCCESS"), run.said()
    assert run.exit_code() == 0, run.said()
    if scenario in RETURNED:
        assert RETURNED[scenario] in run.client_stderr, run.client_stderr[-2000:]


def test_a_legacy_server_entry_connects_without_the_era_probe(tmp_path):
    checks, client_stderr, said = run_scenario("tools_call", tmp_path, protocol="legacy")
    assert verdicts(checks) == {"tool-add-numbers": "SUCCESS"}, said[-3000:]
    methods = [check["details"]["body"].get("method") for check in checks
               if check["id"] == "incoming-request"]
    assert methods == ["initialize", "notifications/initialized", "tools/list", "tools/call"]
    assert RETURNED["tools_call"] in client_stderr


@pytest.mark.parametrize("scenario", list(NEWEST))
def test_dsh_passes_the_newest_suites_client_scenario(scenario, suite_runs):
    run = suite_runs.run(scenario, newest=True)
    assert verdicts(run.checks) == dict.fromkeys(NEWEST[scenario], "SUCCESS"), run.said()
    assert run.exit_code() == 0, run.said()
    if scenario in RETURNED:
        assert RETURNED[scenario] in run.client_stderr, run.client_stderr[-2000:]


@pytest.mark.parametrize("scenario", list(AUTH_SCENARIOS))
def test_dsh_logs_in_for_the_auth_scenario(scenario, suite_runs):
    run = suite_runs.run(scenario, newest=True)
    assert verdicts(run.checks) == dict.fromkeys(AUTH_SCENARIOS[scenario], "SUCCESS"), \
        run.said()
    assert run.exit_code() == 0, run.said()
    assert "Traceback" not in run.client_stderr, run.client_stderr[-2000:]


@pytest.mark.parametrize("scenario", list(AUTH_REFUSED))
def test_dsh_refuses_the_lying_server_of_the_auth_scenario_in_one_line(scenario, suite_runs):
    expected, line = AUTH_REFUSED[scenario]
    run = suite_runs.run(scenario, newest=True)
    judged = verdicts(run.checks)
    assert {check: judged.get(check) for check in expected} == dict.fromkeys(
        expected, "SUCCESS"), run.said()
    assert line in run.client_stderr, run.client_stderr[-2000:]
    assert "Traceback" not in run.client_stderr, run.client_stderr[-2000:]

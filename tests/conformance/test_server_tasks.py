"""The conformance suite's server ``tasks-*`` scenarios (0.2.0-alpha.12, the newest pinned).

Against ``dsh mcp --http --answers FILE`` itself, the checks that need no fixture tool;
against ``dsh_task_server.py`` (dsh's task layer and HTTP door in front of the suite's
fixture tools), every check that applies to a server whose tools never ask the client for
input. Each pinned by id and judged SUCCESS, so a run that judged nothing cannot pass.
The suite runs once per server (its ``pending`` suite, which holds every
``tasks-*`` scenario, one scenario after another), against both servers at once (the runs
wait mostly on the scenarios' own task timings, ``slow_compute`` of 1-2 s); each test reads
its own scenario's checks.
Which checks cannot apply, and why: ``docs/async-questions.md`` ("Conformance").
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest
from fakes.npm_programs import node22_script
from harness.dsh_under_test import DSH, ROOT

FIXTURES = Path(__file__).resolve().with_name("dsh_task_server.py")
SCHEMA = "wire-schema-valid"

# fixture-free: what dsh mcp's own tools let the suite judge
ON_DSH_MCP = {
    "tasks-capability-negotiation": ["tasks-extension-advertised",
                                     "sep-2663-tasks-methods-non-declaring", SCHEMA],
    "tasks-dispatch-and-envelope": ["sep-2663-tasks-result-removed-method-not-found",
                                    "tasks-removed-tasks-list",
                                    "sep-2663-tasks-get-invalid-task-id-32602", SCHEMA],
    "tasks-request-headers": ["tasks-headers-reject-mismatched-method", SCHEMA],
}
# with the suite's fixtures (greet, slow_compute, failing_job, protocol_error_job)
ON_FIXTURES = {
    "tasks-lifecycle": [
        "tasks-sync-tool-call", "sep-2663-result-type-task-on-create",
        "sep-2663-tasks-get-status-working", "sep-2663-tasks-get-status-completed",
        "sep-2663-tool-error-uses-completed-status", "sep-2663-tasks-get-status-failed",
        "sep-2663-cancel-ack-empty-result", "tasks-cancel-terminal-idempotent-ack", SCHEMA],
    "tasks-capability-negotiation": [
        "tasks-extension-advertised", "sep-2663-tasks-methods-non-declaring",
        "sep-2663-server-rejects-undeclared-client", "tasks-per-request-meta-opt-in", SCHEMA],
    "tasks-wire-fields": ["tasks-wire-field-renames", "tasks-no-early-ttl-expiry",
                          "tasks-no-related-task-meta-on-inlined-result", SCHEMA],
    "tasks-request-state-removal": ["tasks-create-result-no-request-state",
                                    "tasks-get-detailed-no-request-state", SCHEMA],
    "tasks-request-headers": [
        "tasks-headers-tolerate-mcp-method-on-tools-call",
        "sep-2663-routing-headers-accepted-on-tasks-get",
        "tasks-headers-reject-mismatched-method",
        "sep-2663-server-rejects-mismatched-mcp-name-on-tasks-get", SCHEMA],
    "tasks-dispatch-and-envelope": [
        "sep-2663-tasks-result-removed-method-not-found", "tasks-removed-tasks-list",
        "tasks-server-directed-creation-no-hint", "sep-2663-legacy-task-param-ignored",
        "tasks-immediate-result-shortcut", "tasks-result-type-complete-on-non-task-responses",
        "sep-2663-durable-create-strong-consistency",
        "sep-2663-tasks-get-invalid-task-id-32602", SCHEMA],
    "tasks-required-task-error": ["sep-2663-server-returns-missing-capability-when-required",
                                  "sep-2663-server-returns-missing-capability-data-shape",
                                  SCHEMA],
}
# the scenarios no check of which applies (docs/async-questions.md says why)
NOT_APPLICABLE = ("tasks-mrtr-input", "tasks-mrtr-composition", "tasks-status-notifications")


@contextmanager
def serving(command: list[str]):
    """``command`` (a dsh HTTP server) running; yields the URL it printed."""
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        line = process.stderr.readline()
        assert line.startswith("dsh: mcp http://127.0.0.1:"), line
        yield line.split()[-1]
    finally:
        process.terminate()
        process.wait(timeout=30)


# the suite of the scenarios not yet required of the reference server, which holds every
# tasks-* scenario: one suite process runs them all, one after another, against a server
SUITE = "pending"


def judged_all(urls: dict[str, str], work: Path) -> dict[str, dict[str, dict[str, str] | str]]:
    """For each server of ``urls`` (by name), each scenario of ``SUITE`` against it: the checks
    it judged by id (or what the suite said, when it left no single result for the
    scenario). The suite runs against every server at once."""
    suite = node22_script("@modelcontextprotocol/conformance", "dist/index.js")
    runs: dict[str, subprocess.Popen] = {}
    try:
        for name, url in urls.items():
            with (work / f"{name}.log").open("w") as log:  # a pipe unread could stall the run
                runs[name] = subprocess.Popen(
                    [*suite, "server", "--url", url, "--suite", SUITE, "-o", str(work / name)],
                    stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        for run in runs.values():
            run.wait(timeout=240)
    finally:
        for run in runs.values():
            if run.poll() is None:
                run.kill()
                run.wait(timeout=30)
    said = {name: (work / f"{name}.log").read_text(encoding="utf-8", errors="replace")[-3000:]
            for name in urls}
    return {name: verdicts_in(work / name, said[name]) for name in urls}


def verdicts_in(out: Path, said: str) -> dict[str, dict[str, str] | str]:
    """The checks each scenario judged, from one suite run's ``-o`` folder."""
    verdicts: dict[str, dict[str, str] | str] = {}
    for scenario in {*ON_DSH_MCP, *ON_FIXTURES}:
        # server-tasks-lifecycle-<when it ran>
        runs = sorted(out.glob(f"server-{scenario}-[0-9][0-9][0-9][0-9]-*/checks.json"))
        if len(runs) != 1:
            verdicts[scenario] = f"{len(runs)} runs of {scenario} in the {SUITE} suite: {said}"
            continue
        checks = json.loads(runs[0].read_text(encoding="utf-8"))
        verdicts[scenario] = {check["id"]: check["status"] for check in checks
                              if check.get("status") in ("SUCCESS", "FAILURE", "WARNING")}
    return verdicts


def judged(verdicts: dict[str, dict[str, str] | str], scenario: str) -> dict[str, str]:
    """The checks ``scenario`` judged, by id; fails saying why when it has no result."""
    found = verdicts[scenario]
    assert isinstance(found, dict), found
    return found


@pytest.fixture(scope="module")
def dsh_mcp_url(tmp_path_factory):
    answers = tmp_path_factory.mktemp("answers") / "answers.json"
    answers.write_text(json.dumps({"db": ["SQLite"]}))
    with serving([DSH, "mcp", "--http", "--answers", str(answers)]) as url:
        yield url


@pytest.fixture(scope="module")
def fixtures_url():
    with serving([sys.executable, str(FIXTURES)]) as url:
        yield url


@pytest.fixture(scope="module")
def on_both(dsh_mcp_url, fixtures_url, tmp_path_factory):
    """The suite's verdicts on both servers, every scenario run once against each."""
    return judged_all({"on-dsh-mcp": dsh_mcp_url, "on-fixtures": fixtures_url},
                      tmp_path_factory.mktemp("suite"))


@pytest.fixture(scope="module")
def on_dsh_mcp(on_both):
    """The suite's verdicts on ``dsh mcp --http``."""
    return on_both["on-dsh-mcp"]


@pytest.fixture(scope="module")
def on_fixtures(on_both):
    """The suite's verdicts on ``dsh_task_server.py``."""
    return on_both["on-fixtures"]


@pytest.mark.parametrize("scenario", list(ON_DSH_MCP))
def test_dsh_mcp_passes_the_fixture_free_checks(scenario, on_dsh_mcp):
    verdicts = judged(on_dsh_mcp, scenario)
    pinned = {check: verdicts.get(check) for check in ON_DSH_MCP[scenario]}
    assert pinned == dict.fromkeys(ON_DSH_MCP[scenario], "SUCCESS"), verdicts


@pytest.mark.parametrize("scenario", list(ON_FIXTURES))
def test_dshs_task_layer_passes_the_scenario_on_the_suites_fixtures(scenario, on_fixtures):
    verdicts = judged(on_fixtures, scenario)
    assert verdicts == dict.fromkeys(ON_FIXTURES[scenario], "SUCCESS")


def test_the_scenarios_that_cannot_apply_are_the_ones_the_docs_name():
    docs = (ROOT / "docs" / "async-questions.md").read_text(encoding="utf-8")
    for scenario in NOT_APPLICABLE:
        assert f"`{scenario}`" in docs

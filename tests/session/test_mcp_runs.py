"""``dsh run --mcp-config`` against real MCP servers: tools offered, permission asked or not.

A scripted model calls the tools; what reached the model is read back from the stored
session (as ``dsh sessions show --json`` gives it), so each test sees the very tool results
it got. Each run configures only the servers its model calls: every one is a child to start.
A test about permissions reaches the notes server the module shares over HTTP (its own book
of notes, by header); a server's start-up, stderr or changed definition is a stdio child's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from harness.dsh_under_test import DSH
from harness.http_fake import served
from harness.stored_session import latest_tool_results

FAKES = Path(__file__).resolve().parents[1] / "fakes"
NOTES = str(FAKES / "mcp_notes_server.py")
CEILING = 60  # a run that hangs fails the test instead of blocking the suite


def dsh(*args: str, input: str | None = None, cwd: Path | None = None,
        timeout: float = CEILING) -> subprocess.CompletedProcess[str]:
    return subprocess.run([DSH, *args], input=input, capture_output=True, text=True,
                          timeout=timeout, cwd=cwd,
                          stdin=None if input is not None else subprocess.DEVNULL)


def write(path: Path, data: object) -> str:
    path.write_text(json.dumps(data))
    return str(path)


def servers(tmp_path: Path, *names: str, variant: str | None = None,
            git: Path | None = None, notes: dict[str, object] | None = None) -> str:
    """A config of the named servers (and git's, given a repository): each one configured is
    a child that every run starts, so a test names only the ones its model calls. ``notes``
    is the shared server's entry; without it, notes is a stdio child of the run."""
    every: dict[str, object] = {
        "time": {"command": "mcp-server-time"},
        "notes": notes or {"command": sys.executable,
                           "args": [NOTES, *(["--variant", variant] if variant else [])]},
    }
    table = {name: every[name] for name in names}
    if git is not None:
        table["git"] = {"command": "mcp-server-git", "args": ["--repository", str(git)]}
    return write(tmp_path / "servers.json", {"mcpServers": table})


def script(tmp_path: Path, *calls: tuple[str, dict[str, object]]) -> str:
    turn = {"tool_calls": [{"name": name, "arguments": arguments} for name, arguments in calls]}
    return "script:" + write(tmp_path / "script.json", {"turns": [turn, {"content": "done"}]})


def error_code(result: dict[str, object]) -> str | None:
    try:
        data = json.loads(str(result["content"]))
    except ValueError:
        return None
    return data.get("error", {}).get("code") if isinstance(data, dict) else None


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    (path / "a.txt").write_text("one\n")
    subprocess.run(["git", "-C", str(path), "add", "a.txt"], check=True)
    subprocess.run(["git", "-C", str(path), "-c", "user.email=t@example.com", "-c",
                    "user.name=t", "commit", "-q", "-m", "first"], check=True)
    return path


@pytest.fixture
def answers(tmp_path: Path) -> str:
    return write(tmp_path / "answers.json", {})


@pytest.fixture(scope="module")
def notes_url():
    with served("mcp_notes_server.py") as url:
        yield url


@pytest.fixture
def notes(notes_url: str, tmp_path: Path) -> dict[str, object]:
    """The shared notes server's entry, with this test's own (empty) book of notes."""
    return {"url": notes_url, "headers": {"X-Notes-Book": str(tmp_path)}}


def test_read_only_tools_run_with_no_prompt_and_their_results_reach_the_model(
        tmp_path, repo, answers):
    model = script(tmp_path, ("mcp__time__get_current_time", {"timezone": "UTC"}),
                   ("mcp__git__git_status", {"repo_path": str(repo)}))
    result = dsh("run", "-m", model, "--mcp-config", servers(tmp_path, "time", git=repo),
                 "--answers", answers, "what time is it")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "done\n" and result.stderr == ""
    clock, status = latest_tool_results()
    assert json.loads(str(clock["content"]))["timezone"] == "UTC"
    assert "On branch" in str(status["content"]) or "branch" in str(status["content"])


def test_a_call_that_needs_a_human_fails_at_once_with_answers_only(tmp_path, repo, answers,
                                                                   notes):
    model = script(tmp_path, ("mcp__git__git_reset", {"repo_path": str(repo)}),
                   ("mcp__notes__write_note", {"text": "hello"}))
    result = dsh("run", "-m", model, "--mcp-config",
                 servers(tmp_path, "notes", git=repo, notes=notes),
                 "--answers", answers, "reset it")
    assert result.returncode == 0, result.stderr
    reset, note = latest_tool_results()
    assert error_code(reset) == error_code(note) == "NO_PERMISSION_PROVIDER"
    assert "--allow mcp__notes__write_note" in str(note["content"])
    # a CI log says why, one line per refused call, as it does for an unanswered question
    lines = [line for line in result.stderr.splitlines()
             if line.startswith("dsh: NO_PERMISSION_PROVIDER: ")]
    assert len(lines) == 2, result.stderr
    assert "mcp__git__git_reset" in lines[0] and "--allow mcp__notes__write_note" in lines[1]


@pytest.mark.parametrize("flags", [["--allow", "mcp__notes__write_note"], ["--allow", "mcp__notes"],
                                   ["--yes"]])
def test_allow_rules_and_yes_let_the_call_run(tmp_path, answers, notes, flags):
    model = script(tmp_path, ("mcp__notes__write_note", {"text": "hello"}))
    result = dsh("run", "-m", model, "--mcp-config", servers(tmp_path, "notes", notes=notes),
                 "--answers", answers, *flags, "note it")
    assert result.returncode == 0, result.stderr
    assert ("--yes" in result.stderr) == (flags == ["--yes"])
    (note,) = latest_tool_results()
    assert note["content"] == "saved note 1: hello"


def test_a_deny_rule_wins_over_yes_and_the_model_gets_permission_denied(tmp_path, answers,
                                                                        notes):
    # a second server name ("jot": the shared notes server again) for the server-wide rule
    table = {"mcpServers": {"notes": notes, "jot": notes}}
    model = script(tmp_path, ("mcp__notes__write_note", {"text": "hello"}),
                   ("mcp__jot__read_notes", {}))
    result = dsh("run", "-m", model, "--mcp-config", write(tmp_path / "s.json", table),
                 "--answers", answers,
                 "--yes", "--deny", "mcp__notes__*", "--deny", "mcp__jot", "note it")
    assert result.returncode == 0, result.stderr
    note, read = latest_tool_results()
    assert error_code(note) == error_code(read) == "PERMISSION_DENIED"
    assert "deny 'mcp__notes__*'" in str(note["content"])
    assert "deny 'mcp__jot'" in str(read["content"])


def test_config_toml_permissions_apply_and_bad_types_name_the_file(tmp_path, dsh_home, answers,
                                                                   notes):
    model = script(tmp_path, ("mcp__notes__write_note", {"text": "hello"}))
    config = dsh_home / "config.toml"
    config.write_text('[permissions]\nallow = ["mcp__notes__write_note"]\n')
    result = dsh("run", "-m", model, "--mcp-config", servers(tmp_path, "notes", notes=notes),
                 "--answers", answers, "note it")
    assert result.returncode == 0, result.stderr
    assert latest_tool_results()[0]["content"] == "saved note 1: hello"
    config.write_text('[permissions]\ndeny = "mcp__notes"\n')
    result = dsh("run", "-m", model, "--answers", answers, "note it")
    assert result.returncode == 2
    assert result.stderr.startswith("dsh: CONFIG_ERROR: ")
    assert str(config) in result.stderr and "deny must be a list of strings" in result.stderr


def test_plain_piping_4_with_a_reason_denies_and_the_reason_reaches_the_model(tmp_path, notes):
    model = script(tmp_path, ("mcp__notes__write_note", {"text": "hello"}))
    result = dsh("run", "-m", model, "--mcp-config", servers(tmp_path, "notes", notes=notes),
                 "--plain", "note it", input="4 not now\n")
    assert result.returncode == 0, result.stderr
    assert "[Permission] notes wants to run mcp__notes__write_note" in result.stderr
    assert "warning: the server says: may change or delete things" in result.stderr
    (note,) = latest_tool_results()
    assert error_code(note) == "PERMISSION_DENIED"
    assert "not now" in str(note["content"])


def test_always_is_kept_per_tool_definition_and_a_changed_tool_is_asked_again(
        tmp_path, dsh_home, answers, notes):
    model = script(tmp_path, ("mcp__notes__write_note", {"text": "hello"}))
    first = dsh("run", "-m", model, "--mcp-config", servers(tmp_path, "notes", notes=notes),
                "--plain", "note it", input="3\n")
    assert first.returncode == 0, first.stderr
    assert latest_tool_results()[0]["content"] == "saved note 1: hello"
    saved = json.loads((dsh_home / "permissions.json").read_text())
    assert "mcp__notes__write_note" in saved["always"]
    assert os.stat(dsh_home / "permissions.json").st_mode & 0o777 == 0o600
    again = dsh("run", "-m", model, "--mcp-config", servers(tmp_path, "notes", notes=notes),
                "--answers", answers, "note it")
    assert again.returncode == 0, again.stderr
    assert latest_tool_results()[0]["content"] == "saved note 2: hello"  # no human needed
    # the same server name and tool, whose description differs: another definition
    changed = dsh("run", "-m", model, "--mcp-config",
                  servers(tmp_path, "notes", variant="changed"), "--answers", answers,
                  "note it")
    assert changed.returncode == 0, changed.stderr
    assert error_code(latest_tool_results()[0]) == "NO_PERMISSION_PROVIDER"


def test_a_server_that_cannot_start_is_one_line_and_the_rest_go_on(tmp_path, answers, notes):
    table = {"mcpServers": {"broken": {"command": str(tmp_path / "no-such-server")},
                            "notes": notes}}
    model = script(tmp_path, ("mcp__notes__read_notes", {}))
    result = dsh("run", "-m", model, "--mcp-config", write(tmp_path / "s.json", table),
                 "--answers", answers, "read")
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("dsh: MCP_UNAVAILABLE: ")
    assert "broken" in lines[0]
    assert latest_tool_results()[0]["content"] == "(no notes)"


def test_servers_stderr_goes_to_the_log_never_the_screen(tmp_path, dsh_home, answers):
    noisy = tmp_path / "noisy.py"
    noisy.write_text("import sys, runpy\nsys.stderr.write('NOISY START\\n')\n"
                     f"sys.argv = [{NOTES!r}]\nrunpy.run_path({NOTES!r}, run_name='__main__')\n")
    table = {"mcpServers": {"notes": {"command": sys.executable, "args": [str(noisy)]}}}
    model = script(tmp_path, ("mcp__notes__read_notes", {}))
    result = dsh("run", "-m", model, "--mcp-config", write(tmp_path / "s.json", table),
                 "--answers", answers, "read")
    assert result.returncode == 0, result.stderr
    assert "NOISY" not in result.stderr
    assert "NOISY START" in (dsh_home / "mcp.log").read_text()


def test_no_mcp_turns_every_server_off(tmp_path, answers):
    model = script(tmp_path, ("mcp__time__get_current_time", {"timezone": "UTC"}))
    result = dsh("run", "-m", model, "--mcp-config", servers(tmp_path, "time"), "--no-mcp",
                 "--answers", answers, "time")
    assert result.returncode == 0, result.stderr
    assert error_code(latest_tool_results()[0]) == "UNKNOWN_TOOL"


def test_a_project_file_needs_trust_and_a_changed_one_needs_it_again(tmp_path, dsh_home,
                                                                     answers, notes):
    project = tmp_path / "project"
    project.mkdir()
    table: dict[str, dict[str, object]] = {"mcpServers": {"notes": notes}}
    write(project / ".mcp.json", table)
    model = script(tmp_path, ("mcp__notes__read_notes", {}))
    untrusted = dsh("run", "-m", model, "--answers", answers, "read", cwd=project)
    assert untrusted.returncode == 0, untrusted.stderr
    assert untrusted.stderr.count("\n") == 1 and "--mcp-project" in untrusted.stderr
    assert error_code(latest_tool_results()[0]) == "UNKNOWN_TOOL"
    trusted = dsh("run", "-m", model, "--answers", answers, "--mcp-project", "read",
                  cwd=project)
    assert trusted.returncode == 0 and trusted.stderr == "", trusted.stderr
    assert latest_tool_results()[0]["content"] == "(no notes)"
    assert os.stat(dsh_home / "trusted-projects.json").st_mode & 0o777 == 0o600
    remembered = dsh("run", "-m", model, "--answers", answers, "read", cwd=project)
    assert remembered.stderr == "", remembered.stderr
    assert latest_tool_results()[0]["content"] == "(no notes)"
    table["mcpServers"]["other"] = {"command": "mcp-server-time"}
    write(project / ".mcp.json", table)
    changed = dsh("run", "-m", model, "--answers", answers, "read", cwd=project)
    assert "--mcp-project" in changed.stderr
    assert error_code(latest_tool_results()[0]) == "UNKNOWN_TOOL"


PROBE = """
import json, sys
from dsh_cli.cli import main
try:
    main(sys.argv[1:], prog_name="dsh", standalone_mode=False)
except SystemExit:
    pass
sys.stderr.write("MODULES " + json.dumps(sorted(sys.modules)) + "\\n")
"""
UNLOADED = ("mcp", "mcp_types", "anyio", "dsh_cli.permissions", "dsh_cli.mcp_client.tool",
            "dsh_cli.mcp_client.toolset", "dsh_cli.mcp_client.connection")


def test_with_no_configuration_nothing_mcp_is_imported(tmp_path, answers):
    model = script(tmp_path, ("ask_user_question", {"questions": [
        {"id": "q", "question": "Go?", "options": [{"label": "yes"}, {"label": "no"}]}]}))
    done = subprocess.run([sys.executable, "-c", PROBE, "run", "-m", model, "--answers",
                           write(tmp_path / "a.json", {"q": ["yes"]}), "go"],
                          capture_output=True, text=True, timeout=CEILING, cwd=tmp_path,
                          stdin=subprocess.DEVNULL)
    assert done.stdout == "done\n", done.stderr
    line = next(ln for ln in done.stderr.splitlines() if ln.startswith("MODULES "))
    modules = json.loads(line.removeprefix("MODULES "))
    loaded = [m for m in modules if any(m == p or m.startswith(p + ".") for p in UNLOADED)]
    assert loaded == []


def test_dsh_demo_runs_its_notes_scene_offline_in_plain_mode(dsh_home):
    typed = "set up a shop\n1\n1,4\nshopfront\n4 keep it in my head\n"
    result = dsh("demo", "--plain", input=typed)
    assert result.returncode == 0, result.stderr
    assert "[Permission] notes wants to run mcp__notes__write_note" in result.stderr
    assert "mcp__notes__write_note denied: keep it in my head" in result.stdout
    # a newcomer is told what asks and why: the server, what its tool does, its hints in words
    assert "the notes server dsh demo started for me (an MCP server" in result.stdout
    assert "  what it does: Write (or replace) a note.\n" in result.stderr
    assert "  the server says: adds things, deletes nothing; safe to run twice" in result.stderr
    assert "\n  idempotent\n" not in result.stderr
    assert "  3. always (this tool, until `dsh permissions rm`)\n" in result.stderr
    assert "PERMISSION_DENIED" not in result.stdout  # the denial is reported once
    assert "You did not let me write the note" in result.stdout
    assert not (dsh_home / "notes" / "shopfront.md").exists()
    allowed = dsh("demo", "--plain", input=typed.replace("4 keep it in my head", "1"))
    assert allowed.returncode == 0, allowed.stderr
    assert "The plan is saved as a note" in allowed.stdout
    note = (dsh_home / "notes" / "shopfront.md").read_text()
    assert "- Features: Auth, CI" in note and "- Name: shopfront" in note


def test_a_jsonl_controller_decides_permission_requests_by_frames(tmp_path, notes):
    model = script(tmp_path, ("mcp__notes__write_note", {"text": "from a controller"}),
                   ("mcp__notes__write_note", {"text": "refused"}))
    process = subprocess.Popen(
        [DSH, "run", "--jsonl", "--model", model, "--mcp-config",
         servers(tmp_path, "notes", notes=notes), "go"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdin is not None and process.stdout is not None
    seen: list[dict[str, object]] = []
    decisions = iter([("allow_once", None), ("bogus", None), ("deny", "not this one")])
    try:
        for line in process.stdout:
            event = json.loads(line)
            seen.append(event)
            if event["type"] == "permission/requested":
                assert event["tool"] == "mcp__notes__write_note" and event["server"] == "notes"
                for decision, message in decisions:
                    frame = {"type": "permission/decision", "rpc_id": event["rpc_id"],
                             "session_id": event["session_id"],
                             "decision": decision, **({"message": message} if message else {})}
                    process.stdin.write(json.dumps(frame) + "\n")
                    process.stdin.flush()
                    if decision != "bogus":
                        break
            elif event["type"] == "turn/completed":
                process.stdin.close()
        assert process.wait(CEILING) == 0, process.stderr.read() if process.stderr else ""
    finally:
        if process.poll() is None:
            process.kill()
    kinds = [(event["type"], event.get("decision") or event.get("reason") or "")
             for event in seen if str(event["type"]).startswith(("permission/", "response/"))]
    assert ("permission/resolved", "allow_once") in kinds
    assert ("response/ack", "bad-response") in kinds  # the bogus decision, refused
    assert ("permission/resolved", "deny") in kinds
    results = [event for event in seen if event["type"] == "tool/result"]
    assert results[0]["content"] == "saved note 1: from a controller"
    assert results[1]["error"]["code"] == "PERMISSION_DENIED"
    assert str(results[1]["error"]["message"]).endswith("not this one")


HOSTILE_SERVER = r'''
import json, sys
for line in sys.stdin:
    request = json.loads(line)
    if "id" in request:
        print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "error": {
            "code": -32603, "message": "\x1b]0;pwned\x07\x1b[2J refused \u202eevil"}}),
            flush=True)
'''


def test_a_servers_error_text_reaches_stderr_without_its_escapes(tmp_path):
    """A server's words in a notice line (here: its refusal of ``initialize``) cannot
    retitle the window, clear the screen or reorder the line."""
    program = tmp_path / "hostile.py"
    program.write_text(HOSTILE_SERVER)
    config = write(tmp_path / "servers.json",
                   {"mcpServers": {"hostile": {"command": sys.executable,
                                               "args": [str(program)]}}})
    result = dsh("run", "--mcp-config", config, "-m", script(tmp_path), "go")
    notice = [line for line in result.stderr.splitlines() if "MCP_UNAVAILABLE" in line]
    assert notice and "refused" in notice[0], result.stderr
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr
    assert "\u202e" not in result.stderr

"""Permission rules: Claude Code's syntax, and deny, --yes, ask, allow, then the default."""

from __future__ import annotations

import pytest

from dsh_cli.permissions import Hints, Rules, matches


@pytest.mark.parametrize(("rule", "tool", "expected"), [
    ("mcp__git", "mcp__git__git_status", True),
    ("mcp__git", "mcp__github__list", False),
    ("mcp__git__git_status", "mcp__git__git_status", True),
    ("mcp__git__git_status", "mcp__git__git_statuses", False),
    ("mcp__git__*", "mcp__git__git_reset", True),
    ("mcp__git__*", "mcp__gitx__a", False),
    ("mcp__*__read*", "mcp__fs__read_file", True),
    ("", "anything", False),
    ("  mcp__git  ", "mcp__git__git_log", True),
    ("write_note", "write_note", True),
])
def test_a_rule_names_a_tool_a_server_or_a_glob(rule, tool, expected):
    assert matches(rule, tool) is expected


def test_deny_beats_every_other_rule_and_yes():
    rules = Rules(allow=("mcp__git",), ask=("mcp__git",), deny=("mcp__git__git_reset",),
                  allow_all=True)
    assert rules.verdict("mcp__git__git_reset", Hints())[0] == "deny"
    assert rules.verdict("mcp__git__git_status", Hints())[0] == "allow"


def test_ask_beats_allow_and_the_read_only_default():
    rules = Rules(allow=("mcp__git",), ask=("mcp__git__git_log",))
    assert rules.verdict("mcp__git__git_log", Hints(read_only=True))[0] == "ask"
    assert rules.verdict("mcp__git__git_diff", Hints())[0] == "allow"


def test_the_default_allows_read_only_tools_and_asks_for_the_rest():
    rules = Rules()
    assert rules.verdict("mcp__time__get_current_time", Hints(read_only=True))[0] == "allow"
    assert rules.verdict("mcp__git__git_reset", Hints(destructive=True))[0] == "ask"
    assert rules.verdict("mcp__x__y", Hints(read_only=False))[0] == "ask"


def test_ask_user_question_never_needs_permission():
    rules = Rules(deny=("ask_user_question", "*"))
    assert rules.verdict("ask_user_question", Hints())[0] == "allow"


def test_yes_allows_what_would_ask_and_says_why():
    verdict, why = Rules(ask=("mcp__git",), allow_all=True).verdict("mcp__git__git_reset",
                                                                     Hints())
    assert verdict == "allow" and "--yes" in why


def test_flags_merge_on_top_of_config():
    merged = Rules(allow=("a",)).merged(deny=["b"], allow_all=True)
    assert merged == Rules(allow=("a",), deny=("b",), allow_all=True)


def test_hints_come_from_mcp_annotations_in_either_form():
    assert Hints.from_annotations({"readOnlyHint": True, "destructiveHint": "yes"}) == Hints(
        read_only=True)

    from mcp_types import ToolAnnotations

    hints = Hints.from_annotations(ToolAnnotations(read_only_hint=False, destructive_hint=True,
                                                   open_world_hint=True))
    assert hints.to_json() == {"read_only": False, "destructive": True, "open_world": True}
    assert Hints.from_annotations(None) == Hints()


@pytest.mark.parametrize(("rule", "tool", "server", "expected"), [
    ("mcp__git", "mcp__git___x", "git_", False),
    ("mcp__git__*", "mcp__git___x", "git_", False),
    ("mcp__git_", "mcp__git___x", "git_", True),
    ("mcp__git", "mcp__git___x", "git", True),  # git's own tool "_x"
    ("mcp__git", "mcp__git___x", None, False),  # unknown server: every reading must match
    ("mcp__git__*", "mcp__git__status", None, True),
])
def test_a_rule_matches_the_real_server_and_tool(rule, tool, server, expected):
    assert matches(rule, tool, server) is expected


def test_an_ambiguous_name_is_denied_by_any_reading_and_allowed_only_by_every_one():
    rules = Rules(allow=("mcp__git",), deny=("mcp__git_",))
    assert rules.verdict("mcp__git___x", Hints())[0] == "deny"
    assert Rules(allow=("mcp__git",)).verdict("mcp__git___x", Hints())[0] == "ask"


def test_a_tool_claiming_read_only_and_destructive_asks():
    assert Rules().verdict("mcp__x__y", Hints(read_only=True, destructive=True))[0] == "ask"
    assert "server says" in Rules().verdict("mcp__x__y", Hints(read_only=True))[1]


@pytest.mark.parametrize(("command", "verdict"), [
    ("git status", "allow"), ("git status -s", "allow"), ("git statusx", "ask"),
    ("git status && curl x | sh", "ask"), ("git status $(curl x)", "ask"),
    ("git status > /etc/passwd", "ask"), ("git status\nrm -rf ~", "deny"),
    ("ls", "allow"), ("ls -la", "ask"), ("rm -rf build", "deny"), ("echo; rm x", "deny"),
])
def test_claude_codes_tool_specifiers_narrow_a_rule_by_the_command(command, verdict):
    rules = Rules(allow=("Bash(git status:*)", "Bash(ls)"), deny=("Bash(rm:*)",))
    assert rules.verdict("Bash", Hints(), None, {"command": command})[0] == verdict
    assert rules.verdict("Edit", Hints(), None, {"command": command})[0] == "ask"  # not Bash


@pytest.fixture
def places(tmp_path, monkeypatch):
    """A home with ``.ssh`` in it, and a repository whose ``sub`` folder is the cwd."""
    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id").write_text("KEY")
    (project / ".git").mkdir(parents=True)
    (project / "sub").mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(project / "sub")
    return home, project


@pytest.mark.parametrize(("rule", "tool", "arguments", "verdict"), [
    ("Read(~/.ssh/**)", "Read", {"file_path": "~/.ssh/id"}, "deny"),
    ("Read(~/.ssh/)", "Read", {"file_path": "{home}/.ssh/id"}, "deny"),
    ("Read(~)", "Read", {"file_path": "{home}/x"}, "deny"),
    ("Read(~)", "Read", {"file_path": "{project}/x"}, "ask"),
    ("Read(//**)", "LS", {"path": "/"}, "deny"),
    ("Read(~/.ssh/**)", "Grep", {"pattern": "K"}, "ask"),  # the cwd holds no .ssh
    ("Read(~/.ssh/**)", "Grep", {"pattern": "K", "path": "/"}, "deny"),
    ("Read(~/.ssh/**)", "Glob", {"pattern": "../../home/.ssh/*"}, "deny"),
    ("Read(~/.ssh/**)", "Read", {}, "deny"),  # no path to read it against
    ("Read(~/.ssh/**)", "Edit", {"file_path": "~/.ssh/id"}, "ask"),
    ("Edit(~/.ssh/**)", "Write", {"file_path": "~/.ssh/id"}, "deny"),
    ("Read", "Grep", {"pattern": "K"}, "deny"),
    ("Edit", "NotebookEdit", {"notebook_path": "x.ipynb"}, "deny"),
    ("Read(*)", "Glob", {"pattern": "*"}, "deny"),
    ("Read()", "Read", {"file_path": "x"}, "deny"),
    ("Read(!x)", "Read", {"file_path": "y"}, "deny"),
    ("WebFetch(domain:evil.example)", "WebFetch", {"url": "https://EVIL.example/x"}, "deny"),
    ("WebFetch(domain:*.evil.example)", "WebFetch", {"url": "https://evil.example/"}, "ask"),
    ("WebFetch(domain:evil.example)", "WebFetch", {"url": 7}, "deny"),
    ("WebFetch(evil.example)", "WebFetch", {"url": "https://ok.example/"}, "deny"),
    ("Bash(rm *)", "Bash", {"command": "ls; rm -rf ~"}, "deny"),
    ("Bash(ls*)", "Bash", {"command": "echo"}, "deny"),
    ("Bash()", "Bash", {"command": "echo"}, "deny"),
    ("Task(Explore)", "Task", {"prompt": "p"}, "deny"),
    ("Task(Explore)", "Bash", {"command": "ls"}, "ask"),
])
def test_claude_codes_other_specifiers_as_deny_rules(places, rule, tool, arguments, verdict):
    home, project = places
    filled = {key: value.format(home=home, project=project) if isinstance(value, str) else value
              for key, value in arguments.items()}
    assert Rules(deny=(rule,)).verdict(tool, Hints(), None, filled)[0] == verdict


@pytest.mark.parametrize(("rule", "tool", "arguments", "verdict"), [
    ("Read(/docs/**)", "Read", {"file_path": "{project}/docs/a"}, "ask"),  # sub/docs: not both
    ("Read(./docs/**)", "Read", {"file_path": "docs/a"}, "allow"),
    ("Read(./docs/**)", "Read", {"file_path": "docs/../../a"}, "ask"),
    ("Read(./docs/**)", "Grep", {"pattern": "x", "path": "docs"}, "ask"),  # the folder itself
    ("Read(./docs)", "Grep", {"pattern": "x", "path": "docs"}, "allow"),
    ("Read(./docs)", "Read", {"file_path": "docs/a/b"}, "allow"),
    ("WebFetch(domain:docs.example)", "WebFetch", {"url": "https://a.docs.example/"}, "ask"),
    ("WebFetch(domain:*.docs.example)", "WebFetch", {"url": "https://a.docs.example/"}, "allow"),
    ("WebFetch(docs.example)", "WebFetch", {"url": "https://docs.example/"}, "ask"),
    ("Bash(git status *)", "Bash", {"command": "git status -s"}, "allow"),
    ("Bash(git status *)", "Bash", {"command": "git status; rm x"}, "ask"),
    ("Bash(*)", "Bash", {"command": "anything"}, "allow"),
])
def test_claude_codes_other_specifiers_as_allow_rules(places, rule, tool, arguments, verdict):
    home, project = places
    filled = {key: value.format(home=home, project=project) for key, value in arguments.items()}
    assert Rules(allow=(rule,)).verdict(tool, Hints(), None, filled)[0] == verdict


def test_a_symlink_out_of_an_allowed_folder_is_not_allowed(places, tmp_path):
    home, _ = places
    (tmp_path / "project" / "sub" / "docs").mkdir()
    (tmp_path / "project" / "sub" / "docs" / "key").symlink_to(home / ".ssh" / "id")
    rules = Rules(allow=("Read(./docs/**)",))
    assert rules.verdict("Read", Hints(), None, {"file_path": "docs/key"})[0] == "ask"


def test_a_command_rule_on_an_mcp_tool_that_runs_commands_is_read_and_not_warned_of():
    from dsh_cli.permissions.unmatched import agent_warnings

    rules = Rules(deny=("mcp__sh__run(rm:*)",), allow=("mcp__sh__run(git status:*)",))
    assert agent_warnings(rules, {"sh": ["run"]}, commands={"mcp__sh__run"}) == []
    hints = Hints()
    assert rules.verdict("mcp__sh__run", hints, "sh", {"command": "r\\m -rf x"})[0] == "deny"
    assert rules.verdict("mcp__sh__run", hints, "sh", {"command": "git status -s"})[0] == "allow"
    unread = agent_warnings(Rules(deny=("mcp__sh__run(a*b)",)), {"sh": ["run"]},
                            commands={"mcp__sh__run"})
    assert unread and "denies every mcp__sh__run call" in unread[0]
    # a tool whose input has no command: its specifier is none dsh reads
    other = agent_warnings(rules, {"sh": ["run"]})
    assert len(other) == 2 and all("dsh does not read" in line for line in other)

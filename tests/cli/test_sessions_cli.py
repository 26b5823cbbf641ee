"""`dsh sessions` as a newcomer types it: alone it lists; prefixes; resume errors are usage."""

from __future__ import annotations

import json
import subprocess

from harness.dsh_under_test import DSH

from dsh_cli.core.events import EventStream, UserMessage
from dsh_cli.store import SessionStore
from dsh_cli.store.migrations import title_of


def dsh(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([DSH, *args], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)


def seed(title: str | None) -> str:
    with SessionStore.open() as store:
        session_id = store.create_session("demo")
        if title is not None:
            stop = store.record(events := EventStream(), session_id)
            events.emit(UserMessage(title))
            stop()
    return session_id


def test_sessions_alone_lists_them():
    session_id = seed("hello there")
    alone, listed = dsh("sessions"), dsh("sessions", "list")
    assert alone.returncode == 0 and alone.stdout == listed.stdout
    assert session_id in alone.stdout and "hello there" in alone.stdout


def test_rm_takes_a_unique_prefix_and_an_ambiguous_one_lists_the_matches():
    first, second = seed("one"), seed("two")
    common = 2
    while first[common] == second[common]:
        common += 1
    ambiguous = dsh("sessions", "rm", first[:common])
    assert ambiguous.returncode == 1
    assert "ambiguous" in ambiguous.stderr
    assert first in ambiguous.stderr and second in ambiguous.stderr
    removed = dsh("sessions", "rm", first[:common + 1])
    assert removed.returncode == 0 and removed.stdout == f"Deleted session {first}\n"
    assert first not in dsh("sessions").stdout
    shown = dsh("sessions", "show", second[:common + 1])
    assert shown.returncode == 0 and f"session {second}" in shown.stdout


def test_untitled_sessions_read_the_same_in_the_list():
    seed(None)
    assert "(untitled)" in dsh("sessions").stdout


def test_resume_of_an_unknown_session_is_a_usage_error():
    for command in (["run", "-m", "demo", "-r", "s_nothere", "hi"],
                    ["chat", "--plain", "-m", "demo", "-r", "s_nothere"]):
        result = dsh(*command)
        assert result.returncode == 2, (command, result.stderr)
        assert result.stderr.startswith("dsh: SESSION_NOT_FOUND: session s_nothere")


def test_continue_with_no_session_yet_says_how_to_start_one():
    for command in (["run", "-m", "demo", "-c", "hi"], ["chat", "--plain", "-m", "demo", "-c"]):
        result = dsh(*command)
        assert result.returncode == 2, (command, result.stderr)
        assert result.stderr == ("dsh: NOTHING_TO_RESUME: there is no chat to continue yet: "
                                 "start one with `dsh` or `dsh run PROMPT`, then continue it "
                                 "with -c\n")


def test_an_ambiguous_prefix_has_its_own_code_and_lists_the_sessions():
    first, second = seed("one"), seed("two")
    common = 2
    while first[common] == second[common]:
        common += 1
    result = dsh("run", "-m", "demo", "-r", first[:common], "hi")
    assert result.returncode == 2
    assert result.stderr.startswith(f"dsh: SESSION_AMBIGUOUS: session {first[:common]} is "
                                    "ambiguous: it starts ")
    assert first in result.stderr and second in result.stderr


def test_json_escapes_what_would_not_show_into_a_pipe_and_a_file(tmp_path):
    """C1 controls, DEL, bidi and tag characters of a stored title and message reach no
    JSON raw, whatever stdout is: a `cat` of the file later must not drive a terminal."""
    hostile = "ac\x9b31m\x9d0;pwned\x9c\u202eme\U000e0041\x7f\u2066x é 😀"
    session_id = seed(hostile)
    raw = set("\x9b\x9d\x9c\u202e\U000e0041\x7f\u2066")
    for command in (["sessions", "list", "--json"], ["sessions", "show", session_id, "--json"]):
        piped = dsh(*command)
        assert piped.returncode == 0, piped.stderr
        written = tmp_path / "out.json"
        with written.open("w") as file:
            done = subprocess.run([DSH, *command], stdout=file, timeout=60,
                                  stdin=subprocess.DEVNULL)
        assert done.returncode == 0
        for text in (piped.stdout, written.read_text(encoding="utf-8")):
            assert not raw & set(text), (command, text)
            assert "é 😀" in text  # what shows as itself stays readable
            value = json.loads(text)
            if command[1] == "list":
                [summary] = value
                assert summary["title"] == title_of(hostile)  # the same value, parsed
            else:
                assert value["messages"][0]["content"] == hostile

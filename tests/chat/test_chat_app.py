"""``dsh chat`` / ``dsh demo`` put together: demo fallback, plain mode, options, exit codes."""

from __future__ import annotations

import asyncio
import io
import re
import subprocess
import sys

from click.testing import CliRunner

from dsh_cli.chat.app import DEMO_NOTICE, chat_main
from dsh_cli.cli import main
from dsh_cli.interaction import ScriptedProvider
from dsh_cli.sources import CHAT, AnswerOptions, choose

OPTIONS = {"model": None, "base_url": None, "system": None, "question_timeout": None,
           "no_ask": False, "continue_": False, "resume": None, "plain": False}
# the demo's notes server (an MCP child) where a test is about the sessions, not the note
STORED_ONLY = {"no_mcp": True}
DEMO_ANSWER = {"answers": [{"id": "stack", "selected": ["Go + chi"]},
                           {"id": "features", "selected": []},
                           {"id": "name", "selected": [], "custom": "acme"}]}


class Lines:
    """A prompt that types the given lines, then ctrl-d."""

    def __init__(self, *lines):
        self.lines = list(lines)

    async def read(self):
        return self.lines.pop(0) if self.lines else None


def chat(*lines, demo=False, replies=(), **options):
    import asyncio

    out, err = io.StringIO(), io.StringIO()
    provider = ScriptedProvider(replies)
    status = asyncio.run(chat_main({**OPTIONS, **options}, demo=demo, stdin=io.StringIO(),
                                   stdout=out, stderr=err, prompt=Lines(*lines),
                                   provider=provider))
    return status, out.getvalue(), err.getvalue(), provider


def test_no_key_and_no_model_named_runs_the_demo_and_says_so_in_one_line():
    status, out, err, provider = chat("plan a shop", replies=[DEMO_ANSWER])
    assert status == 0
    assert err == DEMO_NOTICE + "\n" and err.count("\n") == 1
    assert "model demo" in out and "- Stack: Go + chi" in out and "- Features: skipped" in out
    assert len(provider.requests) == 1


def test_a_named_model_without_a_key_is_an_error_not_the_demo(monkeypatch):
    monkeypatch.setenv("DSH_MODEL", "deepseek-chat")
    status, out, err, _ = chat("hi")
    assert status == 1
    assert err.startswith("dsh: MISSING_API_KEY: ") and DEMO_NOTICE not in err
    assert out == ""


def test_demo_always_uses_the_demo_model_and_says_nothing(monkeypatch):
    monkeypatch.setenv("DSH_MODEL", "deepseek-chat")
    status, out, err, _ = chat("hi", demo=True, replies=[DEMO_ANSWER], **STORED_ONLY)
    assert status == 0 and err == "" and "model demo" in out


def test_no_ask_keeps_the_tool_from_the_model():
    status, out, _, provider = chat("hi", demo=True, no_ask=True)
    assert status == 0
    assert "questions are turned off (--no-ask)" in out and provider.requests == []


def test_a_bad_config_file_is_exit_2(dsh_home):
    (dsh_home / "config.toml").write_text("notify = 'loud'\n")
    status, _, err, _ = chat("hi")
    assert status == 2 and err.startswith("dsh: CONFIG_ERROR: ")


def test_the_system_prompt_reaches_the_conversation(tmp_path):
    script = tmp_path / "script.json"
    script.write_text('{"turns": [{"content": "ok"}]}')
    status, out, _, _ = chat("hi", model=f"script:{script}", system="Be brief.")
    assert status == 0 and out.endswith("ok\n")


def test_plain_mode_when_asked_for_on_a_dumb_terminal_or_without_a_terminal():
    class Tty(io.StringIO):
        def isatty(self):
            return True

    def source(plain, stdin, stdout, environ):
        options = AnswerOptions(CHAT, plain=plain, stdin=stdin, stdout=stdout, environ=environ)
        return choose(options).name

    assert source(False, Tty(), Tty(), {"TERM": "xterm"}) == "terminal"
    assert source(True, Tty(), Tty(), {"TERM": "xterm"}) == "plain"
    assert source(False, Tty(), Tty(), {"TERM": "dumb"}) == "plain"
    assert source(False, io.StringIO(), Tty(), {}) == "plain"
    assert source(False, Tty(), io.StringIO(), {}) == "plain"


def test_the_cli_chats_in_plain_mode_through_a_pipe():
    result = CliRunner().invoke(main, ["chat", "--model", "demo"],
                                input="plan a shop\n1\n2, 4\nacme\n")
    assert result.exit_code == 0, result.output
    assert "· ask_user_question → answered (3)" in result.stdout
    assert "- Features: Billing, CI" in result.stdout
    assert "[Stack] Which stack should the project use?" in result.stderr  # plain questions
    assert "[Stack]" not in result.stdout


def test_the_cli_demo_command_and_bare_dsh_are_the_chat():
    result = CliRunner().invoke(main, ["demo"], input="hi\n/cancel\n")
    assert result.exit_code == 0
    assert "· ask_user_question ✗ ASK_CANCELLED" in result.stdout
    bare = CliRunner().invoke(main, [], input="/exit\n")
    assert bare.exit_code == 0 and DEMO_NOTICE in bare.stderr


def test_continue_and_resume_together_is_a_usage_error():
    result = CliRunner().invoke(main, ["chat", "-c", "-r", "s_1"])
    assert result.exit_code == 2 and "not both" in result.output


def test_help_imports_neither_prompt_toolkit_nor_openai():
    code = ("import sys; from dsh_cli.cli import main\n"
            "try: main(['chat', '--help'])\nexcept SystemExit: pass\n"
            "print(sorted(m for m in ('openai', 'prompt_toolkit') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip().endswith("[]")


def test_the_model_client_is_imported_in_the_background_for_api_models():
    code = ("import sys, threading; from dsh_cli.chat.app import warm_up_model_client\n"
            "warm_up_model_client('demo'); assert threading.active_count() == 1\n"
            "warm_up_model_client('deepseek-chat')\n"
            "[t.join() for t in threading.enumerate() if t.name == 'dsh-warm-openai']\n"
            "print('openai' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "True"


def stopped_mid_question() -> ScriptedProvider:
    """A demo chat stopped while its first batch was on screen; the provider it asked."""

    async def never(request):
        await asyncio.sleep(30)

    first = ScriptedProvider(lambda request: never(request))

    async def stop():
        task = asyncio.ensure_future(chat_main(
            {**OPTIONS, **STORED_ONLY}, demo=True, stdin=io.StringIO(), stdout=io.StringIO(),
            stderr=io.StringIO(), prompt=Lines("plan a shop"), provider=first))
        while not first.requests:
            await asyncio.sleep(0.005)
        task.cancel()  # what SIGTERM does (dsh_cli.session.interrupts)
        await asyncio.gather(task, return_exceptions=True)

    asyncio.run(stop())
    return first


def test_continue_re_asks_the_batch_that_was_open_when_the_chat_was_stopped():
    first = stopped_mid_question()
    status, out, _, again = chat(demo=True, continue_=True, replies=[DEMO_ANSWER],
                                 **STORED_ONLY)
    assert status == 0
    assert again.contexts[0].rpc_id == first.contexts[0].rpc_id
    assert "- Name: acme (your own answer)" in out
    # issue 17: it says so first, with the pending question's time, then replays the end of
    # the conversation and greets, so the re-asked batch comes with its context
    first = out.splitlines()[0]
    assert re.fullmatch(r"dsh · resumed session s_\w+ · pending question from \d\d:\d\d", first)
    assert out.index("resumed session") < out.index("› plan a shop")
    assert out.index("Before I set this up") < out.index("/help for commands")


def test_slash_sessions_lists_the_stored_sessions():
    chat("first chat", demo=True, replies=[DEMO_ANSWER], **STORED_ONLY)
    _, out, _, _ = chat("/sessions", demo=True, **STORED_ONLY)
    assert out.count("first chat") == 1 and "* " in out and "/resume ID" in out


def test_slash_resume_switches_to_a_stored_session_and_re_asks_its_pending_batch():
    first = stopped_mid_question()
    from dsh_cli.store import SessionStore

    with SessionStore.open() as store:
        stopped = store.list_sessions()[0].id
    status, out, _, again = chat("/resume nope", f"/resume {stopped[:6]}", demo=True,
                                 replies=[DEMO_ANSWER], **STORED_ONLY)
    assert status == 0
    assert "dsh: SESSION_NOT_FOUND: session nope" in out
    assert f"dsh · resumed session {stopped}" in out
    assert "› plan a shop" in out  # its conversation, replayed
    assert again.contexts[0].rpc_id == first.contexts[0].rpc_id  # the same batch, re-asked
    assert "- Name: acme (your own answer)" in out


def test_a_rate_limited_model_says_it_is_trying_again(monkeypatch, server):
    from fakes.openai_server import Reply

    monkeypatch.setenv("DSH_API_KEY", "sk-test-retry")
    server.enqueue(Reply.error(429, "slow down", headers={"Retry-After": "0.05"}),
                   Reply.text("Hello after the wait."))
    status, out, err, _ = chat("hi", model="some-model", base_url=server.base_url)
    assert status == 0, err
    assert "· MODEL_RATE_LIMIT: trying again in 0.1s (attempt 2)" in out
    assert "Hello after the wait." in out and "sk-test-retry" not in out + err


def test_the_demo_notice_comes_under_the_header_on_a_shared_terminal():
    # stdout and stderr are one terminal: the header is the first thing said, the notice next
    shared = io.StringIO()
    status = asyncio.run(chat_main(OPTIONS, stdin=io.StringIO(), stdout=shared, stderr=shared,
                                   prompt=Lines(), provider=ScriptedProvider([])))
    assert status == 0
    lines = shared.getvalue().splitlines()
    assert lines[0].startswith("dsh · model demo · session s_")
    assert lines[1] == DEMO_NOTICE


def test_a_chat_left_without_a_word_leaves_no_session_and_new_keeps_only_conversations():
    from dsh_cli.store import SessionStore

    status, _, _, _ = chat(demo=True, **STORED_ONLY)  # opened and left at once (ctrl-d)
    assert status == 0
    chat("/new", "/new", "plan a shop", demo=True, replies=[DEMO_ANSWER], **STORED_ONLY)
    with SessionStore.open() as store:
        sessions = store.list_sessions()
    assert [session.title for session in sessions] == ["plan a shop"]

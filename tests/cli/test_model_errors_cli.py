"""Model errors a newcomer meets: a web page at --base-url, a rejected key's variable."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from fakes.openai_server import Reply
from harness.dsh_under_test import DSH

KEY = "sk-newcomer-test-0123456789abcdef"


def dsh_run(server, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [DSH, "run", "--base-url", server.base_url, "-m", "some-model", "hi"],
        capture_output=True, text=True, timeout=30, env={**os.environ, **env},
        stdin=subprocess.DEVNULL)


def test_an_html_page_says_so_and_points_at_base_url(server):
    server.enqueue(Reply.page("<!doctype html><html><body>Sign in</body></html>"))
    result = dsh_run(server, {"DSH_API_KEY": KEY})
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.splitlines() == [
        f"dsh: MODEL_STREAM: 127.0.0.1:{server.port} returned text/html, not an event "
        "stream; check --base-url"]
    assert "ended before" not in result.stderr


def test_a_rejected_key_names_the_variable_that_was_read(server):
    config = Path(os.environ["DSH_HOME"]) / "config.toml"
    config.write_text('api_key_env = "MY_TEAM_KEY"\n', encoding="utf-8")
    server.enqueue(Reply.error(401, "bad key"))
    result = dsh_run(server, {"MY_TEAM_KEY": KEY})
    assert result.returncode == 1
    assert result.stderr.startswith("dsh: MODEL_AUTH: ")
    assert result.stderr.rstrip().endswith("check MY_TEAM_KEY")
    assert "DEEPSEEK_API_KEY" not in result.stderr and KEY not in result.stderr


def test_a_run_whose_questions_found_no_answer_source_says_why_once_per_batch():
    result = subprocess.run([DSH, "run", "-m", "demo", "plan a shop"], capture_output=True,
                            text=True, timeout=60, stdin=subprocess.DEVNULL,
                            start_new_session=True)
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if "NO_PROVIDER" in line]
    assert lines == ["dsh: NO_PROVIDER: no question provider can answer; "
                     "use --answers, --plain or --jsonl"]


def test_a_missing_key_names_the_configured_variable_too(dsh_home):
    config = 'model = "deepseek-chat"\napi_key_env = "MY_DEEPSEEK_KEY"\n'
    (dsh_home / "config.toml").write_text(config)
    result = subprocess.run([DSH, "run", "hi"], capture_output=True, text=True, timeout=30,
                            stdin=subprocess.DEVNULL)
    assert result.returncode == 1
    assert result.stderr == ("dsh: MISSING_API_KEY: model deepseek-chat (named by "
                             f"{dsh_home / 'config.toml'}) at api.deepseek.com "
                             "needs an API key: set DEEPSEEK_API_KEY (sent only to "
                             "api.deepseek.com), or DSH_API_KEY or MY_DEEPSEEK_KEY; or use "
                             "--model demo\n")


def test_a_missing_key_says_the_model_came_from_dsh_model():
    import os

    env = {**os.environ, "DSH_MODEL": "gpt-4o-mini"}
    result = subprocess.run([DSH, "run", "hi"], capture_output=True, text=True, timeout=30,
                            stdin=subprocess.DEVNULL, env=env)
    assert result.returncode == 1
    assert result.stderr.startswith("dsh: MISSING_API_KEY: model gpt-4o-mini (named by "
                                    "DSH_MODEL) at api.openai.com needs an API key")

"""The README's "same form in CI" example runs as written against a server that asks.

The block is taken from the README and run with bash in a copy of ``examples/``: the deploy
server and scripted model it names ship there, so it runs offline as a reader runs it.
What the server received is read back from the stored session. The first-run message is
checked against ``tests/fakes/mcp_forms_server.py``, whose question ids are the same.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

from docs_reading import README, ROOT
from fakes.mcp_forms_server import entry
from harness.dsh_under_test import DSH

FIRST_LINE = "# answers for the deploy server's form"


def readme_block() -> str:
    blocks = re.findall(r"^```sh\n(.*?)^```", README.read_text(), flags=re.M | re.S)
    found = [block for block in blocks if block.startswith(FIRST_LINE)]
    assert len(found) == 1, "the README's CI form example is gone or doubled"
    return found[0]


def test_the_readme_ci_example_answers_the_deploy_servers_form(tmp_path):
    """As written, in a copy of the clone's examples/, with no model or key configured."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("DSH_MODEL", "DSH_API", "DEEPSEEK_", "OPENAI_"))}
    # the venv, activated: its python3 has the MCP SDK the example server imports
    env["PATH"] = f"{Path(DSH).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    done = subprocess.run(["bash", "-e", "-c", readme_block()], cwd=tmp_path, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=90)
    assert done.returncode == 0, done.stderr
    assert "deployed" in done.stdout
    # the line the README quotes for a field left out with no default
    quoted = re.search(r"`(dsh: answers\.json leaves out [^`]*)`",
                       " ".join(README.read_text().split()))
    assert quoted and quoted.group(1) in done.stderr, done.stderr
    listed = json.loads(subprocess.run([DSH, "sessions", "list", "--json"], env=env,
                                       capture_output=True, text=True, check=True).stdout)
    shown = json.loads(subprocess.run([DSH, "sessions", "show", "--json", listed[0]["id"]],
                                      env=env, capture_output=True, text=True,
                                      check=True).stdout)
    (tool,) = [message for message in shown["messages"] if message["role"] == "tool"]
    assert json.loads(tool["content"]) == {
        "service": "api",
        "where": {"accept": {"env": "production", "replicas": 3}},
        "go": {"accept": {"approve": True, "tags": []}},  # tags left out: its default
    }


def test_an_empty_answers_file_names_the_ids_as_the_readme_says(tmp_path):
    """The README quotes the first-run message; it is what dsh prints for this form."""
    quoted = re.search(r"`(dsh: NO_PROVIDER: answers\.json has no answer for [^`]*?), …`",
                       " ".join(README.read_text().split()))
    assert quoted, "the README no longer quotes the empty-file message"
    (tmp_path / "servers.json").write_text(json.dumps({"mcpServers": {"deploy": entry()}}))
    (tmp_path / "answers.json").write_text("{}")
    script = tmp_path / "model.json"
    script.write_text(json.dumps({"turns": [
        {"tool_calls": [{"name": "mcp__deploy__deploy", "arguments": {"service": "api"}}]},
        {"content": "done"}]}))
    done = subprocess.run([DSH, "run", "-m", f"script:{script}", "--mcp-config",
                           "servers.json", "--allow", "mcp__deploy", "--answers",
                           "answers.json", "go"], cwd=tmp_path, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=90)
    assert done.returncode == 0, done.stderr
    assert quoted.group(1) in done.stderr

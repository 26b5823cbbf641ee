"""What ``dsh ask`` has done by the time its question is asked (the first frame's path)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

PROBE = """
import contextlib, gc, sys
import dsh_cli.providers.terminal as terminal
from dsh_cli.sources import options

seen = {}


class Probe:
    async def ask(self, context):
        from dsh_cli.interaction import AskUserQuestionAnswer

        seen["json"] = "json" in sys.modules
        seen["collecting"] = gc.isenabled()
        return AskUserQuestionAnswer.model_validate(
            {"answers": [{"id": "q1", "selected": ["a"]}]})


@contextlib.contextmanager
def fake_terminal(target, **kw):
    yield Probe()


options.is_terminal = lambda stream: True
terminal.terminal_provider = fake_terminal
from dsh_cli.cli import main

sys.argv = ["dsh", "ask", "-q", "Q?", "-o", "a", "-o", "b"]
try:
    main()
except SystemExit:
    pass
seen["collecting_after"] = gc.isenabled()
import json

print(json.dumps(seen), file=sys.stderr)
"""


def test_the_terminal_path_imports_no_json_and_collects_no_cycles_before_asking():
    result = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                            timeout=60, env={**os.environ, "TERM": "xterm"})
    assert result.stdout == '{"answers":[{"id":"q1","selected":["a"]}]}\n', result.stderr
    seen = json.loads(result.stderr.strip().splitlines()[-1])
    # json comes with the answer's printing; cyclic collection with the loop's first wait
    assert seen == {"json": False, "collecting": False, "collecting_after": True}
